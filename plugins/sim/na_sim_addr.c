/*
 * Addresses: node names, "sim://<name>" strings and their binary form.
 *
 * A name is 1 to 63 bytes of [A-Za-z0-9._:-]. An address is a small
 * refcounted object holding the name and the incarnation of the node that
 * bore it at lookup time. Sends resolve the name when they are delivered,
 * so looking up a node that does not exist yet is not an error.
 */
#include "na_sim_internal.h"
#include "util/qs_alloc.h"
#include "util/qs_atomic.h"

#include <stdlib.h>
#include <string.h>

/* Version byte of the serialized address: bump it when the layout moves. */
#define NA_SIM_ADDR_VERSION 1
/* version, name length, name, incarnation (64-bit little endian). */
#define NA_SIM_ADDR_FIXED_SIZE (1 + 1 + 8)

static bool
na_sim_name_char_ok(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
           c == ':';
}

bool
na_sim_name_parse(const char *str, size_t len, struct na_sim_name *name)
{
    if (len == 0 || len > NA_SIM_NAME_MAX)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!na_sim_name_char_ok(str[i]))
            return false;
    memcpy(name->str, str, len);
    name->str[len] = '\0';
    name->len = (uint8_t) len;
    na_sim_name_seal(name);
    return true;
}

/* Accept "sim://name", "sim+sim://name" or, for the control API, a bare
 * "name". A string with "://" must use the sim protocol. */
bool
na_sim_name_from_string(const char *str, struct na_sim_name *name)
{
    const char *sep = strstr(str, "://");

    if (sep != NULL) {
        size_t plen = (size_t) (sep - str);

        if (!((plen == 3 && strncmp(str, "sim", 3) == 0) ||
              (plen == 7 && strncmp(str, "sim+sim", 7) == 0)))
            return false;
        str = sep + 3;
    }
    return na_sim_name_parse(str, strlen(str), name);
}

void
na_sim_name_seal(struct na_sim_name *name)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

    for (size_t i = 0; i < name->len; i++)
        h = (h ^ (unsigned char) name->str[i]) * 0x100000001b3ULL;
    name->table_hash = (size_t) (h ^ (h >> 32));
    name->trace_t = na_sim_trace_text_hash(name->str, name->len);
}

na_addr_t
na_sim_addr_new(struct na_sim_world *world, const struct na_sim_name *name,
                uint64_t incarnation)
{
    /* On a cache line: with a short name, all an event reads of an
     * address (its count, incarnation, hashes and text) is one line. */
    na_addr_t addr = qs_calloc_lines(sizeof(*addr));

    if (addr == NULL)
        return NULL;
    atomic_init(&addr->refcount, 1);
    addr->incarnation = incarnation;
    addr->world = world;
    addr->name = *name;
    return addr;
}

na_addr_t
na_sim_node_source(struct na_sim_node *node)
{
    if (node->source == NULL ||
        node->source->incarnation != node->incarnation) {
        na_addr_t addr =
            na_sim_addr_new(node->world, &node->name, node->incarnation);

        if (addr == NULL)
            return NULL;
        na_sim_addr_unref(node->source);
        node->source = addr;
    }
    return na_sim_addr_ref(node->source);
}

/*
 * Ops.
 */

/* Two addresses are equal when they name the same incarnation of the same
 * node. An address looked up before its node existed (incarnation 0) is
 * bound to no incarnation and equals any address of that name: it reaches
 * whichever node holds the name when its traffic arrives. */
static bool
na_sim_incarnation_match(uint64_t a, uint64_t b)
{
    return a == b || a == 0 || b == 0;
}

static na_return_t
na_sim_addr_to_string(na_class_t *na_class, char *buf, size_t *buf_size,
                      na_addr_t addr)
{
    size_t need = NA_SIM_PREFIX_LEN + addr->name.len + 1;

    (void) na_class;
    if (buf == NULL) {
        *buf_size = need;
        return NA_SUCCESS;
    }
    if (*buf_size < need) {
        *buf_size = need;
        return NA_OVERFLOW;
    }
    memcpy(buf, NA_SIM_PREFIX, NA_SIM_PREFIX_LEN);
    memcpy(buf + NA_SIM_PREFIX_LEN, addr->name.str, addr->name.len + 1u);
    *buf_size = need;
    return NA_SUCCESS;
}

/* The bytes of an address's serialized form. */
static size_t
na_sim_addr_wire_size(na_addr_t addr)
{
    return NA_SIM_ADDR_FIXED_SIZE + addr->name.len;
}

void
na_sim_put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char) (v >> (8 * i));
}

uint64_t
na_sim_get_u64(const unsigned char *p)
{
    uint64_t v = 0;

    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static na_return_t
na_sim_addr_serialize(na_class_t *na_class, void *buf, size_t *buf_size,
                      na_addr_t addr)
{
    unsigned char *p = buf;

    (void) na_class;
    if (!na_plugin_serialize_room(buf, buf_size, na_sim_addr_wire_size(addr)))
        return NA_OVERFLOW;
    p[0] = NA_SIM_ADDR_VERSION;
    p[1] = addr->name.len;
    memcpy(p + 2, addr->name.str, addr->name.len);
    na_sim_put_u64(p + 2 + addr->name.len, addr->incarnation);
    return NA_SUCCESS;
}

/* Untrusted bytes: every length is checked before it is used. Trailing
 * bytes after the address are ignored, since callers may hand over a
 * larger buffer than the address needs. */
static na_return_t
na_sim_addr_deserialize(na_class_t *na_class, na_addr_t *addr, const void *buf,
                        size_t buf_size)
{
    const unsigned char *p = buf;
    struct na_sim_name name;
    na_addr_t a;

    if (buf_size < NA_SIM_ADDR_FIXED_SIZE)
        return NA_MSGSIZE;
    if (p[0] != NA_SIM_ADDR_VERSION)
        return NA_PROTOCOL_ERROR;
    if (buf_size - NA_SIM_ADDR_FIXED_SIZE < p[1])
        return NA_MSGSIZE;
    if (!na_sim_name_parse((const char *) p + 2, p[1], &name))
        return NA_PROTOCOL_ERROR;
    a = na_sim_addr_new(((struct na_sim_node *) na_class->plugin_class)->world,
                        &name, na_sim_get_u64(p + 2 + name.len));
    if (a == NULL)
        return NA_NOMEM;
    *addr = a;
    return NA_SUCCESS;
}

static const struct na_addr_codec_ops na_sim_addr_codec_ops = {
    .to_string = na_sim_addr_to_string,
    .serialize = na_sim_addr_serialize,
    .deserialize = na_sim_addr_deserialize,
};

static na_return_t
na_sim_addr_lookup(na_class_t *na_class, const char *name, na_addr_t *addr)
{
    struct na_sim_node *self = na_class->plugin_class, *node;
    struct na_sim_world *world = self->world;
    struct na_sim_name n;
    uint64_t incarnation = 0;
    na_addr_t a;

    /* Lookup strings are full addresses: a bare name is not accepted here,
     * so that a string meant for another plugin fails loudly. */
    if (strstr(name, "://") == NULL || !na_sim_name_from_string(name, &n))
        return NA_INVALID_ARG;
    pthread_mutex_lock(&world->lock);
    node = na_sim_node_find(world, &n);
    if (node != NULL)
        incarnation = node->incarnation;
    pthread_mutex_unlock(&world->lock);
    a = na_sim_addr_new(world, &n, incarnation);
    if (a == NULL)
        return NA_NOMEM;
    *addr = a;
    return NA_SUCCESS;
}

static void
na_sim_addr_free(na_class_t *na_class, na_addr_t addr)
{
    (void) na_class;
    na_sim_addr_unref(addr);
}

static na_return_t
na_sim_addr_self(na_class_t *na_class, na_addr_t *addr)
{
    struct na_sim_node *self = na_class->plugin_class;
    uint64_t inc;
    na_addr_t a;

    pthread_mutex_lock(&self->world->lock);
    inc = self->incarnation;
    pthread_mutex_unlock(&self->world->lock);
    a = na_sim_addr_new(self->world, &self->name, inc);
    if (a == NULL)
        return NA_NOMEM;
    *addr = a;
    return NA_SUCCESS;
}

static na_return_t
na_sim_addr_dup(na_class_t *na_class, na_addr_t addr, na_addr_t *new_addr)
{
    (void) na_class;
    *new_addr = na_sim_addr_ref(addr);
    return NA_SUCCESS;
}

static bool
na_sim_addr_cmp(na_class_t *na_class, na_addr_t addr1, na_addr_t addr2)
{
    (void) na_class;
    return na_sim_name_eq(&addr1->name, &addr2->name) &&
           na_sim_incarnation_match(addr1->incarnation, addr2->incarnation);
}

/* An address of an earlier incarnation of this node is not this node: its
 * traffic goes out to the fabric and is fenced there. The node's
 * incarnation changes only under the world lock. */
static bool
na_sim_addr_is_self(na_class_t *na_class, na_addr_t addr)
{
    struct na_sim_node *self = na_class->plugin_class;
    uint64_t inc;

    pthread_mutex_lock(&self->world->lock);
    inc = self->incarnation;
    pthread_mutex_unlock(&self->world->lock);
    return na_sim_name_eq(&addr->name, &self->name) &&
           na_sim_incarnation_match(addr->incarnation, inc);
}

const struct na_addr_ops na_sim_addr_ops = {
    .lookup = na_sim_addr_lookup,
    .free = na_sim_addr_free,
    .self = na_sim_addr_self,
    .dup = na_sim_addr_dup,
    .cmp = na_sim_addr_cmp,
    .is_self = na_sim_addr_is_self,
    .codec = &na_sim_addr_codec_ops,
};
