/* Private to the NA core (lib/na). */
#ifndef NA_INTERNAL_H
#define NA_INTERNAL_H

#include "na/na_plugin.h"

/* NULL-terminated, in selection order. */
extern const struct na_class_ops *const na_plugin_table[];

/*
 * The first required op missing from a plugin's tables of ops
 * ("addr->lookup"), or NULL when none is (na_plugin_table.c).
 * NA_Initialize() refuses such a plugin with this name in its error.
 */
const char *na_plugin_ops_missing(const struct na_class_ops *ops);

/* Plugin selection and the checks on transport names (na_select.c). */
/* "tcp" or "tcp;ofi_rxm": one transport, whatever the class. */
bool na_protocol_is_tcp(const char *protocol_name);
/* The plugin an info string selects, or NULL. */
const struct na_class_ops *na_plugin_select(const struct na_info *info);
/* NA_PROTONOSUPPORT (logged) when `name` names a protocol that is not
 * this class's; NA_SUCCESS for a bare address. */
na_return_t na_addr_lookup_check(na_class_t *na_class, const char *name);
/* The info string to use: QS_NA_INFO's when set and of another protocol. */
const char *na_info_override(const char *info_string);

/* Process-wide counts NA_Diag_dump_counters() writes (na_protocol.c). */
struct na_diag_counters {
    atomic_llong classes;  /* live NA classes                  */
    atomic_llong contexts; /* live NA contexts                 */
    /* Callbacks NA_Trigger() has run, except up to
     * NA_DIAG_TRIGGER_BATCH - 1 per live context: each context counts its
     * own under its lock and adds them here in batches, so the trigger
     * path does not write a line that every thread shares. */
    atomic_llong triggered;
};
#define NA_DIAG_TRIGGER_BATCH 1024u
extern struct na_diag_counters na_diag;

static inline void
na_diag_count(atomic_llong *counter, long long delta)
{
    atomic_fetch_add_explicit(counter, delta, memory_order_relaxed);
}

/* Errors are logged once where they start: qs_log("na", QS_LOG_ERROR, ...). */
#include "util/qs_log.h"

#endif /* NA_INTERNAL_H */
