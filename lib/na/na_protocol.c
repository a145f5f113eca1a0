/*
 * NA_Get_protocol_info(): which class+protocol pairs this build serves,
 * the poll helpers Mercury 2.4 still exports beside NA_Poll()
 * (NA_Poll_try_wait(), the deprecated NA_Progress()), and
 * NA_Diag_dump_counters() over the process-wide counts of na.c.
 *
 * The list is what each plugin of the static table accepts, asked through
 * its check_protocol op for every protocol name a plugin here knows; a
 * plugin absent from the build is absent from the list. The fabric is not
 * probed (a listed protocol may still fail to initialize where its
 * provider or device is missing), and device_name is NULL: no plugin here
 * chooses among devices.
 */
#include "na/na_internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/qs_bias.h"

/* Every protocol name some plugin of this library accepts, in the order
 * the list reports them. ("tcp;ofi_rxm" is an alias of ofi's "tcp".) */
static const char *const na_protocol_names[] = {
    "sim", "sm", "tcp", "sockets", "shm", "verbs",
};

static void
na_protocol_info_free_one(struct na_protocol_info *info)
{
    free(info->class_name);
    free(info->protocol_name);
    free(info->device_name);
    free(info);
}

void
NA_Free_protocol_info(struct na_protocol_info *na_protocol_info)
{
    while (na_protocol_info != NULL) {
        struct na_protocol_info *next = na_protocol_info->next;

        na_protocol_info_free_one(na_protocol_info);
        na_protocol_info = next;
    }
}

/* Append one entry at *tail; NA_NOMEM leaves the list as it was. */
static na_return_t
na_protocol_info_append(struct na_protocol_info ***tail, const char *class_name,
                        const char *protocol_name)
{
    struct na_protocol_info *info = calloc(1, sizeof(*info));

    if (info == NULL)
        return NA_NOMEM;
    info->class_name = strdup(class_name);
    info->protocol_name = strdup(protocol_name);
    if (info->class_name == NULL || info->protocol_name == NULL) {
        na_protocol_info_free_one(info);
        return NA_NOMEM;
    }
    **tail = info;
    *tail = &info->next;
    return NA_SUCCESS;
}

na_return_t
NA_Get_protocol_info(const char *info_string,
                     struct na_protocol_info **na_protocol_info_p)
{
    char class_name[256] = "", protocol_name[256] = "", host_name[256];
    struct na_protocol_info *list = NULL, **tail = &list;
    na_return_t ret;

    if (na_protocol_info_p == NULL)
        return NA_INVALID_ARG;
    /* "<protocol>" or "<class+protocol>" (an address part is ignored). */
    if (info_string != NULL) {
        ret = NA_Info_string_parse(info_string, class_name, protocol_name,
                                   host_name, sizeof(class_name));
        if (ret != NA_SUCCESS) {
            qs_log("na", QS_LOG_ERROR,
                   "NA_Get_protocol_info: cannot parse \"%s\"", info_string);
            return ret;
        }
    }
    for (size_t i = 0; na_plugin_table[i] != NULL; i++) {
        const struct na_class_ops *ops = na_plugin_table[i];

        if (class_name[0] != '\0' && strcmp(class_name, ops->class_name) != 0)
            continue;
        for (size_t p = 0;
             p < sizeof(na_protocol_names) / sizeof(na_protocol_names[0]);
             p++) {
            const char *name = na_protocol_names[p];

            if (protocol_name[0] != '\0' && strcmp(protocol_name, name) != 0)
                continue;
            if (!ops->check_protocol(name))
                continue;
            ret = na_protocol_info_append(&tail, ops->class_name, name);
            if (ret != NA_SUCCESS) {
                NA_Free_protocol_info(list);
                return ret;
            }
        }
    }
    /* Nothing matching is not an error: the list is empty, as in
     * Mercury. */
    *na_protocol_info_p = list;
    return NA_SUCCESS;
}

bool
NA_Poll_try_wait(na_class_t *na_class, na_context_t *context)
{
    qs_bias_gate();
    if (na_class == NULL || context == NULL || context->na_class != na_class)
        return false;
    /* Completions waiting for NA_Trigger() are work to do now: blocking
     * on the descriptor would wait for the next one instead. */
    if (NA_Context_get_completion_count(context) != 0)
        return false;
    return na_class->ops->context->poll_try_wait == NULL ||
           na_class->ops->context->poll_try_wait(na_class, context);
}

na_return_t
NA_Progress(na_class_t *na_class, na_context_t *context,
            unsigned int timeout_ms)
{
    return NA_Poll_wait(na_class, context, timeout_ms, NULL);
}

struct na_diag_counters na_diag;

/* One line at the "min_debug" level of the "na" subsystem, as Mercury
 * writes its NA counters: nothing appears at the default level. */
void
NA_Diag_dump_counters(void)
{
    qs_log("na", QS_LOG_MIN_DEBUG,
           "diag: classes %lld, contexts %lld, callbacks triggered %lld",
           (long long) atomic_load(&na_diag.classes),
           (long long) atomic_load(&na_diag.contexts),
           (long long) atomic_load(&na_diag.triggered));
}

/* No plugin here exposes multi-receive buffers through NA (ofi uses them
 * inside the plugin), as NA_Has_opt_feature(NA_OPT_MULTI_RECV) says: the
 * call is refused the way Mercury's plugins without the feature refuse
 * it, after the checks every post gets. */
na_return_t
NA_Msg_multi_recv_unexpected(na_class_t *na_class, na_context_t *context,
                             na_cb_t callback, void *arg, void *buf,
                             size_t buf_size, void *plugin_data,
                             na_op_id_t *op_id)
{
    (void) callback;
    (void) arg;
    (void) plugin_data;
    if (na_class == NULL || context == NULL || context->na_class != na_class ||
        buf == NULL || buf_size == 0 || op_id == NULL)
        return NA_INVALID_ARG;
    qs_log("na", QS_LOG_ERROR,
           "NA_Msg_multi_recv_unexpected: no multi-receive support in the "
           "\"%s\" plugin (NA_Has_opt_feature(NA_OPT_MULTI_RECV) is false)",
           na_class->ops->class_name);
    return NA_OPNOTSUPPORTED;
}
