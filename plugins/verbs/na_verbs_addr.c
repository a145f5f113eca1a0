/*
 * Addresses of the verbs plugin.
 *
 * A peer is named by the IPv4 address and port its class is bound to. The
 * class keeps exactly one address object per name in its peer table, so a
 * lookup, a deserialized address and the source reported for a received
 * message are the same object, and matching by source compares pointers.
 * An address is only a name: the connection behind it is made on first use
 * (na_verbs_conn.c).
 */
#include "na_verbs_internal.h"

#include <stdlib.h>
#include <string.h>

na_return_t
na_verbs_addr_get(struct na_verbs_class *cls, uint32_t ip, uint16_t port,
                  struct na_addr **addr)
{
    struct na_addr *a;

    LIST_FOREACH(a, &cls->peers, entry)
    {
        if (a->ip == ip && a->port == port) {
            a->refcount++;
            *addr = a;
            return NA_SUCCESS;
        }
    }
    a = calloc(1, sizeof(*a));
    if (a == NULL)
        return NA_NOMEM;
    a->cls = cls;
    a->ip = ip;
    a->port = port;
    a->refcount = 1;
    LIST_INSERT_HEAD(&cls->peers, a, entry);
    *addr = a;
    return NA_SUCCESS;
}

void
na_verbs_addr_ref(struct na_addr *addr)
{
    addr->refcount++;
}

void
na_verbs_addr_unref(struct na_addr *addr)
{
    if (addr == NULL || --addr->refcount > 0)
        return;
    LIST_REMOVE(addr, entry);
    free(addr);
}

/* At finalize, free what users forgot so the class leaks nothing; every
 * connection is gone by then, so no object still points at these. */
void
na_verbs_addr_table_clear(struct na_verbs_class *cls)
{
    struct na_addr *a;

    while ((a = LIST_FIRST(&cls->peers)) != NULL) {
        LIST_REMOVE(a, entry);
        free(a);
    }
    cls->self = NULL;
}

static na_return_t
na_verbs_addr_to_string(na_class_t *na_class, char *buf, size_t *buf_size,
                        na_addr_t addr)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);
    char tmp[NA_VERBS_ADDR_STRING_MAX];

    /* Only our own device is known; a peer's string leaves it out, which
     * lookup accepts just the same. */
    (void) na_verbs_addr_format(tmp, sizeof(tmp),
                                addr->self ? cls->device : NULL, addr->ip,
                                addr->port);
    return na_plugin_addr_string_out(tmp, buf, buf_size);
}

static na_return_t
na_verbs_addr_serialize(na_class_t *na_class, void *buf, size_t *buf_size,
                        na_addr_t addr)
{
    (void) na_class;
    if (!na_plugin_serialize_room(buf, buf_size, NA_VERBS_ADDR_SERIALIZE_SIZE))
        return NA_OVERFLOW;
    na_verbs_addr_encode(buf, addr->ip, addr->port);
    return NA_SUCCESS;
}

static na_return_t
na_verbs_addr_deserialize(na_class_t *na_class, na_addr_t *addr,
                          const void *buf, size_t buf_size)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);
    uint32_t ip;
    uint16_t port;
    na_return_t ret;

    ret = na_verbs_addr_decode(buf, buf_size, &ip, &port);
    if (ret != NA_SUCCESS)
        return ret;
    pthread_mutex_lock(&cls->lock);
    ret = na_verbs_addr_get(cls, ip, port, addr);
    pthread_mutex_unlock(&cls->lock);
    return ret;
}

static const struct na_addr_codec_ops na_verbs_addr_codec_ops = {
    .to_string = na_verbs_addr_to_string,
    .serialize = na_verbs_addr_serialize,
    .deserialize = na_verbs_addr_deserialize,
};

static na_return_t
na_verbs_addr_lookup(na_class_t *na_class, const char *name, na_addr_t *addr)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);
    struct na_verbs_addr_parts parts;
    na_return_t ret;

    if (na_verbs_addr_parse(name, &parts) != NA_SUCCESS || !parts.has_ip ||
        !parts.has_port || parts.port == 0) {
        NA_VERBS_LOG("cannot look up \"%s\": expected "
                     "verbs://[device/]ip:port with a non-zero port",
                     name);
        return NA_INVALID_ARG;
    }
    /* The device part names the peer's device, which does not change how
     * we reach it: our own device routes to the peer's IP address. */
    pthread_mutex_lock(&cls->lock);
    ret = na_verbs_addr_get(cls, parts.ip, parts.port, addr);
    pthread_mutex_unlock(&cls->lock);
    return ret;
}

static void
na_verbs_addr_free(na_class_t *na_class, na_addr_t addr)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);

    if (addr == NULL)
        return;
    pthread_mutex_lock(&cls->lock);
    na_verbs_addr_unref(addr);
    pthread_mutex_unlock(&cls->lock);
}

static na_return_t
na_verbs_addr_self(na_class_t *na_class, na_addr_t *addr)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);

    pthread_mutex_lock(&cls->lock);
    na_verbs_addr_ref(cls->self);
    *addr = cls->self;
    pthread_mutex_unlock(&cls->lock);
    return NA_SUCCESS;
}

static na_return_t
na_verbs_addr_dup(na_class_t *na_class, na_addr_t addr, na_addr_t *new_addr)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);

    if (addr == NULL)
        return NA_INVALID_ARG;
    pthread_mutex_lock(&cls->lock);
    na_verbs_addr_ref(addr);
    *new_addr = addr;
    pthread_mutex_unlock(&cls->lock);
    return NA_SUCCESS;
}

static bool
na_verbs_addr_cmp(na_class_t *na_class, na_addr_t addr1, na_addr_t addr2)
{
    (void) na_class;
    if (addr1 == NULL || addr2 == NULL)
        return addr1 == addr2;
    return addr1->ip == addr2->ip && addr1->port == addr2->port;
}

static bool
na_verbs_addr_is_self(na_class_t *na_class, na_addr_t addr)
{
    (void) na_class;
    return addr != NULL && addr->self;
}

const struct na_addr_ops na_verbs_addr_ops = {
    .lookup = na_verbs_addr_lookup,
    .free = na_verbs_addr_free,
    .self = na_verbs_addr_self,
    .dup = na_verbs_addr_dup,
    .cmp = na_verbs_addr_cmp,
    .is_self = na_verbs_addr_is_self,
    .codec = &na_verbs_addr_codec_ops,
};
