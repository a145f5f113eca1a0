/*
 * The static plugin table. Order matters: an info string with no class
 * picks the first plugin that accepts its protocol.
 */
#include "na/na_internal.h"

#include "na_config.h"

extern const struct na_class_ops na_sim_class_ops;
#if QS_PLUGIN_SM_ENABLED
extern const struct na_class_ops na_sm_class_ops;
#endif
#if QS_PLUGIN_TCP_ENABLED
extern const struct na_class_ops na_tcp_class_ops;
#endif
#if QS_PLUGIN_OFI_ENABLED
extern const struct na_class_ops na_ofi_class_ops;
#endif
#if QS_PLUGIN_VERBS_ENABLED
extern const struct na_class_ops na_verbs_class_ops;
#endif

const struct na_class_ops *const na_plugin_table[] = {
    &na_sim_class_ops,
#if QS_PLUGIN_SM_ENABLED
    &na_sm_class_ops,
#endif
#if QS_PLUGIN_TCP_ENABLED
    &na_tcp_class_ops, /* before ofi: a bare "tcp" is the native plugin */
#endif
#if QS_PLUGIN_OFI_ENABLED
    &na_ofi_class_ops,
#endif
#if QS_PLUGIN_VERBS_ENABLED
    &na_verbs_class_ops,
#endif
    NULL,
};

const char *
na_plugin_ops_missing(const struct na_class_ops *ops)
{
    const struct na_context_ops *c = ops->context;
    const struct na_addr_ops *a = ops->addr;
    const struct na_msg_ops *m = ops->msg;
    const struct na_mem_ops *r = ops->mem;

    if (c == NULL)
        return "context table";
    if (a == NULL)
        return "addr table";
    if (m == NULL)
        return "msg table";
    if (r == NULL)
        return "mem table";
    if (a->codec == NULL)
        return "addr->codec table";

    /* The required ops, in the order of their tables (na_plugin.h). */
    const struct {
        const char *name;
        bool present;
    } need[] = {
        {"class_name", ops->class_name != NULL},
        {"check_protocol", ops->check_protocol != NULL},
        {"initialize", ops->initialize != NULL},
        {"finalize", ops->finalize != NULL},
        {"context->create", c->create != NULL},
        {"context->destroy", c->destroy != NULL},
        {"context->poll_get_fd", c->poll_get_fd != NULL},
        {"context->poll", c->poll != NULL},
        {"context->poll_wait", c->poll_wait != NULL},
        {"context->cancel", c->cancel != NULL},
        {"addr->lookup", a->lookup != NULL},
        {"addr->free", a->free != NULL},
        {"addr->self", a->self != NULL},
        {"addr->dup", a->dup != NULL},
        {"addr->is_self", a->is_self != NULL},
        {"addr->codec->to_string", a->codec->to_string != NULL},
        {"addr->codec->serialize", a->codec->serialize != NULL},
        {"addr->codec->deserialize", a->codec->deserialize != NULL},
        {"msg->op_size", m->op_size >= sizeof(struct na_op_base)},
        {"msg->buf_free (set with buf_alloc)",
         (m->buf_alloc == NULL) == (m->buf_free == NULL)},
        {"msg->send", m->send != NULL},
        {"msg->recv_unexpected", m->recv_unexpected != NULL},
        {"msg->recv_expected", m->recv_expected != NULL},
        {"mem->handle_create", r->handle_create != NULL},
        {"mem->handle_free", r->handle_free != NULL},
        {"mem->mem_register", r->mem_register != NULL},
        {"mem->mem_deregister", r->mem_deregister != NULL},
        {"mem->handle_serialize", r->handle_serialize != NULL},
        {"mem->handle_deserialize", r->handle_deserialize != NULL},
        {"mem->rma", r->rma != NULL},
    };

    for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
        if (!need[i].present)
            return need[i].name;
    return NULL;
}
