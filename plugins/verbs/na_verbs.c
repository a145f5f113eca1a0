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

const struct na_class_ops na_verbs_class_ops = {
    .class_name = NA_VERBS_CLASS_NAME,
    .check_protocol = na_verbs_check_protocol,
    .initialize = na_verbs_initialize,
    .finalize = na_verbs_finalize,
    .context = &na_verbs_context_ops,
    .addr = &na_verbs_addr_ops,
    .msg = &na_verbs_msg_ops,
    .mem = &na_verbs_mem_ops,
};
