/*
 * Addresses of the TCP plugin: an IPv4 or IPv6 address and the port its
 * class listens on, printed "tcp://a.b.c.d:port" or "tcp://[v6]:port".
 * Addresses are interned per class, one object per (address, port), so
 * comparing two is comparing pointers; an object lives while users or a
 * connection hold a reference. Host names and interface names are resolved
 * once, at lookup or initialize; the object holds the number.
 */
#include "na_tcp_internal.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether (ip, port) is this class: its own address, or, when it listens
 * on every interface, a loopback address of that family with its port. */
static bool
na_tcp_is_self(const struct na_tcp_class *cls, const struct na_tcp_ip *ip,
               uint16_t port)
{
    if (cls->self == NULL)
        return false; /* interning the self address itself */
    if (port != cls->self->port)
        return false;
    if (na_tcp_ip_eq(ip, &cls->self->ip))
        return true;
    return ip->family == cls->bind_ip.family &&
           na_tcp_ip_is_any(&cls->bind_ip) && na_tcp_ip_is_loopback(ip);
}

/* Find or create the object for (ip, port); returns a new reference.
 * Called with the class lock held. */
struct na_addr *
na_tcp_addr_intern(struct na_tcp_class *cls, const struct na_tcp_ip *ip,
                   uint16_t port)
{
    struct na_plugin_addr *head;
    struct na_addr *a;

    if (na_tcp_is_self(cls, ip, port)) {
        na_plugin_addr_ref(cls->self);
        return cls->self;
    }
    LIST_FOREACH(head, &cls->addrs, entry)
    {
        a = na_plugin_addr_of(head);
        if (a->port == port && na_tcp_ip_eq(&a->ip, ip)) {
            na_plugin_addr_ref(a);
            return a;
        }
    }
    a = calloc(1, sizeof(*a));
    if (a == NULL)
        return NULL;
    a->cls = cls;
    a->ip = *ip;
    a->port = port;
    a->self = cls->self == NULL;
    na_plugin_addr_insert(&cls->addrs, &cls->lock, a);
    return a;
}

/* The address object of (ip, port) for a caller, who frees it. */
static na_return_t
na_tcp_addr_get(struct na_tcp_class *cls, const struct na_tcp_ip *ip,
                uint16_t port, na_addr_t *addr)
{
    struct na_addr *a;

    pthread_mutex_lock(&cls->lock);
    a = na_tcp_addr_intern(cls, ip, port);
    pthread_mutex_unlock(&cls->lock);
    if (a == NULL)
        return NA_NOMEM;
    *addr = a;
    return NA_SUCCESS;
}

/* A name that is not a dotted address: a host name, resolved to its first
 * IPv4 address. */
static na_return_t
na_tcp_resolve(const char *str, struct na_tcp_ip *ip, uint16_t *port)
{
    struct addrinfo hints = {.ai_family = AF_INET}, *res = NULL;
    char host[256], buf[INET_ADDRSTRLEN + 8];
    const char *colon;
    size_t n;

    str = na_tcp_strip_scheme(str);
    colon = strrchr(str, ':');
    if (colon == NULL || colon == str || (size_t) (colon - str) >= sizeof(host))
        return NA_INVALID_ARG;
    memcpy(host, str, (size_t) (colon - str));
    host[colon - str] = '\0';
    /* Host names only: anything else is refused before any lookup. */
    if (strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789.-") != strlen(host) ||
        getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL)
        return NA_INVALID_ARG;
    inet_ntop(AF_INET,
              &((struct sockaddr_in *) (void *) res->ai_addr)->sin_addr, buf,
              INET_ADDRSTRLEN);
    freeaddrinfo(res);
    n = strlen(buf);
    snprintf(buf + n, sizeof(buf) - n, "%.6s", colon);
    return na_tcp_addr_string_parse(buf, ip, port);
}

static na_return_t
na_tcp_addr_to_string(na_class_t *na_class, char *buf, size_t *buf_size,
                      na_addr_t addr)
{
    char tmp[NA_TCP_ADDR_STR_MAX];

    (void) na_class;
    (void) na_tcp_addr_print(&addr->ip, addr->port, tmp, sizeof(tmp));
    return na_plugin_addr_string_out(tmp, buf, buf_size);
}

static na_return_t
na_tcp_addr_serialize(na_class_t *na_class, void *buf, size_t *buf_size,
                      na_addr_t addr)
{
    (void) na_class;
    if (!na_plugin_serialize_room(buf, buf_size, na_tcp_addr_size(&addr->ip)))
        return NA_OVERFLOW;
    na_tcp_addr_encode(buf, &addr->ip, addr->port);
    return NA_SUCCESS;
}

/* Untrusted bytes: decoded by na_tcp_addr_decode() before any use. */
static na_return_t
na_tcp_addr_deserialize(na_class_t *na_class, na_addr_t *addr, const void *buf,
                        size_t buf_size)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);
    struct na_tcp_ip ip;
    uint16_t port;
    na_return_t ret;

    ret = na_tcp_addr_decode(buf, buf_size, &ip, &port);
    if (ret != NA_SUCCESS)
        return ret;
    return na_tcp_addr_get(cls, &ip, port, addr);
}

static const struct na_addr_codec_ops na_tcp_addr_codec_ops = {
    .to_string = na_tcp_addr_to_string,
    .serialize = na_tcp_addr_serialize,
    .deserialize = na_tcp_addr_deserialize,
};

/* Lookups never connect: an address nobody serves fails its first send. */
static na_return_t
na_tcp_addr_lookup(na_class_t *na_class, const char *name, na_addr_t *addr)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);
    struct na_tcp_ip ip;
    uint16_t port;

    if (na_tcp_addr_string_parse(name, &ip, &port) != NA_SUCCESS &&
        na_tcp_resolve(name, &ip, &port) != NA_SUCCESS)
        return NA_INVALID_ARG;
    if (port == 0 || na_tcp_ip_is_any(&ip))
        return NA_INVALID_ARG;
    return na_tcp_addr_get(cls, &ip, port, addr);
}

static na_return_t
na_tcp_addr_self(na_class_t *na_class, na_addr_t *addr)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);

    na_plugin_addr_ref(cls->self);
    *addr = cls->self;
    return NA_SUCCESS;
}

/* Forget the connection to the peer: the next send connects afresh. */
static na_return_t
na_tcp_addr_set_remove(na_class_t *na_class, na_addr_t addr)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);

    pthread_mutex_lock(&cls->lock);
    addr->failed = false;
    if (addr->conn != NULL && addr->conn->dead)
        addr->conn = NULL;
    pthread_mutex_unlock(&cls->lock);
    return NA_SUCCESS;
}

static bool
na_tcp_addr_is_self(na_class_t *na_class, na_addr_t addr)
{
    (void) na_class;
    return addr->self;
}

const struct na_addr_ops na_tcp_addr_ops = {
    .lookup = na_tcp_addr_lookup,
    .free = na_plugin_addr_free_interned,
    .self = na_tcp_addr_self,
    .dup = na_plugin_addr_dup_interned,
    .set_remove = na_tcp_addr_set_remove,
    .is_self = na_tcp_addr_is_self,
    .codec = &na_tcp_addr_codec_ops,
};
