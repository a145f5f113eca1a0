/*
 * Hooks of the invariant checker (include/qs_check.h) in the HG layer.
 * Each hook is one HG_CHECK(...) line: when the checker is off it costs a
 * test of hg_check_on and a predicted branch, nothing else. lib/core and
 * lib/bulk sit below lib/hg and call the checker through the hook table of
 * core/hg_core.h (HG_CORE_CHECK), which hg_check.c fills in when it starts.
 */
#ifndef HG_CHECK_H
#define HG_CHECK_H

#include "mercury.h"

#include "core/hg_core.h"

#include <stdatomic.h>
#include <stdbool.h>

extern atomic_bool hg_check_on;

#define HG_CHECK(call)                                                         \
    do {                                                                       \
        if (__builtin_expect(                                                  \
                atomic_load_explicit(&hg_check_on, memory_order_relaxed), 0))  \
            call;                                                              \
    } while (0)

/* The kinds of record (enum hg_check_kind) are in core/hg_core.h, whose
 * hook table lib/core and lib/bulk call through. */

struct hg_completion;

/* An object was created (where: the caller's stack) or released. */
void hg_check_obj_add(hg_class_t *hg_class, const void *obj,
                      enum hg_check_kind kind);
void hg_check_obj_del(const void *obj);

/* A target handle reached its handler: from now on the program owns it. */
void hg_check_target(hg_handle_t handle);

/* An operation was started whose completion will run a callback once;
 * op_end forgets it when the start failed after all. */
void hg_check_op_begin(hg_class_t *hg_class, const void *op,
                       enum hg_check_kind kind);
void hg_check_op_end(const void *op);

/* A completion is about to run its callback (HG_Trigger()). */
void hg_check_op_ran(const struct hg_completion *comp);

/* Margo's own objects (requests of the i* calls, timers): `what` names
 * the object and how it is released (a string that outlives the record).
 * They outlive their class, so they are checked at exit. */
void hg_check_margo_add(hg_class_t *hg_class, const void *obj,
                        enum hg_check_kind kind, const char *what);

/* margo_finalize() releases an address the program kept (Margo's own
 * tolerance): a violation, reported with where the address was made. */
void hg_check_margo_addr_kept(hg_addr_t addr);

/* HG_Finalize() found the class still in use; report what it holds. */
void hg_check_class_busy(hg_class_t *hg_class);

/* HG_Finalize() succeeded: forget everything of the class. */
void hg_check_class_gone(hg_class_t *hg_class);

#endif /* HG_CHECK_H */
