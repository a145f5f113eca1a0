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

/* Process-wide counts NA_Diag_dump_counters() writes (na_protocol.c). */
struct na_diag_counters {
    atomic_llong classes;   /* live NA classes                  */
    atomic_llong contexts;  /* live NA contexts                 */
    atomic_llong triggered; /* callbacks NA_Trigger() has run   */
};
extern struct na_diag_counters na_diag;

static inline void
na_diag_count(atomic_llong *counter, long long delta)
{
    atomic_fetch_add_explicit(counter, delta, memory_order_relaxed);
}

/* Errors are logged once where they start: qs_log("na", QS_LOG_ERROR, ...). */
#include "util/qs_log.h"

#endif /* NA_INTERNAL_H */
