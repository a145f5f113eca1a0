/*
 * Addresses of the ofi plugin: parsing "ofi+tcp://a.b.c.d:port", the
 * address cache, and the wire form used by serialization and by the
 * header of unexpected messages.
 *
 * Addresses are interned: the class keeps one object per peer, inserted
 * into the address vector once, and keeps it after its last reference
 * unless the cache is full. Lookups, dups and
 * sources of received messages hand out references to that object, so
 * comparing two addresses is comparing pointers, and receiving from a
 * known peer costs one hash lookup and no allocation.
 */
#include "na_ofi_internal.h"

#include "na/na_plugin_util.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Digits only, no sign, no spaces, at most 65535; "" is absent (0). */
static na_return_t
na_ofi_parse_port(const char *s, uint16_t *port)
{
    unsigned long v = 0;
    size_t n = 0;

    for (; s[n] != '\0'; n++) {
        if (s[n] < '0' || s[n] > '9' || n >= 5)
            return NA_INVALID_ARG;
        v = v * 10 + (unsigned long) (s[n] - '0');
    }
    if (v > 65535)
        return NA_INVALID_ARG;
    *port = (uint16_t) v;
    return NA_SUCCESS;
}

/*
 * Parse "host", "host:port", ":port" or "" into an IPv4 socket address.
 * The host is a dotted quad or "localhost"; at initialize (no port
 * required) also an interface name ("ofi+tcp://lo"), and an absent host is
 * the interface FI_TCP_IFACE names, as libfabric reads it, else 127.0.0.1.
 * Names are not resolved, because a lookup must never block on DNS.
 */
na_return_t
na_ofi_addr_parse_host(const char *host, struct sockaddr_in *sin,
                       bool require_port)
{
    char name[64];
    const char *colon = strrchr(host, ':');
    size_t name_len = colon ? (size_t) (colon - host) : strlen(host);
    uint16_t port = 0;

    if (name_len >= sizeof(name))
        return NA_INVALID_ARG;
    memcpy(name, host, name_len);
    name[name_len] = '\0';
    if (colon != NULL &&
        (colon[1] == '\0' || na_ofi_parse_port(colon + 1, &port) != NA_SUCCESS))
        return NA_INVALID_ARG;
    if (require_port && port == 0)
        return NA_INVALID_ARG;

    memset(sin, 0, sizeof(*sin));
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    if (name_len == 0 && !require_port && getenv("FI_TCP_IFACE") != NULL)
        return na_plugin_iface_ipv4(getenv("FI_TCP_IFACE"), &sin->sin_addr)
                   ? NA_SUCCESS
                   : NA_INVALID_ARG;
    if (name_len == 0 || strcmp(name, "localhost") == 0)
        strcpy(name, "127.0.0.1");
    if (inet_pton(AF_INET, name, &sin->sin_addr) == 1)
        return NA_SUCCESS;
    if (!require_port && na_plugin_iface_ipv4(name, &sin->sin_addr))
        return NA_SUCCESS;
    return NA_INVALID_ARG;
}

/* A number of at most `max`, digits only, up to `end` (or '\0'). */
static const char *
na_ofi_parse_num(const char *s, char end, unsigned long max, unsigned long *v)
{
    size_t n = 0;

    *v = 0;
    for (; s[n] >= '0' && s[n] <= '9'; n++) {
        if (n >= 10)
            return NULL;
        *v = *v * 10 + (unsigned long) (s[n] - '0');
    }
    if (n == 0 || s[n] != end || *v > max)
        return NULL;
    return s + n + (end != '\0');
}

na_return_t
na_ofi_shm_parse(const char *name, struct sockaddr_in *sin)
{
    unsigned long pid, dom, ep;
    const char *p = name;

    if (strncmp(p, "fi_shm://", 9) == 0)
        p += 9;
    if ((p = na_ofi_parse_num(p, ':', 0x7fffffffUL, &pid)) == NULL ||
        (p = na_ofi_parse_num(p, ':', 254, &dom)) == NULL ||
        na_ofi_parse_num(p, '\0', 255, &ep) == NULL || pid == 0)
        return NA_INVALID_ARG;
    memset(sin, 0, sizeof(*sin));
    sin->sin_family = AF_UNIX;
    sin->sin_addr.s_addr = htonl((uint32_t) pid);
    sin->sin_port = htons((uint16_t) (1 + dom * 256 + ep));
    return NA_SUCCESS;
}

/* The provider's name of a packed shm address. */
static void
na_ofi_shm_name(const struct sockaddr_in *sin, char *buf, size_t size)
{
    unsigned v = ntohs(sin->sin_port) - 1u;

    snprintf(buf, size, "fi_shm://%u:%u:%u",
             (unsigned) ntohl(sin->sin_addr.s_addr), v / 256u, v % 256u);
}

#define NA_OFI_SHM_LIVE_MAX 256
static pthread_mutex_t na_ofi_shm_lock = PTHREAD_MUTEX_INITIALIZER;
static uint16_t na_ofi_shm_live[NA_OFI_SHM_LIVE_MAX];
static size_t na_ofi_shm_nlive;
static bool na_ofi_shm_overflow; /* too many to track: assume all live */

void
na_ofi_shm_set_live(const struct na_addr *self, bool live)
{
    uint16_t key = self->sin.sin_port;

    pthread_mutex_lock(&na_ofi_shm_lock);
    if (live) {
        if (na_ofi_shm_nlive < NA_OFI_SHM_LIVE_MAX)
            na_ofi_shm_live[na_ofi_shm_nlive++] = key;
        else
            na_ofi_shm_overflow = true;
    } else {
        for (size_t i = 0; i < na_ofi_shm_nlive; i++)
            if (na_ofi_shm_live[i] == key) {
                na_ofi_shm_live[i] = na_ofi_shm_live[--na_ofi_shm_nlive];
                break;
            }
    }
    pthread_mutex_unlock(&na_ofi_shm_lock);
}

bool
na_ofi_shm_closed_here(const struct na_addr *addr)
{
    bool found = false;

    if (addr == NULL || addr->sin.sin_family != AF_UNIX ||
        ntohl(addr->sin.sin_addr.s_addr) != (uint32_t) getpid())
        return false;
    pthread_mutex_lock(&na_ofi_shm_lock);
    found = na_ofi_shm_overflow;
    for (size_t i = 0; i < na_ofi_shm_nlive && !found; i++)
        found = na_ofi_shm_live[i] == addr->sin.sin_port;
    pthread_mutex_unlock(&na_ofi_shm_lock);
    return !found;
}

/* Accept "[<class>+]<protocol>://" in front of a name, for our protocol
 * only (any TCP spelling for tcp, see lib/na/na.c). */
static const char *
na_ofi_strip_scheme(const struct na_ofi_class *cls, const char *name)
{
    const char *sep = strstr(name, "://"), *plus;
    size_t len;

    if (sep == NULL)
        return name; /* a bare "host:port" */
    plus = memchr(name, '+', (size_t) (sep - name));
    if (plus != NULL)
        name = plus + 1;
    len = (size_t) (sep - name);
    if (len == strlen(cls->protocol) && strncmp(name, cls->protocol, len) == 0)
        return sep + 3;
    if (strcmp(cls->protocol, "tcp") == 0 && len == 11 &&
        strncmp(name, "tcp;ofi_rxm", len) == 0)
        return sep + 3;
    return NULL;
}

static uint32_t
na_ofi_addr_hash(const struct sockaddr_in *sin)
{
    uint32_t h = 2166136261u; /* FNV-1a over address and port */
    const uint8_t *p = (const uint8_t *) &sin->sin_addr;

    for (size_t i = 0; i < 4; i++)
        h = (h ^ p[i]) * 16777619u;
    p = (const uint8_t *) &sin->sin_port;
    for (size_t i = 0; i < 2; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

/*
 * Over NA_OFI_ADDR_CACHE_MAX entries, drop one unreferenced peer (and its
 * address-vector entry). Called with addr_lock held; a reference can only
 * be taken from zero under that lock, so the check cannot go stale.
 */
static void
na_ofi_addr_evict_one(struct na_ofi_class *cls, uint32_t start)
{
    for (size_t i = 0; i < NA_OFI_ADDR_HASH_SIZE; i++) {
        struct na_addr **pp =
            &cls->addr_hash[(start + i) % NA_OFI_ADDR_HASH_SIZE];
        for (; *pp != NULL; pp = &(*pp)->hash_next) {
            struct na_addr *a = *pp;
            if (a == cls->self || atomic_load(&a->refcount) != 0)
                continue;
            *pp = a->hash_next;
            cls->addr_count--;
            fi_av_remove(cls->av, &a->fi_addr, 1, 0);
            free(a);
            return;
        }
    }
}

/* Free the removed peers nobody references any more. Called with
 * addr_lock held; a removed peer is out of the hash, so a reference can no
 * longer be taken from zero. */
static void
na_ofi_addr_sweep_removed(struct na_ofi_class *cls)
{
    struct na_addr **pp = &cls->addr_removed;

    while (*pp != NULL) {
        struct na_addr *a = *pp;
        if (atomic_load(&a->refcount) != 0) {
            pp = &a->hash_next;
            continue;
        }
        *pp = a->hash_next;
        fi_av_remove(cls->av, &a->fi_addr, 1, 0);
        free(a);
    }
}

/*
 * Find or create the address object for `sin` and return a new reference.
 * A new peer is inserted into the address vector here, once.
 */
na_return_t
na_ofi_addr_intern(struct na_ofi_class *cls, const struct sockaddr_in *sin,
                   struct na_addr **addr)
{
    struct sockaddr_in key;
    uint32_t h;
    struct na_addr *a;
    na_return_t ret = NA_SUCCESS;
    int rc;

    /* An address of the other family names nobody this class can reach. */
    if (sin->sin_family != (cls->shm ? AF_UNIX : AF_INET))
        return NA_ADDRNOTAVAIL;
    memset(&key, 0, sizeof(key));
    key.sin_family = sin->sin_family;
    key.sin_port = sin->sin_port;
    key.sin_addr = sin->sin_addr;
    h = na_ofi_addr_hash(&key);

    pthread_mutex_lock(&cls->addr_lock);
    for (a = cls->addr_hash[h % NA_OFI_ADDR_HASH_SIZE]; a; a = a->hash_next)
        if (a->hash == h && memcmp(&a->sin, &key, sizeof(key)) == 0)
            break;
    if (a != NULL) {
        atomic_fetch_add(&a->refcount, 1);
        goto unlock;
    }
    na_ofi_addr_sweep_removed(cls);
    if (cls->addr_count >= NA_OFI_ADDR_CACHE_MAX)
        na_ofi_addr_evict_one(cls, h);
    a = calloc(1, sizeof(*a));
    if (a == NULL) {
        ret = NA_NOMEM;
        goto unlock;
    }
    if (cls->shm) {
        char name[64];

        na_ofi_shm_name(&key, name, sizeof(name));
        rc = fi_av_insert(cls->av, name, 1, &a->fi_addr, 0, NULL);
    } else {
        rc = fi_av_insert(cls->av, &key, 1, &a->fi_addr, 0, NULL);
    }
    if (rc != 1) {
        qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR, "fi_av_insert: %s",
               rc < 0 ? fi_strerror(-rc) : "address refused");
        free(a);
        a = NULL;
        ret = NA_ADDRNOTAVAIL;
        goto unlock;
    }
    a->sin = key;
    a->hash = h;
    cls->addr_count++;
    atomic_init(&a->refcount, 1);
    a->hash_next = cls->addr_hash[h % NA_OFI_ADDR_HASH_SIZE];
    cls->addr_hash[h % NA_OFI_ADDR_HASH_SIZE] = a;
unlock:
    pthread_mutex_unlock(&cls->addr_lock);
    if (a != NULL)
        *addr = a;
    return ret;
}

void
na_ofi_addr_ref(struct na_addr *addr)
{
    atomic_fetch_add(&addr->refcount, 1);
}

/*
 * Drop a reference. The object stays cached at zero references; only
 * na_ofi_addr_intern() frees peers, under the lock, so a reference can
 * never be revived on a freed object.
 */
void
na_ofi_addr_unref(struct na_addr *addr)
{
    unsigned int old = atomic_fetch_sub(&addr->refcount, 1);

    (void) old;
    assert(old > 0);
}

void
na_ofi_addr_cache_destroy(struct na_ofi_class *cls)
{
    for (size_t i = 0; i < NA_OFI_ADDR_HASH_SIZE; i++) {
        struct na_addr *a = cls->addr_hash[i];
        while (a != NULL) {
            struct na_addr *next = a->hash_next;
            free(a);
            a = next;
        }
        cls->addr_hash[i] = NULL;
    }
    cls->addr_count = 0;
    while (cls->addr_removed != NULL) {
        struct na_addr *next = cls->addr_removed->hash_next;
        free(cls->addr_removed);
        cls->addr_removed = next;
    }
}

void
na_ofi_addr_to_wire(const struct na_addr *addr, uint8_t *wire)
{
    wire[0] =
        addr->sin.sin_family == AF_UNIX ? NA_OFI_ADDR_SHM : NA_OFI_ADDR_IPV4;
    memcpy(wire + 1, &addr->sin.sin_addr, 4);
    memcpy(wire + 5, &addr->sin.sin_port, 2);
}

/* Validate a wire address from a peer; port 0 and 0.0.0.0 cannot be
 * sent to, so they are refused rather than inserted. */
na_return_t
na_ofi_addr_from_wire(const uint8_t *wire, struct sockaddr_in *sin)
{
    if (wire[0] != NA_OFI_ADDR_IPV4 && wire[0] != NA_OFI_ADDR_SHM)
        return NA_PROTOCOL_ERROR;
    memset(sin, 0, sizeof(*sin));
    sin->sin_family = wire[0] == NA_OFI_ADDR_SHM ? AF_UNIX : AF_INET;
    memcpy(&sin->sin_addr, wire + 1, 4);
    memcpy(&sin->sin_port, wire + 5, 2);
    if (sin->sin_port == 0 || sin->sin_addr.s_addr == htonl(INADDR_ANY))
        return NA_PROTOCOL_ERROR;
    /* shm: a pid is positive, the endpoint part at most 1 + 254 * 256 + 255 */
    if (wire[0] == NA_OFI_ADDR_SHM &&
        (ntohl(sin->sin_addr.s_addr) > 0x7fffffffu ||
         ntohs(sin->sin_port) > 1u + 254u * 256u + 255u))
        return NA_PROTOCOL_ERROR;
    return NA_SUCCESS;
}

static na_return_t
na_ofi_addr_to_string(na_class_t *na_class, char *buf, size_t *buf_size,
                      na_addr_t addr)
{
    struct na_ofi_class *cls = na_ofi_class(na_class);
    char ip[INET_ADDRSTRLEN], str[96], name[64];

    if (addr->sin.sin_family == AF_UNIX) {
        /* "ofi+shm://<pid>:<d>:<e>": the provider's name without its
         * scheme, so it reads like the other ofi addresses. */
        na_ofi_shm_name(&addr->sin, name, sizeof(name));
        snprintf(str, sizeof(str), "ofi+%s://%s", cls->protocol, name + 9);
    } else {
        if (inet_ntop(AF_INET, &addr->sin.sin_addr, ip, sizeof(ip)) == NULL)
            return NA_PROTOCOL_ERROR;
        snprintf(str, sizeof(str), "ofi+%s://%s:%u", cls->protocol, ip,
                 ntohs(addr->sin.sin_port));
    }
    return na_plugin_addr_string_out(str, buf, buf_size);
}

/* Serialized form: one version byte, then the wire address. */
#define NA_OFI_ADDR_SER_VERSION 1
#define NA_OFI_ADDR_SER_SIZE (1 + NA_OFI_WIRE_ADDR_SIZE)

static na_return_t
na_ofi_addr_serialize(na_class_t *na_class, void *buf, size_t *buf_size,
                      na_addr_t addr)
{
    uint8_t *p = buf;

    (void) na_class;
    if (!na_plugin_serialize_room(buf, buf_size, NA_OFI_ADDR_SER_SIZE))
        return NA_OVERFLOW;
    p[0] = NA_OFI_ADDR_SER_VERSION;
    na_ofi_addr_to_wire(addr, p + 1);
    return NA_SUCCESS;
}

static na_return_t
na_ofi_addr_deserialize(na_class_t *na_class, na_addr_t *addr, const void *buf,
                        size_t buf_size)
{
    const uint8_t *p = buf;
    struct sockaddr_in sin;

    if (buf_size < NA_OFI_ADDR_SER_SIZE)
        return NA_MSGSIZE;
    if (p[0] != NA_OFI_ADDR_SER_VERSION ||
        na_ofi_addr_from_wire(p + 1, &sin) != NA_SUCCESS)
        return NA_PROTOCOL_ERROR;
    return na_ofi_addr_intern(na_ofi_class(na_class), &sin, addr);
}

static const struct na_addr_codec_ops na_ofi_addr_codec_ops = {
    .to_string = na_ofi_addr_to_string,
    .serialize = na_ofi_addr_serialize,
    .deserialize = na_ofi_addr_deserialize,
};

/*
 * Close a probe socket with a reset rather than an orderly shutdown. The
 * peer's tcp provider accepts the probe connection before it can see that
 * nobody is there; after an orderly close it keeps that dead socket in its
 * wait set, whose fd then stays readable, so an idle NA_Poll_wait() in the
 * peer returns at once instead of sleeping. A reset makes the provider drop
 * the socket.
 */
static void
na_ofi_close_abortive(int fd)
{
    struct linger lg = {.l_onoff = 1, .l_linger = 0};

    (void) setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(fd);
}

/*
 * Ask the kernel whether the peer still listens: a non-blocking TCP
 * connection attempt to its address, waited for at most
 * NA_OFI_PEER_CHECK_WAIT_MS. Only a definite answer counts: refused,
 * reset, host or network unreachable. A connection that is accepted or
 * still pending says nothing (the provider's own connection decides),
 * and is closed at once, with a reset (na_ofi_close_abortive()).
 */
bool
na_ofi_addr_refused(const struct na_addr *addr)
{
    struct sockaddr_in sin = addr->sin;
    struct pollfd pfd;
    int fd, err = 0;
    socklen_t len = sizeof(err);

    if (sin.sin_port == 0)
        return false;
    if (sin.sin_family == AF_UNIX) /* shm: is the process still there? */
        return kill((pid_t) ntohl(sin.sin_addr.s_addr), 0) != 0 &&
               errno == ESRCH;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    if (connect(fd, (const struct sockaddr *) &sin, sizeof(sin)) == 0) {
        na_ofi_close_abortive(fd);
        return false;
    }
    err = errno;
    if (err == EINPROGRESS) {
        pfd.fd = fd;
        pfd.events = POLLOUT;
        pfd.revents = 0;
        err = 0;
        if (poll(&pfd, 1, NA_OFI_PEER_CHECK_WAIT_MS) == 1 &&
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = 0;
    }
    na_ofi_close_abortive(fd);
    return err == ECONNREFUSED || err == ECONNRESET || err == EHOSTUNREACH ||
           err == ENETUNREACH;
}

static na_return_t
na_ofi_addr_lookup(na_class_t *na_class, const char *name, na_addr_t *addr)
{
    struct na_ofi_class *cls = na_ofi_class(na_class);
    const char *host = na_ofi_strip_scheme(cls, name);
    struct sockaddr_in sin;

    if (host == NULL)
        return NA_INVALID_ARG;
    if (cls->shm) {
        if (na_ofi_shm_parse(host, &sin) != NA_SUCCESS)
            return NA_INVALID_ARG;
    } else if (na_ofi_addr_parse_host(host, &sin, true) != NA_SUCCESS ||
               sin.sin_addr.s_addr == htonl(INADDR_ANY)) {
        return NA_INVALID_ARG;
    }
    return na_ofi_addr_intern(cls, &sin, addr);
}

static void
na_ofi_addr_free(na_class_t *na_class, na_addr_t addr)
{
    (void) na_class;
    if (addr != NULL)
        na_ofi_addr_unref(addr);
}

static na_return_t
na_ofi_addr_self(na_class_t *na_class, na_addr_t *addr)
{
    struct na_addr *self = na_ofi_class(na_class)->self;

    na_ofi_addr_ref(self);
    *addr = self;
    return NA_SUCCESS;
}

static na_return_t
na_ofi_addr_dup(na_class_t *na_class, na_addr_t addr, na_addr_t *new_addr)
{
    (void) na_class;
    na_ofi_addr_ref(addr);
    *new_addr = addr;
    return NA_SUCCESS;
}

static na_return_t
na_ofi_addr_set_remove(na_class_t *na_class, na_addr_t addr)
{
    struct na_ofi_class *cls = na_class->plugin_class;
    struct na_addr **pp;

    pthread_mutex_lock(&cls->addr_lock);
    pp = &cls->addr_hash[addr->hash % NA_OFI_ADDR_HASH_SIZE];
    while (*pp != NULL && *pp != addr)
        pp = &(*pp)->hash_next;
    if (*pp == addr) {
        *pp = addr->hash_next;
        cls->addr_count--;
        addr->hash_next = cls->addr_removed;
        cls->addr_removed = addr;
    }
    pthread_mutex_unlock(&cls->addr_lock);
    return NA_SUCCESS;
}

static bool
na_ofi_addr_is_self(na_class_t *na_class, na_addr_t addr)
{
    return addr == na_ofi_class(na_class)->self;
}

const struct na_addr_ops na_ofi_addr_ops = {
    .lookup = na_ofi_addr_lookup,
    .free = na_ofi_addr_free,
    .self = na_ofi_addr_self,
    .dup = na_ofi_addr_dup,
    .set_remove = na_ofi_addr_set_remove,
    .is_self = na_ofi_addr_is_self,
    .codec = &na_ofi_addr_codec_ops,
};
