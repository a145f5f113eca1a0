/*
 * Mercury 2.4 names that HG passes through to NA or to the log:
 * HG_Get_na_protocol_info() / HG_Free_na_protocol_info() (NA's list of
 * the protocols this build serves) and HG_Diag_dump_counters(), which
 * writes the counters of every live class (HG_Class_get_counters()) to
 * the log, then NA's.
 *
 * Lock: diag_lock guards the list of live classes; a class joins it at
 * the end of HG_Init*() and leaves it at the start of HG_Finalize()'s
 * teardown, so a dump never reads a class being freed.
 */
#include "hg/hg_internal.h"

static pthread_mutex_t diag_lock = PTHREAD_MUTEX_INITIALIZER;
static LIST_HEAD(, hg_class) diag_classes = LIST_HEAD_INITIALIZER(diag_classes);

hg_return_t
HG_Get_na_protocol_info(const char *info_string,
                        struct na_protocol_info **na_protocol_info_p)
{
    return hg_from_na(NA_Get_protocol_info(info_string, na_protocol_info_p));
}

void
HG_Free_na_protocol_info(struct na_protocol_info *na_protocol_info)
{
    NA_Free_protocol_info(na_protocol_info);
}

void
hg_diag_class_add(hg_class_t *hg_class)
{
    qs_mutex_lock(&diag_lock);
    LIST_INSERT_HEAD(&diag_classes, hg_class, diag_entry);
    pthread_mutex_unlock(&diag_lock);
}

/* Idempotent: HG_Finalize() may be called again after a failure past
 * this point (an NA class that would not finalize). */
void
hg_diag_class_del(hg_class_t *hg_class)
{
    qs_mutex_lock(&diag_lock);
    if (hg_class->diag_entry.le_prev != NULL) {
        LIST_REMOVE(hg_class, diag_entry);
        hg_class->diag_entry.le_prev = NULL;
    }
    pthread_mutex_unlock(&diag_lock);
}

/* One line per class at the "min_debug" level of the "hg" subsystem, as
 * Mercury writes its diagnostic counters: nothing appears at the default
 * level ("error"). */
void
HG_Diag_dump_counters(void)
{
    hg_class_t *hg_class;

    if (qs_log_enabled("hg", QS_LOG_MIN_DEBUG)) {
        qs_mutex_lock(&diag_lock);
        LIST_FOREACH(hg_class, &diag_classes, diag_entry)
        {
            struct hg_diag_counters c;

            HG_Class_get_counters(hg_class, &c);
            qs_log("hg", QS_LOG_MIN_DEBUG,
                   "diag: class %p (%s+%s): rpc_req_sent_count %llu, "
                   "rpc_req_recv_count %llu, rpc_resp_sent_count %llu, "
                   "rpc_req_extra_count %llu",
                   (void *) hg_class, HG_Class_get_name(hg_class),
                   HG_Class_get_protocol(hg_class),
                   (unsigned long long) c.rpc_req_sent_count,
                   (unsigned long long) c.rpc_req_recv_count,
                   (unsigned long long) c.rpc_resp_sent_count,
                   (unsigned long long) c.rpc_req_extra_count);
        }
        pthread_mutex_unlock(&diag_lock);
    }
    NA_Diag_dump_counters();
}
