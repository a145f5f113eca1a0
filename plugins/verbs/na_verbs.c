/*
 * The verbs plugin: NA over rdma-core (libibverbs + librdmacm).
 *
 * Info string "verbs://[device/]ip[:port]". The class binds a librdmacm id
 * to ip:port (port 0 picks a free one), which selects the RDMA device that
 * owns the address and is the class's identity on the wire. Connections
 * are reliable-connected queue pairs set up on first use of an address.
 * This file holds the ops table and the class and context lifecycle.
 */
#include "na_verbs_internal.h"

#include <stdlib.h>
#include <string.h>

static bool
na_verbs_check_protocol(const char *protocol_name)
{
    return protocol_name != NULL && strcmp(protocol_name, "verbs") == 0;
}

/* Payload limits from na_init_info, or the defaults. */
static na_return_t
na_verbs_limits(struct na_verbs_class *cls, const struct na_init_info *ii)
{
    cls->max_unexpected = ii->max_unexpected_size ? ii->max_unexpected_size
                                                  : NA_VERBS_DEFAULT_MSG_SIZE;
    cls->max_expected = ii->max_expected_size ? ii->max_expected_size
                                              : NA_VERBS_DEFAULT_MSG_SIZE;
    if (cls->max_unexpected > NA_VERBS_MAX_MSG_SIZE ||
        cls->max_expected > NA_VERBS_MAX_MSG_SIZE) {
        NA_VERBS_LOG("message size limit above %d bytes is not supported",
                     NA_VERBS_MAX_MSG_SIZE);
        return NA_OPNOTSUPPORTED;
    }
    cls->max_payload = cls->max_unexpected > cls->max_expected
                           ? cls->max_unexpected
                           : cls->max_expected;
    return NA_SUCCESS;
}

/* Options this plugin cannot honour fail initialization, as the contract
 * asks, instead of being ignored. */
static na_return_t
na_verbs_check_options(const struct na_init_info *ii)
{
    if (ii->auth_key != NULL) {
        NA_VERBS_LOG("auth_key is not supported by the verbs plugin");
        return NA_OPNOTSUPPORTED;
    }
    if (ii->request_mem_device) {
        NA_VERBS_LOG("device memory is not supported by the verbs plugin");
        return NA_OPNOTSUPPORTED;
    }
    if (ii->ip_subnet != NULL) {
        NA_VERBS_LOG("ip_subnet is not supported: give the address in the "
                     "info string (verbs://[device/]ip[:port])");
        return NA_OPNOTSUPPORTED;
    }
    return NA_SUCCESS;
}

static na_return_t
na_verbs_initialize(na_class_t *na_class, const struct na_info *info,
                    bool listen)
{
    struct na_verbs_addr_parts parts;
    struct na_verbs_class *cls;
    na_return_t ret;

    if (na_verbs_addr_parse(info->host_name, &parts) != NA_SUCCESS) {
        NA_VERBS_LOG("bad host \"%s\": expected [device/]ip[:port] with a "
                     "dotted IPv4 address",
                     info->host_name);
        return NA_INVALID_ARG;
    }
    ret = na_verbs_check_options(&info->init_info);
    if (ret != NA_SUCCESS)
        return ret;

    cls = calloc(1, sizeof(*cls));
    if (cls == NULL)
        return NA_NOMEM;
    pthread_mutex_init(&cls->lock, NULL);
    cls->epoll_fd = -1;
    cls->wake_fd = -1;
    LIST_INIT(&cls->peers);
    LIST_INIT(&cls->conns);
    LIST_INIT(&cls->contexts);
    LIST_INIT(&cls->mem_regs);

    ret = na_verbs_limits(cls, &info->init_info);
    if (ret != NA_SUCCESS)
        goto free_cls;
    ret = na_verbs_device_open(cls, parts.device, parts.has_ip, parts.ip,
                               parts.has_port ? parts.port : 0, listen);
    if (ret != NA_SUCCESS)
        goto free_cls;
    ret = na_verbs_progress_init(cls);
    if (ret != NA_SUCCESS)
        goto close_device;
    pthread_mutex_lock(&cls->lock);
    ret = na_verbs_addr_get(cls, cls->ip, cls->port, &cls->self);
    if (ret == NA_SUCCESS)
        cls->self->self = true;
    pthread_mutex_unlock(&cls->lock);
    if (ret != NA_SUCCESS)
        goto fini_progress;

    na_class->plugin_class = cls;
    /* The header carries a full 32-bit tag. */
    na_plugin_set_msg_limits(na_class, cls->max_unexpected, cls->max_expected,
                             UINT32_MAX);
    return NA_SUCCESS;

fini_progress:
    na_verbs_progress_fini(cls);
close_device:
    na_verbs_device_close(cls);
free_cls:
    pthread_mutex_destroy(&cls->lock);
    free(cls);
    return ret;
}

static na_return_t
na_verbs_finalize(na_class_t *na_class)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);

    if (cls == NULL)
        return NA_SUCCESS;
    /* No context remains, so no operation is pending; what is left are
     * connections with their internal receive buffers and addresses the
     * user did not free. */
    na_verbs_device_close(cls);
    na_verbs_progress_fini(cls);
    pthread_mutex_lock(&cls->lock);
    na_verbs_addr_table_clear(cls);
    pthread_mutex_unlock(&cls->lock);
    pthread_mutex_destroy(&cls->lock);
    free(cls);
    na_class->plugin_class = NULL;
    return NA_SUCCESS;
}

static na_return_t
na_verbs_context_create(na_class_t *na_class, na_context_t *context, uint8_t id,
                        void *plugin_context)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);
    struct na_verbs_context *ctx = plugin_context, *other;
    na_return_t ret = NA_SUCCESS;

    ctx->context = context;
    ctx->id = id;
    na_op_list_init(&ctx->unexpected_ops);
    na_op_list_init(&ctx->expected_ops);
    TAILQ_INIT(&ctx->unexpected_msgs);
    TAILQ_INIT(&ctx->expected_msgs);
    pthread_mutex_lock(&cls->lock);
    /* Peers address contexts by id, so two with one id are ambiguous. */
    LIST_FOREACH(other, &cls->contexts, entry)
    {
        if (other->id == id)
            ret = NA_EXIST;
    }
    if (ret == NA_SUCCESS)
        LIST_INSERT_HEAD(&cls->contexts, ctx, entry);
    pthread_mutex_unlock(&cls->lock);
    if (ret != NA_SUCCESS) {
        NA_VERBS_LOG("a context with id %u already exists", (unsigned) id);
        return ret;
    }
    return NA_SUCCESS;
}

static na_return_t
na_verbs_context_destroy(na_class_t *na_class, void *plugin_context)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);
    struct na_verbs_context *ctx = plugin_context;
    unsigned int pending;

    pthread_mutex_lock(&cls->lock);
    pending = ctx->pending;
    if (pending == 0) {
        /* Messages no receive claimed die with their context. */
        LIST_REMOVE(ctx, entry);
        na_verbs_msg_lists_clear(ctx);
    }
    pthread_mutex_unlock(&cls->lock);
    if (pending > 0) {
        NA_VERBS_LOG("context still has %u operation(s) pending", pending);
        return NA_BUSY;
    }
    return NA_SUCCESS;
}

/* Message payloads are copied into the connection's registered slots, so
 * message buffers need no registration and plugin_data stays NULL. */
static void *
na_verbs_msg_buf_alloc(na_class_t *na_class, size_t buf_size,
                       unsigned long flags, void **plugin_data)
{
    (void) na_class;
    (void) flags;
    *plugin_data = NULL;
    return calloc(1, buf_size ? buf_size : 1);
}

static void
na_verbs_msg_buf_free(na_class_t *na_class, void *buf, void *plugin_data)
{
    (void) na_class;
    (void) plugin_data;
    free(buf);
}

const struct na_class_ops na_verbs_class_ops = {
    .class_name = NA_VERBS_CLASS_NAME,
    .check_protocol = na_verbs_check_protocol,
    .initialize = na_verbs_initialize,
    .finalize = na_verbs_finalize,
    .context_size = sizeof(struct na_verbs_context),
    .context_create = na_verbs_context_create,
    .context_destroy = na_verbs_context_destroy,
    .op_size = sizeof(struct na_op_id),
    .addr_lookup = na_verbs_addr_lookup,
    .addr_free = na_verbs_addr_free,
    .addr_self = na_verbs_addr_self,
    .addr_dup = na_verbs_addr_dup,
    .addr_cmp = na_verbs_addr_cmp,
    .addr_is_self = na_verbs_addr_is_self,
    .addr_to_string = na_verbs_addr_to_string,
    .addr_get_serialize_size = na_verbs_addr_get_serialize_size,
    .addr_serialize = na_verbs_addr_serialize,
    .addr_deserialize = na_verbs_addr_deserialize,
    .msg_buf_alloc = na_verbs_msg_buf_alloc,
    .msg_buf_free = na_verbs_msg_buf_free,
    .msg_send_unexpected = na_verbs_msg_send,
    .msg_recv_unexpected = na_verbs_msg_recv_unexpected,
    .msg_send_expected = na_verbs_msg_send,
    .msg_recv_expected = na_verbs_msg_recv_expected,
    .mem_handle_create = na_verbs_mem_handle_create,
    .mem_handle_create_segments =
        na_plugin_mem_handle_create_segments_opnotsupported,
    .mem_handle_free = na_verbs_mem_handle_free,
    .mem_register = na_verbs_mem_register,
    .mem_deregister = na_verbs_mem_deregister,
    .mem_handle_get_serialize_size = na_verbs_mem_handle_get_serialize_size,
    .mem_handle_serialize = na_verbs_mem_handle_serialize,
    .mem_handle_deserialize = na_verbs_mem_handle_deserialize,
    .put = na_verbs_rma,
    .get = na_verbs_rma,
    .poll_get_fd = na_verbs_poll_get_fd,
    .poll = na_verbs_poll,
    .poll_wait = na_verbs_poll_wait,
    .cancel = na_verbs_cancel,
    .clock_now = na_plugin_clock_now_monotonic,
};
