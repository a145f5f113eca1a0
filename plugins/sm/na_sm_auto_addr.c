/*
 * auto_sm addresses, memory handles and RMA (see na_sm_auto_internal.h).
 *
 * String form: "<net>", "na+sm://<name>@<node>" or both joined by '#'.
 * Serialized addresses and memory handles: see na_auto_pair_serialize().
 * Untrusted bytes: every length is checked; a shared-memory part from
 * another node is dropped, never used.
 */
#include "na_sm_auto_internal.h"

#include "na/na_plugin_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct na_addr *
na_auto_addr_new(struct na_auto_class *cls, na_addr_t net, na_addr_t sm)
{
    struct na_addr *a = calloc(1, sizeof(*a));

    if (a == NULL) {
        if (net != NULL)
            NA_Addr_free(cls->inner[NA_AUTO_NET], net);
        if (sm != NULL)
            NA_Addr_free(cls->inner[NA_AUTO_SM], sm);
        return NULL;
    }
    atomic_init(&a->refcount, 1);
    a->cls = cls;
    a->part[NA_AUTO_NET] = net;
    a->part[NA_AUTO_SM] = sm;
    return a;
}

/* Shared memory whenever the peer is on this node. */
int
na_auto_addr_side(const struct na_addr *addr)
{
    return addr->part[NA_AUTO_SM] != NULL ? NA_AUTO_SM : NA_AUTO_NET;
}

void
na_auto_addr_release(struct na_addr *addr)
{
    if (addr == NULL || atomic_fetch_sub(&addr->refcount, 1) != 1)
        return;
    for (int s = 0; s < 2; s++)
        if (addr->part[s] != NULL)
            NA_Addr_free(addr->cls->inner[s], addr->part[s]);
    free(addr);
}

/* "na+sm://<name>@<node>": the sm part if <node> is ours, else NULL. */
static na_return_t
na_auto_lookup_sm(struct na_auto_class *cls, const char *s, size_t len,
                  na_addr_t *sm)
{
    char buf[256];
    const char *at;

    *sm = NULL;
    if (len >= sizeof(buf))
        return NA_INVALID_ARG;
    memcpy(buf, s, len);
    buf[len] = '\0';
    at = strrchr(buf, '@');
    if (at == NULL)
        return NA_INVALID_ARG;
    if (strcmp(at + 1, cls->node) != 0)
        return NA_SUCCESS; /* another node: not reachable this way */
    buf[at - buf] = '\0';
    return NA_Addr_lookup(cls->inner[NA_AUTO_SM], buf, sm);
}

static na_return_t
na_auto_addr_to_string(na_class_t *na_class, char *buf, size_t *buf_size,
                       na_addr_t addr)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    char net[256] = "", sm[256] = "", out[600];
    size_t n = sizeof(net);

    if (addr->part[NA_AUTO_NET] != NULL &&
        NA_Addr_to_string(cls->inner[NA_AUTO_NET], net, &n,
                          addr->part[NA_AUTO_NET]) != NA_SUCCESS)
        return NA_OVERFLOW;
    n = sizeof(sm);
    if (addr->part[NA_AUTO_SM] != NULL &&
        NA_Addr_to_string(cls->inner[NA_AUTO_SM], sm, &n,
                          addr->part[NA_AUTO_SM]) != NA_SUCCESS)
        return NA_OVERFLOW;
    snprintf(out, sizeof(out), "%s%s%s%s%s", net, net[0] && sm[0] ? "#" : "",
             sm, sm[0] ? "@" : "", sm[0] ? cls->node : "");
    return na_plugin_addr_string_out(out, buf, buf_size);
}

/*
 * Both parts, then the node id, then a 9-byte trailer: u16 network part
 * length, u16 shared-memory part length, u8 node length (little-endian),
 * u32 magic "QSAS". The network part comes first and the network plugins'
 * decoders ignore trailing bytes, so a peer without auto_sm reads these
 * bytes as its own; bytes without the trailer are a network part alone.
 */
#define NA_AUTO_TRAILER 9
#define NA_AUTO_MAGIC 0x53415351u /* "QSAS" little-endian */

typedef size_t (*na_auto_size_fn)(na_class_t *, void *);
typedef na_return_t (*na_auto_ser_fn)(na_class_t *, void *, size_t, void *);

static size_t
na_auto_pair_size(struct na_auto_class *cls, void *const part[2],
                  na_auto_size_fn size)
{
    size_t n = strlen(cls->node) + NA_AUTO_TRAILER;

    for (int s = 0; s < 2; s++)
        if (part[s] != NULL)
            n += size(cls->inner[s], part[s]);
    return n;
}

static na_return_t
na_auto_pair_serialize(struct na_auto_class *cls, uint8_t *p, size_t *len,
                       void *const part[2], na_auto_size_fn size,
                       na_auto_ser_fn ser)
{
    size_t node_len = strlen(cls->node), off = 0, n[2];
    uint32_t magic = NA_AUTO_MAGIC;

    if (!na_plugin_serialize_room(p, len, na_auto_pair_size(cls, part, size)))
        return NA_OVERFLOW;
    for (int s = 0; s < 2; s++) {
        n[s] = part[s] != NULL ? size(cls->inner[s], part[s]) : 0;
        if (n[s] > 0xffff)
            return NA_OVERFLOW;
        if (n[s] != 0 &&
            ser(cls->inner[s], p + off, n[s], part[s]) != NA_SUCCESS)
            return NA_OVERFLOW;
        off += n[s];
    }
    memcpy(p + off, cls->node, node_len);
    off += node_len;
    p[off] = (uint8_t) (n[0] & 0xff);
    p[off + 1] = (uint8_t) (n[0] >> 8);
    p[off + 2] = (uint8_t) (n[1] & 0xff);
    p[off + 3] = (uint8_t) (n[1] >> 8);
    p[off + 4] = (uint8_t) node_len;
    memcpy(p + off + 5, &magic, 4);
    return NA_SUCCESS;
}

/* Split untrusted bytes into the two parts; the shared-memory part is
 * dropped (length 0) when the node is not ours. */
static na_return_t
na_auto_pair_split(struct na_auto_class *cls, const uint8_t *p, size_t len,
                   const uint8_t *part[2], size_t plen[2])
{
    const uint8_t *t;
    size_t node_len;
    uint32_t magic;

    if (p == NULL || len == 0)
        return NA_MSGSIZE;
    part[0] = p;
    plen[0] = len;
    part[1] = NULL;
    plen[1] = 0;
    if (len < NA_AUTO_TRAILER)
        return NA_SUCCESS;
    t = p + len - NA_AUTO_TRAILER;
    memcpy(&magic, t + 5, 4);
    if (magic != NA_AUTO_MAGIC)
        return NA_SUCCESS; /* a network part alone */
    plen[0] = (size_t) t[0] | (size_t) t[1] << 8;
    plen[1] = (size_t) t[2] | (size_t) t[3] << 8;
    node_len = t[4];
    if (plen[0] + plen[1] + node_len != len - NA_AUTO_TRAILER)
        return NA_PROTOCOL_ERROR;
    if (plen[0] == 0 && plen[1] == 0)
        return NA_PROTOCOL_ERROR;
    part[1] = p + plen[0];
    if (node_len != strlen(cls->node) ||
        memcmp(p + plen[0] + plen[1], cls->node, node_len) != 0)
        plen[1] = 0;
    return NA_SUCCESS;
}

static na_return_t
na_auto_addr_serialize(na_class_t *na_class, void *buf, size_t *buf_size,
                       na_addr_t addr)
{
    return na_auto_pair_serialize(na_auto_class(na_class), buf, buf_size,
                                  (void **) addr->part,
                                  (na_auto_size_fn) NA_Addr_get_serialize_size,
                                  (na_auto_ser_fn) NA_Addr_serialize);
}

static na_return_t
na_auto_addr_deserialize(na_class_t *na_class, na_addr_t *addr, const void *buf,
                         size_t buf_size)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    const uint8_t *part[2];
    size_t plen[2];
    na_addr_t in[2] = {NULL, NULL};
    na_return_t ret = na_auto_pair_split(cls, buf, buf_size, part, plen);
    struct na_addr *a;

    /* Each part must be exactly what its class reads: a truncated or
     * padded input is not taken for a network part alone. */
    for (int s = 0; s < 2 && ret == NA_SUCCESS; s++) {
        if (plen[s] == 0)
            continue;
        ret = NA_Addr_deserialize(cls->inner[s], &in[s], part[s], plen[s]);
        if (ret == NA_SUCCESS &&
            NA_Addr_get_serialize_size(cls->inner[s], in[s]) != plen[s])
            ret = NA_MSGSIZE;
    }
    if (ret == NA_SUCCESS && in[0] == NULL && in[1] == NULL)
        ret = NA_HOSTUNREACH;
    if (ret != NA_SUCCESS) {
        for (int s = 0; s < 2; s++)
            if (in[s] != NULL)
                NA_Addr_free(cls->inner[s], in[s]);
        return ret;
    }
    a = na_auto_addr_new(cls, in[0], in[1]);
    if (a == NULL)
        return NA_NOMEM;
    *addr = a;
    return NA_SUCCESS;
}

static const struct na_addr_codec_ops na_auto_addr_codec_ops = {
    .to_string = na_auto_addr_to_string,
    .serialize = na_auto_addr_serialize,
    .deserialize = na_auto_addr_deserialize,
};

static na_return_t
na_auto_mem_handle_create(na_class_t *na_class, void *buf, size_t buf_size,
                          unsigned long flags, na_mem_handle_t *mem_handle)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    struct na_mem_handle *h = calloc(1, sizeof(*h));
    na_return_t ret = NA_NOMEM;

    if (h == NULL)
        return NA_NOMEM;
    for (int s = 0; s < 2; s++) {
        ret = NA_Mem_handle_create(cls->inner[s], buf, buf_size, flags,
                                   &h->part[s]);
        if (ret != NA_SUCCESS)
            break;
    }
    if (ret != NA_SUCCESS) {
        if (h->part[0] != NULL)
            NA_Mem_handle_free(cls->inner[0], h->part[0]);
        free(h);
        return ret;
    }
    *mem_handle = h;
    return NA_SUCCESS;
}

static void
na_auto_mem_handle_free(na_class_t *na_class, na_mem_handle_t h)
{
    struct na_auto_class *cls = na_auto_class(na_class);

    if (h == NULL)
        return;
    for (int s = 0; s < 2; s++)
        if (h->part[s] != NULL)
            NA_Mem_handle_free(cls->inner[s], h->part[s]);
    free(h);
}

static na_return_t
na_auto_mem_register(na_class_t *na_class, na_mem_handle_t h,
                     enum na_mem_type mem_type, uint64_t device)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    na_return_t ret;

    ret = NA_Mem_register(cls->inner[0], h->part[0], mem_type, device);
    if (ret != NA_SUCCESS)
        return ret;
    ret = NA_Mem_register(cls->inner[1], h->part[1], mem_type, device);
    if (ret != NA_SUCCESS)
        NA_Mem_deregister(cls->inner[0], h->part[0]);
    return ret;
}

static na_return_t
na_auto_mem_deregister(na_class_t *na_class, na_mem_handle_t h)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    na_return_t r0, r1 = NA_SUCCESS;

    r0 = h->part[0] ? NA_Mem_deregister(cls->inner[0], h->part[0]) : NA_SUCCESS;
    if (h->part[1] != NULL)
        r1 = NA_Mem_deregister(cls->inner[1], h->part[1]);
    return r0 != NA_SUCCESS ? r0 : r1;
}

static na_return_t
na_auto_mem_handle_serialize(na_class_t *na_class, void *buf, size_t *buf_size,
                             na_mem_handle_t h)
{
    return na_auto_pair_serialize(
        na_auto_class(na_class), buf, buf_size, (void **) h->part,
        (na_auto_size_fn) NA_Mem_handle_get_serialize_size,
        (na_auto_ser_fn) NA_Mem_handle_serialize);
}

static na_return_t
na_auto_mem_handle_deserialize(na_class_t *na_class,
                               na_mem_handle_t *mem_handle, const void *buf,
                               size_t buf_size)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    const uint8_t *part[2];
    size_t plen[2];
    struct na_mem_handle *h;
    na_return_t ret = na_auto_pair_split(cls, buf, buf_size, part, plen);

    if (ret != NA_SUCCESS)
        return ret;
    h = calloc(1, sizeof(*h));
    if (h == NULL)
        return NA_NOMEM;
    for (int s = 0; s < 2 && ret == NA_SUCCESS; s++) {
        if (plen[s] == 0)
            continue;
        ret = NA_Mem_handle_deserialize(cls->inner[s], &h->part[s], part[s],
                                        plen[s]);
        if (ret == NA_SUCCESS && NA_Mem_handle_get_serialize_size(
                                     cls->inner[s], h->part[s]) != plen[s])
            ret = NA_MSGSIZE;
    }
    if (ret != NA_SUCCESS) {
        na_auto_mem_handle_free(na_class, h);
        return ret;
    }
    *mem_handle = h;
    return NA_SUCCESS;
}

/* Put and get go through the class of the peer's side, or through the
 * network for a handle described by a peer of another node. */
static na_return_t
na_auto_rma(na_class_t *na_class, const struct na_op_desc *desc, na_op_id_t *op)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    struct na_auto_context *ac = desc->context->plugin_context;
    na_mem_handle_t lh = desc->local_mem_handle, rh = desc->remote_mem_handle;
    na_addr_t peer = desc->addr;
    int s = na_auto_addr_side(peer);
    na_return_t ret;

    if (rh->part[s] == NULL || lh->part[s] == NULL) {
        /* A handle described by a peer of another node: the network. */
        s = NA_AUTO_NET;
        if (rh->part[s] == NULL || lh->part[s] == NULL || peer->part[s] == NULL)
            return NA_INVALID_ARG;
    }
    if (!na_auto_op_start(op, desc, s))
        return NA_SUCCESS;
    ret = (desc->type == NA_CB_PUT ? NA_Put : NA_Get)(
        cls->inner[s], ac->inner[s], na_auto_inner_cb, op, lh->part[s],
        desc->local_offset, rh->part[s], desc->remote_offset, desc->data_size,
        peer->part[s], desc->addr_id, op->inner[s]);
    return na_auto_op_handed(op, cls, ac, s, ret);
}

const struct na_mem_ops na_auto_mem_ops = {
    .handle_create = na_auto_mem_handle_create,
    .handle_free = na_auto_mem_handle_free,
    .mem_register = na_auto_mem_register,
    .mem_deregister = na_auto_mem_deregister,
    .handle_serialize = na_auto_mem_handle_serialize,
    .handle_deserialize = na_auto_mem_handle_deserialize,
    .rma = na_auto_rma,
};

static na_return_t
na_auto_addr_lookup(na_class_t *na_class, const char *name, na_addr_t *addr)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    const char *hash = strchr(name, '#');
    na_addr_t net = NULL, sm = NULL;
    na_return_t ret = NA_SUCCESS;
    struct na_addr *a;

    if (strncmp(name, "na+sm://", 8) == 0 && hash == NULL) {
        ret = na_auto_lookup_sm(cls, name, strlen(name), &sm);
    } else {
        char net_name[256];
        size_t n = hash ? (size_t) (hash - name) : strlen(name);
        if (n >= sizeof(net_name))
            return NA_INVALID_ARG;
        memcpy(net_name, name, n);
        net_name[n] = '\0';
        ret = NA_Addr_lookup(cls->inner[NA_AUTO_NET], net_name, &net);
        if (ret == NA_SUCCESS && hash != NULL)
            ret = na_auto_lookup_sm(cls, hash + 1, strlen(hash + 1), &sm);
    }
    if (ret == NA_SUCCESS && net == NULL && sm == NULL)
        ret = NA_HOSTUNREACH; /* shared memory of another node only */
    if (ret != NA_SUCCESS) {
        if (net != NULL)
            NA_Addr_free(cls->inner[NA_AUTO_NET], net);
        if (sm != NULL)
            NA_Addr_free(cls->inner[NA_AUTO_SM], sm);
        return ret;
    }
    a = na_auto_addr_new(cls, net, sm);
    if (a == NULL)
        return NA_NOMEM;
    *addr = a;
    return NA_SUCCESS;
}

static void
na_auto_addr_free(na_class_t *na_class, na_addr_t addr)
{
    (void) na_class;
    na_auto_addr_release(addr);
}

static na_return_t
na_auto_addr_self(na_class_t *na_class, na_addr_t *addr)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    na_addr_t net = NULL, sm = NULL;
    struct na_addr *a;

    if (NA_Addr_self(cls->inner[NA_AUTO_NET], &net) != NA_SUCCESS)
        return NA_NOMEM;
    if (NA_Addr_self(cls->inner[NA_AUTO_SM], &sm) != NA_SUCCESS) {
        NA_Addr_free(cls->inner[NA_AUTO_NET], net);
        return NA_NOMEM;
    }
    a = na_auto_addr_new(cls, net, sm);
    if (a == NULL)
        return NA_NOMEM;
    *addr = a;
    return NA_SUCCESS;
}

static na_return_t
na_auto_addr_dup(na_class_t *na_class, na_addr_t addr, na_addr_t *new_addr)
{
    (void) na_class;
    atomic_fetch_add(&addr->refcount, 1);
    *new_addr = addr;
    return NA_SUCCESS;
}

static bool
na_auto_addr_cmp(na_class_t *na_class, na_addr_t a, na_addr_t b)
{
    struct na_auto_class *cls = na_auto_class(na_class);

    if (a == b)
        return true;
    for (int s = 1; s >= 0; s--)
        if (a->part[s] != NULL && b->part[s] != NULL)
            return NA_Addr_cmp(cls->inner[s], a->part[s], b->part[s]);
    return false;
}

static bool
na_auto_addr_is_self(na_class_t *na_class, na_addr_t addr)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    int s = na_auto_addr_side(addr);

    return NA_Addr_is_self(cls->inner[s], addr->part[s]);
}

const struct na_addr_ops na_auto_addr_ops = {
    .lookup = na_auto_addr_lookup,
    .free = na_auto_addr_free,
    .self = na_auto_addr_self,
    .dup = na_auto_addr_dup,
    .cmp = na_auto_addr_cmp,
    .is_self = na_auto_addr_is_self,
    .codec = &na_auto_addr_codec_ops,
};
