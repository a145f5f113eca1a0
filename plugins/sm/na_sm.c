/*
 * The shared-memory NA plugin ("na+sm", "sm", "sm://<name>"): its ops
 * table, class and context life cycle, operation ids and limits. See
 * na_sm_internal.h for the design and docs/plugin-sm.md for its use.
 */
#include "na_sm_internal.h"
#include "na_sm_auto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool
na_sm_check_protocol(const char *protocol_name)
{
    return strcmp(protocol_name, "sm") == 0;
}

/* Refuse the init_info fields this plugin cannot honour. */
static na_return_t
na_sm_check_init_info(const struct na_init_info *ii)
{
    const char *field = NULL;

    if (ii->auth_key != NULL)
        field = "auth_key";
    else if (ii->request_mem_device)
        field = "request_mem_device";
    else if (ii->ip_subnet != NULL)
        field = "ip_subnet";
    else if (ii->max_unexpected_size > NA_SM_MAX_MSG_SIZE ||
             ii->max_expected_size > NA_SM_MAX_MSG_SIZE)
        field = "max_unexpected_size/max_expected_size above 131072";
    if (field == NULL)
        return NA_SUCCESS;
    na_plugin_log_error("sm", "init option %s is not supported", field);
    return NA_OPNOTSUPPORTED;
}

static void
na_sm_class_free(struct na_sm_class *cls)
{
    struct na_sm_conn *c;

    while ((c = LIST_FIRST(&cls->conns)) != NULL)
        na_sm_conn_destroy(c);
    /* Addresses the user did not free die with the class. */
    na_plugin_addr_list_clear(&cls->addrs);
    if (cls->listen_sock >= 0)
        close(cls->listen_sock);
    na_plugin_wait_fini(&cls->wait);
    na_sm_regs_destroy(cls);
    pthread_mutex_destroy(&cls->lock);
    free(cls);
}

static na_return_t
na_sm_initialize(na_class_t *na_class, const struct na_info *info, bool listen)
{
    static atomic_uint counter;
    const struct na_init_info *ii = &info->init_info;
    struct na_sm_class *cls;
    na_return_t ret;

    (void) listen; /* every class listens: peers answer over new links */
    ret = na_sm_check_init_info(ii);
    if (ret != NA_SUCCESS)
        return ret;
    cls = calloc(1, sizeof(*cls));
    if (cls == NULL)
        return NA_NOMEM;
    pthread_mutex_init(&cls->lock, NULL);
    LIST_INIT(&cls->addrs);
    LIST_INIT(&cls->conns);
    cls->listen_sock = cls->wait.wake_fd = cls->wait.epfd = cls->reg_fd = -1;
    if (info->host_name[0] != '\0') {
        if (!na_sm_name_valid(info->host_name, strlen(info->host_name))) {
            na_plugin_log_error("sm",
                                "bad name \"%s\": 1 to %d of [A-Za-z0-9._:-]",
                                info->host_name, NA_SM_NAME_MAX);
            ret = NA_INVALID_ARG;
            goto fail;
        }
        strcpy(cls->name, info->host_name);
    } else {
        snprintf(cls->name, sizeof(cls->name), "%ld-%u", (long) getpid(),
                 atomic_fetch_add(&counter, 1));
    }
    cls->max_unexp_size = ii->max_unexpected_size ? ii->max_unexpected_size
                                                  : NA_SM_DEFAULT_MSG_SIZE;
    cls->max_exp_size =
        ii->max_expected_size ? ii->max_expected_size : NA_SM_DEFAULT_MSG_SIZE;
    cls->rma_mode = na_sm_rma_mode_from_env();
    cls->assist_on = na_sm_assist_enabled_from_env();
    cls->assist_test = na_sm_assist_test_from_env();

    ret =
        na_plugin_wait_init(&cls->wait, (ii->progress_mode & NA_NO_BLOCK) != 0);
    if (ret != NA_SUCCESS)
        goto fail;
    ret = na_sm_regs_create(cls);
    if (ret != NA_SUCCESS)
        goto fail;
    ret = na_sm_listen(cls);
    if (ret != NA_SUCCESS)
        goto fail;
    cls->self = na_sm_addr_intern(cls, cls->name);
    if (cls->self == NULL) {
        ret = NA_NOMEM;
        goto fail;
    }
    na_class->plugin_class = cls;
    na_plugin_set_msg_limits(na_class, cls->max_unexp_size, cls->max_exp_size,
                             UINT32_MAX);
    return NA_SUCCESS;

fail:
    na_sm_class_free(cls);
    return ret;
}

static na_return_t
na_sm_finalize(na_class_t *na_class)
{
    struct na_sm_class *cls = na_sm_class(na_class);

    if (cls == NULL)
        return NA_SUCCESS;
    na_sm_class_free(cls);
    na_class->plugin_class = NULL;
    return NA_SUCCESS;
}

const struct na_class_ops na_sm_class_ops = {
    .class_name = NA_SM_CLASS_NAME,
    .check_protocol = na_sm_check_protocol,
    .initialize = na_sm_initialize,
    .finalize = na_sm_finalize,
    .auto_initialize = na_sm_auto_initialize,
    .context = &na_sm_context_ops,
    .addr = &na_sm_addr_ops,
    .msg = &na_sm_msg_ops,
    .mem = &na_sm_mem_ops,
};
