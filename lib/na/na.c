/*
 * NA core: classes, contexts and their completion queues, the argument
 * checks in front of every plugin op, and the life of every operation id
 * (struct na_op_base: posted, started, completed, triggered; cancel).
 * Plugins never see a NULL class, context or op id, nor an op id of
 * another class or one still in use; what an operation does on the wire
 * is theirs.
 */
#include "na/na_internal.h"
#include "na/na_clock.h"
#include "na/na_hint.h"
#include "na/na_plugin_util.h"
#include "util/qs_alloc.h"
#include "util/qs_atomic.h"
#include "util/qs_lock.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

na_class_t *
NA_Initialize(const char *info_string, bool listen)
{
    return NA_Initialize_opt2(info_string, listen, 0, NULL);
}

na_class_t *
NA_Initialize_opt(const char *info_string, bool listen,
                  const struct na_init_info *na_init_info)
{
    /* 4.0 is the last version whose structure was not versioned. */
    return NA_Initialize_opt2(info_string, listen, NA_VERSION(4, 0),
                              na_init_info);
}

void
NA_Version_get(unsigned int *major, unsigned int *minor, unsigned int *patch)
{
    if (major != NULL)
        *major = NA_VERSION_MAJOR;
    if (minor != NULL)
        *minor = NA_VERSION_MINOR;
    if (patch != NULL)
        *patch = NA_VERSION_PATCH;
}

void
NA_Cleanup(void)
{
    for (size_t i = 0; na_plugin_table[i] != NULL; i++)
        if (na_plugin_table[i]->cleanup != NULL)
            na_plugin_table[i]->cleanup();
}

/* The caller's structure read as the version it was written for. */
static bool
na_init_info_from_version(struct na_init_info *out, unsigned int version,
                          const struct na_init_info *in)
{
    *out = NA_INIT_INFO_INITIALIZER;
    if (in == NULL)
        return true;
    if (version == 0 || NA_MAJOR(version) > NA_VERSION_MAJOR) {
        qs_log("na", QS_LOG_ERROR,
               "NA_Initialize_opt2: API version %u.%u is not one this "
               "library knows (use NA_VERSION(major, minor), at most %u.x)",
               NA_MAJOR(version), NA_MINOR(version), NA_VERSION_MAJOR);
        return false;
    }
    *out = *in;
    if (NA_VERSION_LT(version, NA_VERSION(5, 0))) {
        out->traffic_class = NA_TC_UNSPEC;
        out->multi_recv_op_max = 0;
    }
    /* Every plugin here picks its own address format: IPv4 where it has
     * IP addresses. */
    if (out->addr_format != NA_ADDR_UNSPEC &&
        out->addr_format != NA_ADDR_IPV4) {
        qs_log("na", QS_LOG_ERROR,
               "na_init_info.addr_format %d is not supported (only "
               "NA_ADDR_UNSPEC and NA_ADDR_IPV4)",
               (int) out->addr_format);
        return false;
    }
    if ((unsigned) out->traffic_class > NA_TC_NETWORK_CTRL) {
        qs_log("na", QS_LOG_ERROR,
               "na_init_info.traffic_class %d is not an enum "
               "na_traffic_class value",
               (int) out->traffic_class);
        return false;
    }
    return true;
}

na_class_t *
NA_Initialize_opt2(const char *info_string, bool listen, unsigned int version,
                   const struct na_init_info *na_init_info)
{
    struct na_info *info = NULL;
    na_class_t *na_class = NULL;
    const struct na_class_ops *ops;
    const char *missing;
    na_return_t ret;

    if (info_string == NULL) {
        qs_log("na", QS_LOG_ERROR, "NA_Initialize: NULL info string");
        return NULL;
    }
    info_string = na_info_override(info_string);
    info = calloc(1, sizeof(*info));
    if (info == NULL)
        return NULL;
    ret =
        NA_Info_string_parse(info_string, info->class_name, info->protocol_name,
                             info->host_name, sizeof(info->host_name));
    if (ret != NA_SUCCESS) {
        qs_log("na", QS_LOG_ERROR,
               "malformed info string \"%s\" (%s): expected "
               "[class+]protocol[://host]",
               info_string, NA_Error_to_string(ret));
        goto error;
    }
    if (!na_init_info_from_version(&info->init_info, version, na_init_info))
        goto error;

    ops = na_plugin_select(info);
    if (ops == NULL) {
        if (info->class_name[0] != '\0')
            qs_log("na", QS_LOG_ERROR,
                   "no plugin \"%s\" serving protocol \"%s\" in this "
                   "build (info string \"%s\")",
                   info->class_name, info->protocol_name, info_string);
        else
            qs_log("na", QS_LOG_ERROR,
                   "no plugin accepts protocol \"%s\" (info string "
                   "\"%s\")",
                   info->protocol_name, info_string);
        goto error;
    }

    missing = na_plugin_ops_missing(ops);
    if (missing != NULL) {
        qs_log("na", QS_LOG_ERROR,
               "plugin \"%s\" is refused: it lacks the op %s (info "
               "string \"%s\")",
               ops->class_name != NULL ? ops->class_name : "?", missing,
               info_string);
        goto error;
    }

    /* The native plugin knows one TCP protocol by one name. */
    if (na_protocol_is_tcp(info->protocol_name) &&
        ops->check_protocol("tcp;ofi_rxm") == false)
        strcpy(info->protocol_name, "tcp");

    na_class = qs_calloc_lines(sizeof(*na_class));
    if (na_class == NULL)
        goto error;
    na_class->ops = ops;
    na_class->listen = listen;
    na_class->protocol_name = strdup(info->protocol_name);
    if (na_class->protocol_name == NULL)
        goto error;
    pthread_mutex_init(&na_class->lock, NULL);
    ret = ops->initialize(na_class, info, listen);
    if (ret != NA_SUCCESS) {
        qs_log("na", QS_LOG_ERROR,
               "plugin \"%s\" could not initialize \"%s\": %s", ops->class_name,
               info_string, NA_Error_to_string(ret));
        pthread_mutex_destroy(&na_class->lock);
        goto error;
    }
    free(info);
    na_diag_count(&na_diag.classes, 1);
    return na_class;

error:
    if (na_class != NULL)
        free(na_class->protocol_name);
    qs_free_lines(na_class, sizeof(*na_class));
    free(info);
    return NULL;
}

na_return_t
NA_Finalize(na_class_t *na_class)
{
    na_return_t ret;

    qs_bias_gate();
    if (na_class == NULL)
        return NA_SUCCESS;
    pthread_mutex_lock(&na_class->lock);
    if (na_class->context_count > 0) {
        pthread_mutex_unlock(&na_class->lock);
        qs_log("na", QS_LOG_ERROR, "NA_Finalize: %u context(s) still exist",
               na_class->context_count);
        return NA_BUSY;
    }
    pthread_mutex_unlock(&na_class->lock);
    ret = na_class->ops->finalize(na_class);
    if (ret != NA_SUCCESS)
        return ret;
    pthread_mutex_destroy(&na_class->lock);
    free(na_class->protocol_name);
    na_diag_count(&na_diag.classes, -1);
    qs_free_lines(na_class, sizeof(*na_class));
    return NA_SUCCESS;
}

const char *
NA_Get_class_name(const na_class_t *na_class)
{
    return na_class ? na_class->ops->class_name : NULL;
}

const char *
NA_Get_class_protocol(const na_class_t *na_class)
{
    return na_class ? na_class->protocol_name : NULL;
}

bool
NA_Is_listening(const na_class_t *na_class)
{
    return na_class ? na_class->listen : false;
}

na_context_t *
NA_Context_create(na_class_t *na_class)
{
    return NA_Context_create_id(na_class, 0);
}

na_context_t *
NA_Context_create_id(na_class_t *na_class, uint8_t id)
{
    na_context_t *context;
    na_return_t ret = NA_NOMEM;

    qs_bias_gate();
    if (na_class == NULL)
        return NULL;
    context = qs_calloc_lines(sizeof(*context));
    if (context == NULL)
        goto fail;
    context->na_class = na_class;
    context->id = id;
    STAILQ_INIT(&context->overflow);
    pthread_mutex_init(&context->lock, NULL);
    if (na_class->ops->context->context_size > 0) {
        context->plugin_context =
            qs_calloc_lines(na_class->ops->context->context_size);
        if (context->plugin_context == NULL)
            goto free_context;
    }
    ret = na_class->ops->context->create(na_class, context, id,
                                         context->plugin_context);
    if (ret != NA_SUCCESS)
        goto free_context;
    pthread_mutex_lock(&na_class->lock);
    na_class->context_count++;
    pthread_mutex_unlock(&na_class->lock);
    na_diag_count(&na_diag.contexts, 1);
    return context;

free_context:
    qs_free_lines(context->plugin_context,
                  na_class->ops->context->context_size);
    pthread_mutex_destroy(&context->lock);
    qs_free_lines(context, sizeof(*context));
fail:
    qs_log("na", QS_LOG_ERROR, "context creation failed: %s",
           NA_Error_to_string(ret));
    return NULL;
}

na_return_t
NA_Context_destroy(na_class_t *na_class, na_context_t *context)
{
    na_return_t ret;

    qs_bias_gate();
    if (na_class == NULL || context == NULL || context->na_class != na_class)
        return NA_INVALID_ARG;
    if (atomic_load(&context->count) > 0) {
        qs_log("na", QS_LOG_ERROR,
               "NA_Context_destroy: %u completion(s) not triggered",
               atomic_load(&context->count));
        return NA_BUSY;
    }
    ret = na_class->ops->context->destroy(na_class, context->plugin_context);
    if (ret != NA_SUCCESS)
        return ret;
    pthread_mutex_lock(&na_class->lock);
    na_class->context_count--;
    pthread_mutex_unlock(&na_class->lock);
    pthread_mutex_destroy(&context->lock);
    na_diag_count(&na_diag.triggered, context->triggered);
    na_diag_count(&na_diag.contexts, -1);
    qs_free_lines(context->plugin_context,
                  na_class->ops->context->context_size);
    qs_free_lines(context, sizeof(*context));
    return NA_SUCCESS;
}

na_op_id_t *
NA_Op_create(na_class_t *na_class, unsigned long flags)
{
    na_op_id_t *op_id;
    struct na_op_base *base;

    qs_bias_gate();
    if (na_class == NULL)
        return NULL;
    /* On a cache line of its own: the base's completion fields (info,
     * callback, state, queue entry) then take two lines, not three, and an
     * op shares no line with another object, which matters when thousands
     * are in flight and each completion's first touch misses. */
    op_id = qs_calloc_lines(na_class->ops->msg->op_size);
    if (op_id == NULL)
        return NULL;
    base = na_op_base(op_id);
    base->na_class = na_class;
    atomic_init(&base->state, NA_OP_IDLE);
    if (na_class->ops->msg->op_init != NULL &&
        na_class->ops->msg->op_init(na_class, op_id, flags) != NA_SUCCESS) {
        qs_free_lines(op_id, na_class->ops->msg->op_size);
        return NULL;
    }
    return op_id;
}

void
na_op_set_hints(na_op_id_t *op_id, const void *a, const void *b)
{
    if (op_id != NULL) {
        na_op_base(op_id)->hint[0] = a;
        na_op_base(op_id)->hint[1] = b;
    }
}

na_return_t
NA_Op_destroy(na_class_t *na_class, na_op_id_t *op_id)
{
    qs_bias_gate();
    if (na_class == NULL)
        return NA_INVALID_ARG;
    if (op_id == NULL)
        return NA_SUCCESS;
    if (na_op_base(op_id)->na_class != na_class)
        return NA_INVALID_ARG;
    if (na_op_state(na_op_base(op_id)) != NA_OP_IDLE) {
        qs_log("na", QS_LOG_ERROR, "NA_Op_destroy: operation still pending");
        return NA_BUSY;
    }
    if (na_class->ops->msg->op_fini != NULL)
        na_class->ops->msg->op_fini(na_class, op_id);
    qs_free_lines(op_id, na_class->ops->msg->op_size);
    return NA_SUCCESS;
}

/* Addresses. */

na_return_t
NA_Addr_lookup(na_class_t *na_class, const char *name, na_addr_t *addr)
{
    qs_bias_gate();
    if (na_class == NULL || name == NULL || addr == NULL)
        return NA_INVALID_ARG;
    if (na_addr_lookup_check(na_class, name) != NA_SUCCESS)
        return NA_PROTONOSUPPORT;
    return na_class->ops->addr->lookup(na_class, name, addr);
}

void
NA_Addr_free(na_class_t *na_class, na_addr_t addr)
{
    qs_bias_gate();
    if (na_class != NULL && addr != NA_ADDR_NULL)
        na_class->ops->addr->free(na_class, addr);
}

na_return_t
NA_Addr_set_remove(na_class_t *na_class, na_addr_t addr)
{
    qs_bias_gate();
    if (na_class == NULL || addr == NA_ADDR_NULL)
        return NA_INVALID_ARG;
    if (na_class->ops->addr->is_self(na_class, addr))
        return NA_INVALID_ARG;
    if (na_class->ops->addr->set_remove == NULL)
        return NA_SUCCESS;
    return na_class->ops->addr->set_remove(na_class, addr);
}

na_return_t
NA_Addr_self(na_class_t *na_class, na_addr_t *addr)
{
    qs_bias_gate();
    if (na_class == NULL || addr == NULL)
        return NA_INVALID_ARG;
    return na_class->ops->addr->self(na_class, addr);
}

na_return_t
NA_Addr_dup(na_class_t *na_class, na_addr_t addr, na_addr_t *new_addr)
{
    qs_bias_gate();
    if (na_class == NULL || addr == NA_ADDR_NULL || new_addr == NULL)
        return NA_INVALID_ARG;
    return na_class->ops->addr->dup(na_class, addr, new_addr);
}

bool
NA_Addr_cmp(na_class_t *na_class, na_addr_t addr1, na_addr_t addr2)
{
    qs_bias_gate();
    if (na_class == NULL)
        return false;
    if (addr1 == NA_ADDR_NULL || addr2 == NA_ADDR_NULL)
        return addr1 == addr2;
    if (na_class->ops->addr->cmp == NULL)
        return addr1 == addr2; /* interned: one object per peer */
    return na_class->ops->addr->cmp(na_class, addr1, addr2);
}

bool
NA_Addr_is_self(na_class_t *na_class, na_addr_t addr)
{
    qs_bias_gate();
    if (na_class == NULL || addr == NA_ADDR_NULL)
        return false;
    return na_class->ops->addr->is_self(na_class, addr);
}

na_return_t
NA_Addr_to_string(na_class_t *na_class, char *buf, size_t *buf_size,
                  na_addr_t addr)
{
    qs_bias_gate();
    if (na_class == NULL || buf_size == NULL || addr == NA_ADDR_NULL)
        return NA_INVALID_ARG;
    return na_class->ops->addr->codec->to_string(na_class, buf, buf_size, addr);
}

size_t
NA_Addr_get_serialize_size(na_class_t *na_class, na_addr_t addr)
{
    size_t size = 0;

    qs_bias_gate();
    if (na_class == NULL || addr == NA_ADDR_NULL)
        return 0;
    (void) na_class->ops->addr->codec->serialize(na_class, NULL, &size, addr);
    return size;
}

na_return_t
NA_Addr_serialize(na_class_t *na_class, void *buf, size_t buf_size,
                  na_addr_t addr)
{
    qs_bias_gate();
    if (na_class == NULL || buf == NULL || addr == NA_ADDR_NULL)
        return NA_INVALID_ARG;
    return na_class->ops->addr->codec->serialize(na_class, buf, &buf_size,
                                                 addr);
}

na_return_t
NA_Addr_deserialize(na_class_t *na_class, na_addr_t *addr, const void *buf,
                    size_t buf_size)
{
    qs_bias_gate();
    if (na_class == NULL || addr == NULL || (buf == NULL && buf_size > 0))
        return NA_INVALID_ARG;
    return na_class->ops->addr->codec->deserialize(na_class, addr, buf,
                                                   buf_size);
}

/* Messages. */

size_t
NA_Msg_get_max_unexpected_size(const na_class_t *na_class)
{
    return na_class ? na_class->max_unexpected_size : 0;
}

size_t
NA_Msg_get_max_expected_size(const na_class_t *na_class)
{
    return na_class ? na_class->max_expected_size : 0;
}

na_tag_t
NA_Msg_get_max_tag(const na_class_t *na_class)
{
    return na_class ? na_class->max_tag : 0;
}

void
na_plugin_set_msg_limits(na_class_t *na_class, size_t max_unexpected_size,
                         size_t max_expected_size, na_tag_t max_tag)
{
    na_class->max_unexpected_size = max_unexpected_size;
    na_class->max_expected_size = max_expected_size;
    na_class->max_tag = max_tag;
}

void
na_plugin_set_max_segments(na_class_t *na_class, size_t max_segments)
{
    na_class->max_segments = max_segments;
}

void
na_plugin_set_clock_approximate(na_class_t *na_class, bool approximate)
{
    atomic_store_explicit(&na_class->clock_approximate, approximate,
                          memory_order_relaxed);
}

bool
na_clock_is_approximate(na_class_t *na_class)
{
    return na_class != NULL &&
           atomic_load_explicit(&na_class->clock_approximate,
                                memory_order_relaxed);
}

bool
na_clock_is_real(na_class_t *na_class)
{
    return na_class == NULL || na_class->ops->context->clock_now == NULL;
}

void *
NA_Msg_buf_alloc(na_class_t *na_class, size_t buf_size, unsigned long flags,
                 void **plugin_data)
{
    qs_bias_gate();
    if (na_class == NULL || buf_size == 0 || plugin_data == NULL)
        return NULL;
    if (na_class->ops->msg->buf_alloc == NULL)
        return na_plugin_msg_buf_alloc(na_class, buf_size, flags, plugin_data);
    return na_class->ops->msg->buf_alloc(na_class, buf_size, flags,
                                         plugin_data);
}

na_return_t
NA_Msg_buf_free(na_class_t *na_class, void *buf, void *plugin_data)
{
    qs_bias_gate();
    if (na_class == NULL)
        return NA_INVALID_ARG;
    if (buf == NULL)
        return NA_SUCCESS;
    if (na_class->ops->msg->buf_free == NULL)
        na_plugin_msg_buf_free(na_class, buf, plugin_data);
    else
        na_class->ops->msg->buf_free(na_class, buf, plugin_data);
    return NA_SUCCESS;
}

/* Checks shared by every post and cancel: a class, a context and an op id
 * that belong together. */
static inline bool
na_post_args_ok(const na_class_t *na_class, const na_context_t *context,
                na_op_id_t *op_id)
{
    return na_class != NULL && context != NULL &&
           context->na_class == na_class && op_id != NULL &&
           na_op_base(op_id)->na_class == na_class;
}

/*
 * Every post ends here: move the op from idle to posted, hand the
 * descriptor to the plugin, and take the op back if the plugin refused it.
 * After a successful post the op is not touched: it may already have
 * completed and been reposted by another thread.
 */
static na_return_t
na_post(na_plugin_post_t op, na_class_t *na_class,
        const struct na_op_desc *desc, na_cb_t callback, void *arg,
        na_op_id_t *op_id)
{
    struct na_op_base *base = na_op_base(op_id);
    int idle = NA_OP_IDLE;
    na_return_t ret;

    if (!qs_atomic_cas_int(&base->state, &idle, NA_OP_POSTED,
                           memory_order_acquire, memory_order_relaxed))
        return NA_BUSY;
    base->context = desc->context;
    base->callback = callback;
    memset(&base->info, 0, sizeof(base->info));
    base->info.arg = arg;
    base->info.type = desc->type;
    ret = op(na_class, desc, op_id);
    if (ret != NA_SUCCESS)
        atomic_store_explicit(&base->state, NA_OP_IDLE, memory_order_release);
    return ret;
}

/* Both sends make the same checks and post through the plugin's one send
 * op; only the size limit and the kind differ. */
static na_return_t
na_msg_send(bool expected, na_class_t *na_class, na_context_t *context,
            na_cb_t callback, void *arg, const void *buf, size_t buf_size,
            void *plugin_data, na_addr_t dest_addr, uint8_t dest_id,
            na_tag_t tag, na_op_id_t *op_id)
{
    size_t max_size;

    if (!na_post_args_ok(na_class, context, op_id) ||
        (buf == NULL && buf_size > 0) || dest_addr == NA_ADDR_NULL)
        return NA_INVALID_ARG;
    max_size =
        expected ? na_class->max_expected_size : na_class->max_unexpected_size;
    if (buf_size > max_size)
        return NA_MSGSIZE;
    if (tag > na_class->max_tag)
        return NA_INVALID_ARG;
    return na_post(
        na_class->ops->msg->send, na_class,
        &(struct na_op_desc){
            .type = expected ? NA_CB_SEND_EXPECTED : NA_CB_SEND_UNEXPECTED,
            .context = context,
            .buf = (void *) (uintptr_t) buf,
            .buf_size = buf_size,
            .plugin_data = plugin_data,
            .tag = tag,
            .addr = dest_addr,
            .addr_id = dest_id,
        },
        callback, arg, op_id);
}

na_return_t
NA_Msg_send_unexpected(na_class_t *na_class, na_context_t *context,
                       na_cb_t callback, void *arg, const void *buf,
                       size_t buf_size, void *plugin_data, na_addr_t dest_addr,
                       uint8_t dest_id, na_tag_t tag, na_op_id_t *op_id)
{
    return na_msg_send(false, na_class, context, callback, arg, buf, buf_size,
                       plugin_data, dest_addr, dest_id, tag, op_id);
}

na_return_t
NA_Msg_recv_unexpected(na_class_t *na_class, na_context_t *context,
                       na_cb_t callback, void *arg, void *buf, size_t buf_size,
                       void *plugin_data, na_op_id_t *op_id)
{
    if (!na_post_args_ok(na_class, context, op_id) || buf == NULL ||
        buf_size == 0)
        return NA_INVALID_ARG;
    return na_post(na_class->ops->msg->recv_unexpected, na_class,
                   &(struct na_op_desc){
                       .type = NA_CB_RECV_UNEXPECTED,
                       .context = context,
                       .buf = buf,
                       .buf_size = buf_size,
                       .plugin_data = plugin_data,
                   },
                   callback, arg, op_id);
}

na_return_t
NA_Msg_send_expected(na_class_t *na_class, na_context_t *context,
                     na_cb_t callback, void *arg, const void *buf,
                     size_t buf_size, void *plugin_data, na_addr_t dest_addr,
                     uint8_t dest_id, na_tag_t tag, na_op_id_t *op_id)
{
    return na_msg_send(true, na_class, context, callback, arg, buf, buf_size,
                       plugin_data, dest_addr, dest_id, tag, op_id);
}

na_return_t
NA_Msg_recv_expected(na_class_t *na_class, na_context_t *context,
                     na_cb_t callback, void *arg, void *buf, size_t buf_size,
                     void *plugin_data, na_addr_t source_addr,
                     uint8_t source_id, na_tag_t tag, na_op_id_t *op_id)
{
    if (!na_post_args_ok(na_class, context, op_id) ||
        (buf == NULL && buf_size > 0) || source_addr == NA_ADDR_NULL)
        return NA_INVALID_ARG;
    if (tag > na_class->max_tag)
        return NA_INVALID_ARG;
    return na_post(na_class->ops->msg->recv_expected, na_class,
                   &(struct na_op_desc){
                       .type = NA_CB_RECV_EXPECTED,
                       .context = context,
                       .buf = buf,
                       .buf_size = buf_size,
                       .plugin_data = plugin_data,
                       .tag = tag,
                       .addr = source_addr,
                       .addr_id = source_id,
                   },
                   callback, arg, op_id);
}

/* Memory. */

static inline bool
na_mem_flags_ok(unsigned long flags)
{
    return flags == NA_MEM_READ_ONLY || flags == NA_MEM_WRITE_ONLY ||
           flags == NA_MEM_READWRITE;
}

na_return_t
NA_Mem_handle_create(na_class_t *na_class, void *buf, size_t buf_size,
                     unsigned long flags, na_mem_handle_t *mem_handle)
{
    qs_bias_gate();
    if (na_class == NULL || mem_handle == NULL ||
        (buf == NULL && buf_size > 0) || !na_mem_flags_ok(flags))
        return NA_INVALID_ARG;
    return na_class->ops->mem->handle_create(na_class, buf, buf_size, flags,
                                             mem_handle);
}

na_return_t
NA_Mem_handle_create_segments(na_class_t *na_class, struct na_segment *segments,
                              size_t segment_count, unsigned long flags,
                              na_mem_handle_t *mem_handle)
{
    qs_bias_gate();
    if (na_class == NULL || mem_handle == NULL || segments == NULL ||
        segment_count == 0 || !na_mem_flags_ok(flags))
        return NA_INVALID_ARG;
    if (na_class->ops->mem->handle_create_segments == NULL)
        return NA_OPNOTSUPPORTED;
    return na_class->ops->mem->handle_create_segments(
        na_class, segments, segment_count, flags, mem_handle);
}

void
NA_Mem_handle_free(na_class_t *na_class, na_mem_handle_t mem_handle)
{
    qs_bias_gate();
    if (na_class != NULL && mem_handle != NA_MEM_HANDLE_NULL)
        na_class->ops->mem->handle_free(na_class, mem_handle);
}

na_return_t
NA_Mem_register(na_class_t *na_class, na_mem_handle_t mem_handle,
                enum na_mem_type mem_type, uint64_t device)
{
    qs_bias_gate();
    if (na_class == NULL || mem_handle == NA_MEM_HANDLE_NULL)
        return NA_INVALID_ARG;
    if (mem_type != NA_MEM_TYPE_HOST && mem_type != NA_MEM_TYPE_UNKNOWN)
        return NA_OPNOTSUPPORTED;
    return na_class->ops->mem->mem_register(na_class, mem_handle, mem_type,
                                            device);
}

na_return_t
NA_Mem_deregister(na_class_t *na_class, na_mem_handle_t mem_handle)
{
    qs_bias_gate();
    if (na_class == NULL || mem_handle == NA_MEM_HANDLE_NULL)
        return NA_INVALID_ARG;
    return na_class->ops->mem->mem_deregister(na_class, mem_handle);
}

size_t
NA_Mem_handle_get_serialize_size(na_class_t *na_class,
                                 na_mem_handle_t mem_handle)
{
    size_t size = 0;

    qs_bias_gate();
    if (na_class == NULL || mem_handle == NA_MEM_HANDLE_NULL)
        return 0;
    (void) na_class->ops->mem->handle_serialize(na_class, NULL, &size,
                                                mem_handle);
    return size;
}

na_return_t
NA_Mem_handle_serialize(na_class_t *na_class, void *buf, size_t buf_size,
                        na_mem_handle_t mem_handle)
{
    qs_bias_gate();
    if (na_class == NULL || buf == NULL || mem_handle == NA_MEM_HANDLE_NULL)
        return NA_INVALID_ARG;
    return na_class->ops->mem->handle_serialize(na_class, buf, &buf_size,
                                                mem_handle);
}

na_return_t
NA_Mem_handle_deserialize(na_class_t *na_class, na_mem_handle_t *mem_handle,
                          const void *buf, size_t buf_size)
{
    qs_bias_gate();
    if (na_class == NULL || mem_handle == NULL || (buf == NULL && buf_size > 0))
        return NA_INVALID_ARG;
    return na_class->ops->mem->handle_deserialize(na_class, mem_handle, buf,
                                                  buf_size);
}

/* RMA. Put and get share their checks; only the plugin op differs. */

static na_return_t
na_rma(bool put, na_class_t *na_class, na_context_t *context, na_cb_t callback,
       void *arg, na_mem_handle_t local_mem_handle, na_offset_t local_offset,
       na_mem_handle_t remote_mem_handle, na_offset_t remote_offset,
       size_t data_size, na_addr_t remote_addr, uint8_t remote_id,
       na_op_id_t *op_id)
{
    if (!na_post_args_ok(na_class, context, op_id) ||
        local_mem_handle == NA_MEM_HANDLE_NULL ||
        remote_mem_handle == NA_MEM_HANDLE_NULL || remote_addr == NA_ADDR_NULL)
        return NA_INVALID_ARG;
    return na_post(na_class->ops->mem->rma, na_class,
                   &(struct na_op_desc){
                       .type = put ? NA_CB_PUT : NA_CB_GET,
                       .context = context,
                       .addr = remote_addr,
                       .addr_id = remote_id,
                       .local_mem_handle = local_mem_handle,
                       .local_offset = local_offset,
                       .remote_mem_handle = remote_mem_handle,
                       .remote_offset = remote_offset,
                       .data_size = data_size,
                   },
                   callback, arg, op_id);
}

na_return_t
NA_Put(na_class_t *na_class, na_context_t *context, na_cb_t callback, void *arg,
       na_mem_handle_t local_mem_handle, na_offset_t local_offset,
       na_mem_handle_t remote_mem_handle, na_offset_t remote_offset,
       size_t data_size, na_addr_t remote_addr, uint8_t remote_id,
       na_op_id_t *op_id)
{
    return na_rma(true, na_class, context, callback, arg, local_mem_handle,
                  local_offset, remote_mem_handle, remote_offset, data_size,
                  remote_addr, remote_id, op_id);
}

na_return_t
NA_Get(na_class_t *na_class, na_context_t *context, na_cb_t callback, void *arg,
       na_mem_handle_t local_mem_handle, na_offset_t local_offset,
       na_mem_handle_t remote_mem_handle, na_offset_t remote_offset,
       size_t data_size, na_addr_t remote_addr, uint8_t remote_id,
       na_op_id_t *op_id)
{
    return na_rma(false, na_class, context, callback, arg, local_mem_handle,
                  local_offset, remote_mem_handle, remote_offset, data_size,
                  remote_addr, remote_id, op_id);
}

/* Progress and completion. */

unsigned int
NA_Context_get_completion_count(na_context_t *context)
{
    qs_bias_gate();
    if (context == NULL)
        return 0;
    return atomic_load_explicit(&context->count, memory_order_acquire);
}

na_return_t
NA_Poll(na_class_t *na_class, na_context_t *context, unsigned int *count)
{
    unsigned int n = 0;
    na_return_t ret;

    qs_bias_gate();
    if (na_class == NULL || context == NULL || context->na_class != na_class)
        return NA_INVALID_ARG;
    ret = na_class->ops->context->poll(na_class, context, &n);
    if (count != NULL)
        *count = n;
    return ret;
}

na_return_t
NA_Poll_wait(na_class_t *na_class, na_context_t *context,
             unsigned int timeout_ms, unsigned int *count)
{
    unsigned int n = 0;
    na_return_t ret;

    qs_bias_gate();
    if (na_class == NULL || context == NULL || context->na_class != na_class)
        return NA_INVALID_ARG;
    /* Completions already queued need no waiting, only triggering. */
    if (NA_Context_get_completion_count(context) > 0) {
        ret = na_class->ops->context->poll(na_class, context, &n);
        if (count != NULL)
            *count = n;
        return ret == NA_TIMEOUT ? NA_SUCCESS : ret;
    }
    ret = na_class->ops->context->poll_wait(na_class, context, timeout_ms, &n);
    if (count != NULL)
        *count = n;
    return ret;
}

int
NA_Poll_get_fd(na_class_t *na_class, na_context_t *context)
{
    qs_bias_gate();
    if (na_class == NULL || context == NULL)
        return -1;
    return na_class->ops->context->poll_get_fd(na_class, context);
}

bool
na_op_start(na_op_id_t *op_id)
{
    struct na_op_base *base = na_op_base(op_id);
    int s = atomic_load_explicit(&base->state, memory_order_acquire);

    /* The only other writer while the op is posted is NA_Cancel(), which
     * adds its flag: one retry at most. */
    for (;;) {
        if ((s & NA_OP_STATE_MASK) == NA_OP_STARTED)
            return true;
        assert((s & NA_OP_STATE_MASK) == NA_OP_POSTED);
        if (s & NA_OP_CANCEL_REQUESTED)
            return false;
        if (qs_atomic_cas_int(&base->state, &s, NA_OP_STARTED,
                              memory_order_acq_rel, memory_order_acquire))
            return true;
    }
}

void
na_op_finish(na_op_id_t *op_id, na_return_t ret)
{
    struct na_op_base *base = na_op_base(op_id);
    na_context_t *context = base->context;
    int old;

    assert(base->list == NULL);
    base->info.ret = ret;
    qs_hot_lock_uncounted(&context->lock);
    /* Exactly once: only a posted or started op may finish. The check
     * costs an atomic exchange, so a release build stores instead (the
     * store was all there was before the check). */
#ifndef NDEBUG
    old = atomic_exchange_explicit(&base->state, NA_OP_COMPLETED,
                                   memory_order_acq_rel);
    assert((old & NA_OP_STATE_MASK) == NA_OP_POSTED ||
           (old & NA_OP_STATE_MASK) == NA_OP_STARTED);
#else
    old = 0;
    atomic_store_explicit(&base->state, NA_OP_COMPLETED, memory_order_release);
#endif
    (void) old;
    if (STAILQ_EMPTY(&context->overflow) &&
        context->ring_tail - context->ring_head < NA_CQ_RING)
        context->ring[context->ring_tail++ % NA_CQ_RING] = base;
    else
        STAILQ_INSERT_TAIL(&context->overflow, base, entry);
    qs_atomic_fetch_add(&context->count, 1, memory_order_release);
    qs_hot_unlock(&context->lock);
}

/* Entries NA_Trigger takes off the queue under one lock acquisition. */
#define NA_TRIGGER_BATCH 16

na_return_t
NA_Trigger(na_context_t *context, unsigned int max_count,
           unsigned int *actual_count)
{
    unsigned int done = 0;

    if (context == NULL)
        return NA_INVALID_ARG;
    /* An empty queue is seen without the lock: a completion queued after
     * this look is found by the next trigger, as it would be after an
     * unlock. Up to NA_TRIGGER_BATCH entries leave the queue per lock. */
    while (done < max_count &&
           atomic_load_explicit(&context->count, memory_order_acquire) != 0) {
        struct na_op_base *batch[NA_TRIGGER_BATCH];
        unsigned int want = max_count - done, n = 0, diag = 0;

        if (want > NA_TRIGGER_BATCH)
            want = NA_TRIGGER_BATCH;
        qs_hot_lock_uncounted(&context->lock);
        while (n < want && context->ring_head != context->ring_tail)
            batch[n++] = context->ring[context->ring_head++ % NA_CQ_RING];
        while (n < want && !STAILQ_EMPTY(&context->overflow)) {
            batch[n++] = STAILQ_FIRST(&context->overflow);
            STAILQ_REMOVE_HEAD(&context->overflow, entry);
        }
        context->triggered += n;
        if (context->triggered >= NA_DIAG_TRIGGER_BATCH) {
            diag = context->triggered;
            context->triggered = 0;
        }
        qs_hot_unlock(&context->lock);
        if (diag > 0)
            na_diag_count(&na_diag.triggered, diag);
        /* Ask for the whole batch, then for what each callback reads
         * first (its argument), before running any: in a large world each
         * is a cache miss, and they then overlap instead of following
         * each other. A prefetch never faults, whatever arg holds. */
        if (n > 1) {
            for (unsigned int i = 0; i < n; i++)
                __builtin_prefetch(batch[i]);
            for (unsigned int i = 0; i < n; i++)
                __builtin_prefetch(batch[i]->info.arg);
        }
        for (unsigned int i = 0; i < n; i++) {
            /* Copy what the callback needs, then make the op id reusable:
             * the callback may repost it. */
            struct na_op_base *base = batch[i];
            struct na_cb_info info = base->info;
            na_cb_t callback = base->callback;

            /* Counted until here, so the entries of the batch still keep
             * NA_Context_destroy() from a callback refused. */
            qs_atomic_fetch_sub(&context->count, 1, memory_order_relaxed);
            atomic_store_explicit(&base->state, NA_OP_IDLE,
                                  memory_order_release);
            if (callback != NULL)
                callback(&info);
        }
        /* Completions the callbacks queued run in this call too, as
         * they did when entries were taken one at a time. */
        done += n;
        if (n == 0)
            break;
    }
    if (actual_count != NULL)
        *actual_count = done;
    return done > 0 ? NA_SUCCESS : NA_TIMEOUT;
}

/*
 * Cancel marks the current post (NA_OP_CANCEL_REQUESTED), once. An op
 * still being posted is left to na_op_start(), which the posting plugin
 * calls under its lock and which then tells it to cancel; a started op
 * goes to the plugin's cancel hook. Idle and completed ops, and a post
 * already marked, need nothing.
 */
na_return_t
NA_Cancel(na_class_t *na_class, na_context_t *context, na_op_id_t *op_id)
{
    struct na_op_base *base;
    int s;

    qs_bias_gate();
    if (!na_post_args_ok(na_class, context, op_id))
        return NA_INVALID_ARG;
    base = na_op_base(op_id);
    s = atomic_load_explicit(&base->state, memory_order_acquire);
    for (;;) {
        int st = s & NA_OP_STATE_MASK;

        if ((st != NA_OP_POSTED && st != NA_OP_STARTED) ||
            (s & NA_OP_CANCEL_REQUESTED))
            return NA_SUCCESS;
        if (atomic_compare_exchange_weak_explicit(
                &base->state, &s, s | NA_OP_CANCEL_REQUESTED,
                memory_order_acq_rel, memory_order_acquire))
            break;
    }
    /* Posted, not started: na_op_start() reports the mark to the plugin. */
    if ((s & NA_OP_STATE_MASK) == NA_OP_POSTED)
        return NA_SUCCESS;
    return na_class->ops->context->cancel(na_class, context, op_id);
}

uint64_t
NA_Clock_now(na_class_t *na_class)
{
    if (na_class == NULL)
        return na_plugin_clock_monotonic_ns();
    if (na_class->ops->context->clock_now == NULL)
        return na_plugin_clock_monotonic_ns();
    return na_class->ops->context->clock_now(na_class);
}

bool
NA_Has_opt_feature(na_class_t *na_class, unsigned long flags)
{
    (void) flags;
    /* No plugin offers multi-receive or firewall addresses through NA. */
    (void) na_class;
    return false;
}

size_t
NA_Msg_get_unexpected_header_size(const na_class_t *na_class)
{
    (void) na_class;
    return 0;
}

size_t
NA_Msg_get_expected_header_size(const na_class_t *na_class)
{
    (void) na_class;
    return 0;
}

na_return_t
NA_Msg_init_unexpected(na_class_t *na_class, void *buf, size_t buf_size)
{
    if (na_class == NULL || buf == NULL || buf_size == 0)
        return NA_INVALID_ARG;
    return NA_SUCCESS;
}

na_return_t
NA_Msg_init_expected(na_class_t *na_class, void *buf, size_t buf_size)
{
    if (na_class == NULL || buf == NULL || buf_size == 0)
        return NA_INVALID_ARG;
    return NA_SUCCESS;
}

size_t
NA_Mem_handle_get_max_segments(const na_class_t *na_class)
{
    if (na_class == NULL || na_class->max_segments == 0)
        return 1;
    return na_class->max_segments;
}
