/*
 * HG classes: initialization over an NA class, registration of RPCs, class
 * data, error strings and the leak check at finalize.
 */
#include "hg/hg_internal.h"
#include "util/qs_alloc.h"
#include "na/na_auto_sm.h"
#include "na_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Mercury's names: the table's own spelling of each code. */
#define X(a) [a] = #a,
static const char *const hg_return_names[] = {HG_RETURN_VALUES};
#undef X

const char *
HG_Error_to_string(hg_return_t errnum)
{
    /* Mercury returns NULL here; a string keeps printf("%s") defined for
     * a code that came from a corrupted or foreign source. */
    if ((unsigned) errnum >= HG_RETURN_MAX)
        return "unknown error";
    return hg_return_names[errnum];
}

hg_return_t
HG_Version_get(unsigned int *major, unsigned int *minor, unsigned int *patch)
{
    if (major != NULL)
        *major = HG_VERSION_MAJOR;
    if (minor != NULL)
        *minor = HG_VERSION_MINOR;
    if (patch != NULL)
        *patch = HG_VERSION_PATCH;
    return HG_SUCCESS;
}

hg_class_t *
HG_Init(const char *na_info_string, hg_bool_t na_listen)
{
    return HG_Init_opt2(na_info_string, na_listen, 0, NULL);
}

hg_class_t *
HG_Init_opt(const char *na_info_string, hg_bool_t na_listen,
            const struct hg_init_info *hg_init_info)
{
    /* 2.2 is the last version whose structure was not versioned. */
    return HG_Init_opt2(na_info_string, na_listen, HG_VERSION(2, 2),
                        hg_init_info);
}

/* The caller's structure read as the version it was written for: fields
 * added after that version keep their defaults, as in Mercury. */
static bool
hg_init_info_from_version(struct hg_init_info *out, unsigned int version,
                          const struct hg_init_info *in)
{
    const struct hg_init_info defaults = HG_INIT_INFO_INITIALIZER;

    *out = defaults;
    if (in == NULL)
        return true;
    if (version == 0 || HG_MAJOR(version) != HG_VERSION_MAJOR) {
        qs_log("hg", QS_LOG_ERROR,
               "HG_Init_opt2: API version %u.%u is not one this library "
               "knows: pass HG_VERSION(%d, %d) (or an earlier 2.x)",
               HG_MAJOR(version), HG_MINOR(version), HG_VERSION_MAJOR,
               HG_VERSION_MINOR);
        return false;
    }
    *out = *in;
    if (HG_VERSION_LT(version, HG_VERSION(2, 4))) {
        out->traffic_class = defaults.traffic_class;
        out->no_overflow = defaults.no_overflow;
        out->multi_recv_op_max = defaults.multi_recv_op_max;
        out->multi_recv_copy_threshold = defaults.multi_recv_copy_threshold;
    }
    if (HG_VERSION_LT(version, HG_VERSION(2, 3))) {
        out->no_multi_recv = defaults.no_multi_recv;
        out->release_input_early = defaults.release_input_early;
    }
    /* As in Mercury, 0 asks for the default, and a negative increment
     * (Mercury's field is signed) for no growth: here the pool then grows
     * one handle at a time. */
    if (out->request_post_init == 0)
        out->request_post_init = defaults.request_post_init;
    if (out->request_post_incr == 0)
        out->request_post_incr = defaults.request_post_incr;
    else if ((int32_t) out->request_post_incr < 0)
        out->request_post_incr = 1;
    return true;
}

/* Options this library cannot honour are refused by name, never ignored. */
static bool
hg_init_info_check(const struct hg_init_info *info)
{
    if (info->auto_sm && !na_auto_sm_available()) {
        qs_log("hg", QS_LOG_ERROR,
               "hg_init_info.auto_sm is not supported: this build has no "
               "shared-memory plugin");
        return false;
    }
    if (info->auto_sm && info->na_class != NULL) {
        qs_log("hg", QS_LOG_ERROR,
               "hg_init_info.auto_sm needs HG to create its NA classes, "
               "not a caller's na_class");
        return false;
    }
    if (info->sm_info_string != NULL && !info->auto_sm) {
        qs_log("hg", QS_LOG_ERROR,
               "hg_init_info.sm_info_string is used only with auto_sm");
        return false;
    }
    if ((unsigned) info->checksum_level > HG_CHECKSUM_RPC_PAYLOAD) {
        qs_log("hg", QS_LOG_ERROR,
               "hg_init_info.checksum_level %d is not a valid level",
               (int) info->checksum_level);
        return false;
    }
    if ((unsigned) info->traffic_class > NA_TC_NETWORK_CTRL) {
        qs_log("hg", QS_LOG_ERROR,
               "hg_init_info.traffic_class %d is not an enum "
               "na_traffic_class value",
               (int) info->traffic_class);
        return false;
    }
    if (info->multi_recv_op_max > 64) {
        qs_log("hg", QS_LOG_ERROR,
               "hg_init_info.multi_recv_op_max %u is above 64",
               info->multi_recv_op_max);
        return false;
    }
    if (info->multi_recv_copy_threshold >
        (info->multi_recv_op_max ? info->multi_recv_op_max : 4)) {
        qs_log("hg", QS_LOG_ERROR,
               "hg_init_info.multi_recv_copy_threshold %u is above "
               "multi_recv_op_max",
               info->multi_recv_copy_threshold);
        return false;
    }
    if (info->request_post_init > 65536) {
        qs_log("hg", QS_LOG_ERROR,
               "hg_init_info.request_post_init %u is above 65536",
               info->request_post_init);
        return false;
    }
    return true;
}

/* The class's NA class: the one hg_init_info passes in, or one of its own
 * (own_na_class) opened from the info string. */
static bool
hg_class_open_na(hg_class_t *hg_class, const char *na_info_string,
                 hg_bool_t na_listen)
{
    struct na_init_info na_info = hg_class->info.na_init_info;

    if (hg_class->info.na_class != NULL) {
        hg_class->core.na_class = hg_class->info.na_class;
        return true;
    }
    if (na_info_string == NULL) {
        qs_log("hg", QS_LOG_ERROR, "HG_Init: NULL info string and no na_class");
        return false;
    }
    na_info.no_multi_recv = hg_class->info.no_multi_recv;
    na_info.multi_recv_op_max = hg_class->info.multi_recv_op_max;
    /* Mercury keeps the class in hg_init_info for now. */
    if (na_info.traffic_class == NA_TC_UNSPEC)
        na_info.traffic_class = hg_class->info.traffic_class;
    if (hg_class->info.auto_sm)
        hg_class->core.na_class = na_auto_sm_initialize(
            na_info_string, hg_class->info.sm_info_string, na_listen, &na_info);
    else
        hg_class->core.na_class =
            NA_Initialize_opt2(na_info_string, na_listen,
                               NA_VERSION(NA_VERSION_MAJOR, 0), &na_info);
    if (hg_class->core.na_class == NULL)
        return false;
    hg_class->own_na_class = true;
    return true;
}

/* What the NA class allows RPCs: the eager sizes of their arguments and
 * the tags of their messages. False when it is too small for them. */
static bool
hg_class_set_limits(hg_class_t *hg_class)
{
    na_tag_t max_tag;

    hg_class->na_unexpected_size =
        NA_Msg_get_max_unexpected_size(hg_class->core.na_class);
    hg_class->na_expected_size =
        NA_Msg_get_max_expected_size(hg_class->core.na_class);
    if (hg_class->na_unexpected_size < HG_HEADER_SIZE + 64 ||
        hg_class->na_expected_size < HG_HEADER_SIZE + 64) {
        qs_log("hg", QS_LOG_ERROR,
               "NA message sizes (%zu, %zu) are too small for RPCs",
               hg_class->na_unexpected_size, hg_class->na_expected_size);
        return false;
    }
    hg_class->in_eager_size = hg_class->na_unexpected_size - HG_HEADER_SIZE;
    hg_class->out_eager_size = hg_class->na_expected_size - HG_HEADER_SIZE;
    max_tag = NA_Msg_get_max_tag(hg_class->core.na_class);
    if (max_tag < 1024) {
        qs_log("hg", QS_LOG_ERROR, "NA tag space (max %u) is too small",
               max_tag);
        return false;
    }
    /* The top bit of the tag space marks overflow acknowledgements. */
    hg_class->tag_ack_bit = 1;
    while (hg_class->tag_ack_bit <= max_tag / 2)
        hg_class->tag_ack_bit <<= 1;
    atomic_init(&hg_class->tag_next, 1);
    return true;
}

hg_class_t *
HG_Init_opt2(const char *na_info_string, hg_bool_t na_listen,
             unsigned int version, const struct hg_init_info *hg_init_info)
{
    hg_class_t *hg_class;
    na_addr_t self = NA_ADDR_NULL;

    hg_class = qs_calloc_lines(sizeof(*hg_class));
    if (hg_class == NULL)
        return NULL;
    if (!hg_init_info_from_version(&hg_class->info, version, hg_init_info) ||
        !hg_init_info_check(&hg_class->info))
        goto error;
    (void) hg_probe_interval_ms(hg_class); /* the environment, read once */
    if (!hg_class_open_na(hg_class, na_info_string, na_listen))
        goto error;
    hg_class->core.no_bulk_eager = hg_class->info.no_bulk_eager;
    hg_class->core.auto_sm = hg_class->info.auto_sm;
    if (!hg_class_set_limits(hg_class))
        goto error;

    if (NA_Addr_self(hg_class->core.na_class, &self) != NA_SUCCESS ||
        hg_addr_create(hg_class, self, &hg_class->core.self_addr) !=
            HG_SUCCESS) {
        qs_log("hg", QS_LOG_ERROR, "could not get the class's own address");
        if (self != NA_ADDR_NULL)
            NA_Addr_free(hg_class->core.na_class, self);
        goto error;
    }
    /* The cached self address is not a user object. */
    atomic_fetch_sub(&hg_class->core.n_addrs, 1);
    pthread_rwlock_init(&hg_class->rpc_lock, NULL);
    pthread_mutex_init(&hg_class->lock, NULL);
    HG_CHECK(hg_check_obj_add(hg_class, hg_class, HG_CHECK_CLASS));
    hg_diag_class_add(hg_class);
    return hg_class;

error:
    if (hg_class->own_na_class)
        NA_Finalize(hg_class->core.na_class);
    qs_free_lines(hg_class, sizeof(*hg_class));
    return NULL;
}

/* hg_init_info.stats: the class's counters, once, as it goes. */
static void
hg_class_log_stats(const hg_class_t *hg_class)
{
    qs_log_emit("hg", QS_LOG_INFO,
                "stats: %llu forwards, %llu requests, %llu "
                "responses, %llu overflow transfers, %llu handle allocations, "
                "%llu protocol errors",
                (unsigned long long) hg_class->stats.forwards_sent,
                (unsigned long long) hg_class->stats.requests_received,
                (unsigned long long) hg_class->stats.responses_sent,
                (unsigned long long) hg_class->stats.overflow_transfers,
                (unsigned long long) hg_class->stats.handles_allocated,
                (unsigned long long) hg_class->stats.protocol_errors);
}

/* Free every registered RPC, with the data its registration attached. */
static void
hg_class_free_rpcs(hg_class_t *hg_class)
{
    for (int i = 0; i < HG_RPC_BUCKETS; i++) {
        struct hg_rpc *rpc = hg_class->rpc_table[i];
        while (rpc != NULL) {
            struct hg_rpc *next = rpc->next;
            if (rpc->free_data != NULL)
                rpc->free_data(rpc->data);
            free(rpc->name);
            free(rpc);
            rpc = next;
        }
    }
}

hg_return_t
HG_Finalize(hg_class_t *hg_class)
{
    unsigned int contexts, addrs, bulks;

    qs_bias_gate();
    if (hg_class == NULL)
        return HG_SUCCESS;
    contexts = atomic_load(&hg_class->n_contexts);
    /* The cached self address counts when users still hold it. */
    addrs = atomic_load(&hg_class->core.n_addrs) +
            (atomic_load(&hg_class->core.self_addr->refcount) - 1);
    bulks = atomic_load(&hg_class->core.n_bulks);
    if (contexts || addrs || bulks) {
        qs_log("hg", QS_LOG_ERROR,
               "HG_Finalize: still in use: %u context(s), %u "
               "address(es), %u bulk handle(s)",
               contexts, addrs, bulks);
        HG_CHECK(hg_check_class_busy(hg_class));
        return HG_BUSY;
    }
    hg_watchdog_fini(hg_class);
    hg_diag_class_del(hg_class);
    if (hg_class->info.stats)
        hg_class_log_stats(hg_class);
    NA_Addr_free(hg_class->core.na_class, hg_class->core.self_addr->na_addr);
    free(hg_class->core.self_addr);
    hg_class_free_rpcs(hg_class);
    if (hg_class->free_data != NULL)
        hg_class->free_data(hg_class->data);
    if (hg_class->own_na_class) {
        na_return_t na_ret = NA_Finalize(hg_class->core.na_class);
        if (na_ret != NA_SUCCESS) {
            qs_log("hg", QS_LOG_ERROR, "NA_Finalize failed: %s",
                   NA_Error_to_string(na_ret));
            return hg_from_na(na_ret);
        }
    }
    pthread_rwlock_destroy(&hg_class->rpc_lock);
    pthread_mutex_destroy(&hg_class->lock);
    HG_CHECK(hg_check_class_gone(hg_class));
    qs_free_lines(hg_class, sizeof(*hg_class));
    return HG_SUCCESS;
}

void
HG_Cleanup(void)
{
}

const char *
HG_Class_get_name(const hg_class_t *hg_class)
{
    return hg_class ? NA_Get_class_name(hg_class->core.na_class) : NULL;
}

const char *
HG_Class_get_protocol(const hg_class_t *hg_class)
{
    return hg_class ? NA_Get_class_protocol(hg_class->core.na_class) : NULL;
}

hg_bool_t
HG_Class_is_listening(const hg_class_t *hg_class)
{
    return hg_class && NA_Is_listening(hg_class->core.na_class) ? HG_TRUE
                                                                : HG_FALSE;
}

hg_size_t
HG_Class_get_input_eager_size(const hg_class_t *hg_class)
{
    return hg_class ? hg_class->in_eager_size : 0;
}

hg_size_t
HG_Class_get_output_eager_size(const hg_class_t *hg_class)
{
    return hg_class ? hg_class->out_eager_size : 0;
}

na_class_t *
HG_Class_get_na(const hg_class_t *hg_class)
{
    return hg_class ? hg_class->core.na_class : NULL;
}

hg_return_t
HG_Class_set_data(hg_class_t *hg_class, void *data,
                  void (*free_callback)(void *))
{
    if (hg_class == NULL)
        return HG_INVALID_ARG;
    hg_class->data = data;
    hg_class->free_data = free_callback;
    return HG_SUCCESS;
}

void *
HG_Class_get_data(const hg_class_t *hg_class)
{
    return hg_class ? hg_class->data : NULL;
}

hg_return_t
HG_Class_set_handle_create_callback(hg_class_t *hg_class,
                                    hg_return_t (*callback)(hg_handle_t,
                                                            void *),
                                    void *arg)
{
    if (hg_class == NULL)
        return HG_INVALID_ARG;
    hg_class->handle_create_cb = callback;
    hg_class->handle_create_arg = arg;
    return HG_SUCCESS;
}

uint64_t
HG_Clock_now(const hg_class_t *hg_class)
{
    return NA_Clock_now(hg_class ? hg_class->core.na_class : NULL);
}

hg_return_t
HG_Class_get_stats(const hg_class_t *hg_class, struct hg_stats *stats)
{
    if (hg_class == NULL || stats == NULL)
        return HG_INVALID_ARG;
    stats->forwards_sent = hg_class->stats.forwards_sent;
    stats->requests_received = hg_class->stats.requests_received;
    stats->responses_sent = hg_class->stats.responses_sent;
    stats->overflow_transfers = hg_class->stats.overflow_transfers;
    stats->handles_allocated = hg_class->stats.handles_allocated;
    stats->protocol_errors = hg_class->stats.protocol_errors;
    stats->probes_answered = hg_class->stats.probes_answered;
    stats->watchdog_wakeups = hg_class->stats.watchdog_wakeups;
    stats->watchdog_drives = hg_class->stats.watchdog_drives;
    stats->hot_path_bias = (uint64_t) qs_bias_state();
    return HG_SUCCESS;
}

hg_return_t
HG_Class_get_counters(const hg_class_t *hg_class,
                      struct hg_diag_counters *diag_counters)
{
    if (hg_class == NULL || diag_counters == NULL)
        return HG_INVALID_ARG;
    memset(diag_counters, 0, sizeof(*diag_counters));
    diag_counters->rpc_req_sent_count = hg_class->stats.forwards_sent;
    diag_counters->rpc_req_recv_count = hg_class->stats.requests_received;
    diag_counters->rpc_resp_sent_count = hg_class->stats.responses_sent;
    diag_counters->rpc_req_extra_count = hg_class->stats.overflow_transfers;
    return HG_SUCCESS;
}

na_tag_t
hg_class_next_tag(hg_class_t *hg_class)
{
    unsigned int tag;

    /* Tags cycle below the acknowledgement bit and skip 0. */
    do {
        tag =
            qs_atomic_fetch_add(&hg_class->tag_next, 1, memory_order_relaxed) &
            (hg_class->tag_ack_bit - 1);
    } while (tag == 0);
    return (na_tag_t) tag;
}

/* Registration. */

/* FNV-1a of the name, folded so that 0 is never an id. */
static hg_id_t
hg_rpc_hash_name(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (const unsigned char *p = (const unsigned char *) name; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    /* Ids fit in 32 bits so that every peer's hg_id_t agrees. */
    h = (h ^ (h >> 32)) & 0xffffffffull;
    return h ? h : 1;
}

static struct hg_rpc **
hg_rpc_slot(hg_class_t *hg_class, hg_id_t id)
{
    struct hg_rpc **slot = &hg_class->rpc_table[id % HG_RPC_BUCKETS];

    while (*slot != NULL && (*slot)->id != id)
        slot = &(*slot)->next;
    return slot;
}

const struct hg_rpc *
hg_rpc_lookup(hg_class_t *hg_class, hg_id_t id)
{
    const struct hg_rpc *rpc;

    qs_hot_rdlock(&hg_class->rpc_lock);
    rpc = *hg_rpc_slot(hg_class, id);
    qs_hot_rwunlock(&hg_class->rpc_lock);
    return rpc;
}

static hg_return_t
hg_register(hg_class_t *hg_class, hg_id_t id, const char *name,
            hg_proc_cb_t in_proc_cb, hg_proc_cb_t out_proc_cb,
            hg_rpc_cb_t rpc_cb)
{
    struct hg_rpc **slot, *rpc;

    qs_rwlock_wrlock(&hg_class->rpc_lock);
    slot = hg_rpc_slot(hg_class, id);
    rpc = *slot;
    if (rpc != NULL && name != NULL && rpc->name != NULL &&
        strcmp(rpc->name, name) != 0) {
        pthread_rwlock_unlock(&hg_class->rpc_lock);
        qs_log("hg", QS_LOG_ERROR,
               "RPC names \"%s\" and \"%s\" hash to the same id", rpc->name,
               name);
        return HG_EXIST;
    }
    if (rpc == NULL) {
        rpc = calloc(1, sizeof(*rpc));
        if (rpc == NULL || (name && (rpc->name = strdup(name)) == NULL)) {
            free(rpc);
            pthread_rwlock_unlock(&hg_class->rpc_lock);
            return HG_NOMEM;
        }
        rpc->id = id;
        *slot = rpc;
    }
    /* Re-registration updates the callbacks in place: handles in flight
     * keep a pointer to this entry. */
    rpc->in_proc = in_proc_cb;
    rpc->out_proc = out_proc_cb;
    rpc->rpc_cb = rpc_cb;
    pthread_rwlock_unlock(&hg_class->rpc_lock);
    return HG_SUCCESS;
}

hg_id_t
HG_Register_name(hg_class_t *hg_class, const char *func_name,
                 hg_proc_cb_t in_proc_cb, hg_proc_cb_t out_proc_cb,
                 hg_rpc_cb_t rpc_cb)
{
    hg_id_t id;

    qs_bias_gate();
    if (hg_class == NULL || func_name == NULL)
        return 0;
    id = hg_rpc_hash_name(func_name);
    if (hg_register(hg_class, id, func_name, in_proc_cb, out_proc_cb, rpc_cb) !=
        HG_SUCCESS)
        return 0;
    return id;
}

hg_return_t
HG_Register(hg_class_t *hg_class, hg_id_t id, hg_proc_cb_t in_proc_cb,
            hg_proc_cb_t out_proc_cb, hg_rpc_cb_t rpc_cb)
{
    qs_bias_gate();
    if (hg_class == NULL || id == 0)
        return HG_INVALID_ARG;
    return hg_register(hg_class, id, NULL, in_proc_cb, out_proc_cb, rpc_cb);
}

hg_return_t
HG_Deregister(hg_class_t *hg_class, hg_id_t id)
{
    struct hg_rpc **slot, *rpc;

    qs_bias_gate();
    if (hg_class == NULL)
        return HG_INVALID_ARG;
    qs_rwlock_wrlock(&hg_class->rpc_lock);
    slot = hg_rpc_slot(hg_class, id);
    rpc = *slot;
    if (rpc == NULL) {
        pthread_rwlock_unlock(&hg_class->rpc_lock);
        return HG_NOENTRY;
    }
    /* Handles may still point at the entry, so it stays allocated (and in
     * its chain, under id 0, which never matches) until HG_Finalize; their
     * next forward fails with HG_NOENTRY. */
    rpc->rpc_cb = NULL;
    rpc->in_proc = rpc->out_proc = NULL;
    if (rpc->free_data != NULL)
        rpc->free_data(rpc->data);
    rpc->data = NULL;
    rpc->free_data = NULL;
    rpc->id = 0; /* never matches again: 0 is not a valid id */
    pthread_rwlock_unlock(&hg_class->rpc_lock);
    return HG_SUCCESS;
}

hg_return_t
HG_Registered_name(hg_class_t *hg_class, const char *func_name, hg_id_t *id,
                   hg_bool_t *flag)
{
    hg_id_t hashed;

    if (hg_class == NULL || func_name == NULL || flag == NULL)
        return HG_INVALID_ARG;
    hashed = hg_rpc_hash_name(func_name);
    *flag = hg_rpc_lookup(hg_class, hashed) != NULL;
    if (id != NULL)
        *id = hashed;
    return HG_SUCCESS;
}

hg_return_t
HG_Registered(hg_class_t *hg_class, hg_id_t id, hg_bool_t *flag)
{
    if (hg_class == NULL || flag == NULL)
        return HG_INVALID_ARG;
    *flag = id != 0 && hg_rpc_lookup(hg_class, id) != NULL;
    return HG_SUCCESS;
}

hg_return_t
HG_Register_data(hg_class_t *hg_class, hg_id_t id, void *data,
                 void (*free_callback)(void *))
{
    struct hg_rpc *rpc;

    if (hg_class == NULL || id == 0)
        return HG_INVALID_ARG;
    qs_rwlock_wrlock(&hg_class->rpc_lock);
    rpc = *hg_rpc_slot(hg_class, id);
    if (rpc != NULL) {
        if (rpc->free_data != NULL && rpc->data != data)
            rpc->free_data(rpc->data);
        rpc->data = data;
        rpc->free_data = free_callback;
    }
    pthread_rwlock_unlock(&hg_class->rpc_lock);
    return rpc ? HG_SUCCESS : HG_NOENTRY;
}

void *
HG_Registered_data(hg_class_t *hg_class, hg_id_t id)
{
    const struct hg_rpc *rpc;

    if (hg_class == NULL || id == 0)
        return NULL;
    rpc = hg_rpc_lookup(hg_class, id);
    return rpc ? rpc->data : NULL;
}

hg_return_t
HG_Registered_disable_response(hg_class_t *hg_class, hg_id_t id,
                               hg_bool_t disable)
{
    struct hg_rpc *rpc;

    if (hg_class == NULL || id == 0)
        return HG_INVALID_ARG;
    qs_rwlock_wrlock(&hg_class->rpc_lock);
    rpc = *hg_rpc_slot(hg_class, id);
    if (rpc != NULL)
        rpc->no_response = disable != HG_FALSE;
    pthread_rwlock_unlock(&hg_class->rpc_lock);
    return rpc ? HG_SUCCESS : HG_NOENTRY;
}

hg_return_t
HG_Registered_proc_cb(hg_class_t *hg_class, hg_id_t id, hg_bool_t *flag_p,
                      hg_proc_cb_t *in_proc_cb_p, hg_proc_cb_t *out_proc_cb_p)
{
    const struct hg_rpc *rpc;

    if (hg_class == NULL || flag_p == NULL)
        return HG_INVALID_ARG;
    rpc = hg_rpc_lookup(hg_class, id);
    *flag_p = rpc != NULL;
    if (rpc != NULL && in_proc_cb_p != NULL)
        *in_proc_cb_p = rpc->in_proc;
    if (rpc != NULL && out_proc_cb_p != NULL)
        *out_proc_cb_p = rpc->out_proc;
    return HG_SUCCESS;
}

hg_return_t
HG_Registered_disabled_response(hg_class_t *hg_class, hg_id_t id,
                                hg_bool_t *disabled)
{
    const struct hg_rpc *rpc;

    if (hg_class == NULL || id == 0 || disabled == NULL)
        return HG_INVALID_ARG;
    rpc = hg_rpc_lookup(hg_class, id);
    if (rpc == NULL)
        return HG_NOENTRY;
    *disabled = rpc->no_response;
    return HG_SUCCESS;
}
