/*
 * HG addresses: reference-counted wrappers of NA addresses. Lookup is
 * immediate, as the RPC-layer document describes.
 */
#include "core/hg_core.h"
#include "util/qs_atomic.h"

#include <stdlib.h>
#include <string.h>

hg_return_t
hg_addr_create(hg_class_t *hg_class, na_addr_t na_addr, hg_addr_t *addr)
{
    struct hg_addr *hg_addr = calloc(1, sizeof(*hg_addr));

    if (hg_addr == NULL)
        return HG_NOMEM;
    hg_addr->hg_class = hg_class;
    hg_addr->na_addr = na_addr;
    atomic_init(&hg_addr->refcount, 1);
    atomic_fetch_add(&hg_core_class_of(hg_class)->n_addrs, 1);
    HG_CORE_CHECK(obj_add, hg_class, hg_addr, HG_CHECK_ADDR);
    *addr = hg_addr;
    return HG_SUCCESS;
}

/* Wrap the NA address an NA call produced, or pass on its failure; the
 * NA address is freed if the wrapper cannot be made. */
static hg_return_t
hg_addr_wrap(hg_class_t *hg_class, na_return_t na_ret, na_addr_t na_addr,
             hg_addr_t *addr)
{
    hg_return_t ret;

    if (na_ret != NA_SUCCESS)
        return hg_from_na(na_ret);
    ret = hg_addr_create(hg_class, na_addr, addr);
    if (ret != HG_SUCCESS)
        NA_Addr_free(hg_core_class_of(hg_class)->na_class, na_addr);
    return ret;
}

hg_return_t
HG_Addr_lookup2(hg_class_t *hg_class, const char *name, hg_addr_t *addr)
{
    na_addr_t na_addr = NA_ADDR_NULL;
    const char *sm_part;
    char net_part[256];

    qs_bias_gate();
    if (hg_class == NULL || name == NULL || addr == NULL)
        return HG_INVALID_ARG;
    /* An auto_sm peer prints "<network address>#na+sm://...": a class
     * without auto_sm reaches it by the network part. */
    sm_part =
        hg_core_class_of(hg_class)->auto_sm ? NULL : strstr(name, "#na+sm://");
    if (sm_part != NULL && (size_t) (sm_part - name) < sizeof(net_part)) {
        memcpy(net_part, name, (size_t) (sm_part - name));
        net_part[sm_part - name] = '\0';
        name = net_part;
    }
    na_return_t na_ret =
        NA_Addr_lookup(hg_core_class_of(hg_class)->na_class, name, &na_addr);

    return hg_addr_wrap(hg_class, na_ret, na_addr, addr);
}

struct hg_lookup_op {
    struct hg_completion comp;
    hg_cb_t callback;
    void *arg;
    hg_addr_t addr;
    hg_return_t ret;
};

static void hg_addr_lookup_trigger(struct hg_completion *comp);

hg_return_t
HG_Addr_lookup1(hg_context_t *context, hg_cb_t callback, void *arg,
                const char *name, hg_op_id_t *op_id)
{
    struct hg_lookup_op *op;

    qs_bias_gate();
    if (context == NULL || name == NULL)
        return HG_INVALID_ARG;
    op = calloc(1, sizeof(*op));
    if (op == NULL)
        return HG_NOMEM;
    op->callback = callback;
    op->arg = arg;
    op->ret = HG_Addr_lookup2(hg_core_of(context)->hg_class, name, &op->addr);
    /* As in Mercury, a name the class cannot look up (malformed, another
     * protocol) fails here, and the callback never runs. */
    if (op->ret != HG_SUCCESS) {
        hg_return_t ret = op->ret;

        free(op);
        return ret;
    }
    op->comp.run = hg_addr_lookup_trigger;
    op->comp.object = op;
    HG_CORE_CHECK(op_begin, hg_core_of(context)->hg_class, op, HG_CHECK_LOOKUP);
    /* The lookup itself is immediate; only its callback is deferred, so
     * it never runs inside this call. */
    hg_core_complete(hg_core_of(context), &op->comp);
    if (op_id != NULL && op_id != HG_OP_ID_IGNORE)
        *op_id = (hg_op_id_t) op;
    return HG_SUCCESS;
}

static void
hg_addr_lookup_trigger(struct hg_completion *comp)
{
    struct hg_lookup_op *op = comp->object;
    struct hg_cb_info info = {
        .arg = op->arg, .type = HG_CB_LOOKUP, .ret = op->ret};

    info.info.lookup.addr = op->ret == HG_SUCCESS ? op->addr : HG_ADDR_NULL;
    if (op->callback != NULL)
        op->callback(&info);
    HG_CORE_CHECK(op_end, op);
    free(op);
}

hg_return_t
HG_Addr_set_remove(hg_class_t *hg_class, hg_addr_t addr)
{
    qs_bias_gate();
    if (hg_class == NULL || addr == HG_ADDR_NULL)
        return HG_INVALID_ARG;
    return hg_from_na(NA_Addr_set_remove(hg_core_class_of(hg_class)->na_class,
                                         addr->na_addr));
}

hg_return_t
HG_Addr_free(hg_class_t *hg_class, hg_addr_t addr)
{
    if (hg_class == NULL)
        return HG_INVALID_ARG;
    if (addr == HG_ADDR_NULL)
        return HG_SUCCESS;
    /* The address inside a handle's hg_info belongs to the handle. */
    if (addr->embedded)
        return HG_SUCCESS;
    if (qs_atomic_fetch_sub(&addr->refcount, 1, memory_order_acq_rel) == 1) {
        NA_Addr_free(hg_core_class_of(hg_class)->na_class, addr->na_addr);
        atomic_fetch_sub(&hg_core_class_of(hg_class)->n_addrs, 1);
        HG_CORE_CHECK(obj_del, addr);
        free(addr);
    }
    return HG_SUCCESS;
}

hg_return_t
HG_Addr_self(hg_class_t *hg_class, hg_addr_t *addr)
{
    qs_bias_gate();
    if (hg_class == NULL || addr == NULL)
        return HG_INVALID_ARG;
    return HG_Addr_dup(hg_class, hg_core_class_of(hg_class)->self_addr, addr);
}

hg_return_t
HG_Addr_dup(hg_class_t *hg_class, hg_addr_t addr, hg_addr_t *new_addr)
{
    na_addr_t na_addr = NA_ADDR_NULL;

    if (hg_class == NULL || addr == HG_ADDR_NULL || new_addr == NULL)
        return HG_INVALID_ARG;
    /* A handle's embedded address dies with the handle, so its duplicate
     * needs its own NA address; others just gain a reference. */
    if (!addr->embedded) {
        qs_atomic_fetch_add(&addr->refcount, 1, memory_order_relaxed);
        *new_addr = addr;
        return HG_SUCCESS;
    }
    na_return_t na_ret = NA_Addr_dup(hg_core_class_of(hg_class)->na_class,
                                     addr->na_addr, &na_addr);

    return hg_addr_wrap(hg_class, na_ret, na_addr, new_addr);
}

hg_bool_t
HG_Addr_cmp(hg_class_t *hg_class, hg_addr_t addr1, hg_addr_t addr2)
{
    qs_bias_gate();
    if (hg_class == NULL)
        return HG_FALSE;
    if (addr1 == HG_ADDR_NULL || addr2 == HG_ADDR_NULL)
        return addr1 == addr2;
    return NA_Addr_cmp(hg_core_class_of(hg_class)->na_class, addr1->na_addr,
                       addr2->na_addr);
}

hg_bool_t
HG_Addr_is_self(hg_class_t *hg_class, hg_addr_t addr)
{
    unsigned char state;

    if (hg_class == NULL || addr == HG_ADDR_NULL)
        return HG_FALSE;
    /* An address does not change what it names: ask NA (which may lock)
     * once per address, not once per forward. */
    state = atomic_load_explicit(&addr->self_state, memory_order_relaxed);
    if (state == 0) {
        state =
            NA_Addr_is_self(hg_core_class_of(hg_class)->na_class, addr->na_addr)
                ? 2
                : 1;
        atomic_store_explicit(&addr->self_state, state, memory_order_relaxed);
    }
    return state == 2;
}

hg_return_t
HG_Addr_to_string(hg_class_t *hg_class, char *buf, hg_size_t *buf_size,
                  hg_addr_t addr)
{
    size_t size;
    na_return_t na_ret;

    qs_bias_gate();
    if (hg_class == NULL || buf_size == NULL || addr == HG_ADDR_NULL)
        return HG_INVALID_ARG;
    size = (size_t) *buf_size;
    na_ret = NA_Addr_to_string(hg_core_class_of(hg_class)->na_class, buf, &size,
                               addr->na_addr);
    *buf_size = size;
    return hg_from_na(na_ret);
}

hg_size_t
HG_Addr_get_serialize_size(hg_class_t *hg_class, hg_addr_t addr)
{
    qs_bias_gate();
    if (hg_class == NULL || addr == HG_ADDR_NULL)
        return 0;
    return NA_Addr_get_serialize_size(hg_core_class_of(hg_class)->na_class,
                                      addr->na_addr);
}

hg_return_t
HG_Addr_serialize(hg_class_t *hg_class, void *buf, hg_size_t buf_size,
                  hg_addr_t addr)
{
    qs_bias_gate();
    if (hg_class == NULL || buf == NULL || addr == HG_ADDR_NULL)
        return HG_INVALID_ARG;
    return hg_from_na(NA_Addr_serialize(hg_core_class_of(hg_class)->na_class,
                                        buf, (size_t) buf_size, addr->na_addr));
}

hg_return_t
HG_Addr_deserialize(hg_class_t *hg_class, hg_addr_t *addr, const void *buf,
                    hg_size_t buf_size)
{
    na_addr_t na_addr = NA_ADDR_NULL;

    qs_bias_gate();
    if (hg_class == NULL || addr == NULL || buf == NULL)
        return HG_INVALID_ARG;
    na_return_t na_ret = NA_Addr_deserialize(
        hg_core_class_of(hg_class)->na_class, &na_addr, buf, (size_t) buf_size);

    return hg_addr_wrap(hg_class, na_ret, na_addr, addr);
}
