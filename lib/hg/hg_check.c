/*
 * The invariant checker (include/qs_check.h): records of live objects and
 * of operations awaiting their callback, kept while QS_CHECK is on, and
 * the checks at HG_Finalize(), at each callback and at exit. The reports
 * themselves are written by hg_check_report.c.
 *
 * Records live in two hash tables keyed by address, one for objects and
 * one for operations, both guarded by hg_check_lock. An operation's record
 * stays after its callback ran (runs == 1), so that a second run of the
 * same completion is seen; the next operation on the same object replaces
 * it, and HG_Finalize() drops every record of its class.
 */
#include "hg/hg_check_internal.h"
#include "hg/hg_rpc.h"

#include "na_sim.h"
#include "qs_check.h"

#include <execinfo.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

atomic_bool hg_check_on;
pthread_mutex_t hg_check_lock = PTHREAD_MUTEX_INITIALIZER;
struct hg_check_state hg_check;

static struct hg_check_rec *
hg_check_find(struct hg_check_rec **table, const void *key,
              struct hg_check_rec ***slot_p)
{
    struct hg_check_rec **slot = &table[hg_check_hash(key)];

    while (*slot != NULL && (*slot)->key != key)
        slot = &(*slot)->next;
    if (slot_p != NULL)
        *slot_p = slot;
    return *slot;
}

/* Keep the caller's stack from its first frame outside this library. */
static void
hg_check_capture(struct hg_check_rec *rec)
{
    void *frames[HG_CHECK_FRAMES + 24];
    int n = backtrace(frames, (int) (sizeof(frames) / sizeof(frames[0])));
    int first = n;

    for (int i = 1; i < n; i++) {
        if (!hg_check_in_library(frames[i])) {
            first = i;
            break;
        }
    }
    if (first == n) /* linked statically: keep what there is */
        first = n > 1 ? 1 : n;
    rec->nframes = 0;
    for (int i = first; i < n && rec->nframes < HG_CHECK_FRAMES; i++)
        rec->frames[rec->nframes++] = frames[i];
}

/* Insert or reset the record of `key`. Called with the lock held. */
static struct hg_check_rec *
hg_check_put(struct hg_check_rec **table, hg_class_t *hg_class, const void *key,
             enum hg_check_kind kind)
{
    struct hg_check_rec **slot;
    struct hg_check_rec *rec = hg_check_find(table, key, &slot);

    if (rec == NULL) {
        rec = calloc(1, sizeof(*rec));
        if (rec == NULL)
            return NULL;
        rec->key = key;
        *slot = rec;
    }
    rec->hg_class = hg_class;
    rec->kind = kind;
    rec->runs = 0;
    rec->reported = false;
    hg_check_capture(rec);
    return rec;
}

static void
hg_check_drop(struct hg_check_rec **table, const void *key)
{
    struct hg_check_rec **slot;
    struct hg_check_rec *rec = hg_check_find(table, key, &slot);

    if (rec != NULL) {
        *slot = rec->next;
        free(rec);
    }
}

void
hg_check_obj_add(hg_class_t *hg_class, const void *obj, enum hg_check_kind kind)
{
    /* The seed of the first simulated world, for the replay line. */
    bool sim = kind == HG_CHECK_CLASS &&
               strcmp(HG_Class_get_name(hg_class), "sim") == 0;
    uint64_t seed = sim ? na_sim_get_seed() : 0;

    pthread_mutex_lock(&hg_check_lock);
    if (sim && !hg_check.sim_seen) {
        hg_check.sim_seen = true;
        hg_check.sim_seed = seed;
    }
    hg_check_put(hg_check.objs, hg_class, obj, kind);
    pthread_mutex_unlock(&hg_check_lock);
}

void
hg_check_obj_del(const void *obj)
{
    pthread_mutex_lock(&hg_check_lock);
    hg_check_drop(hg_check.objs, obj);
    pthread_mutex_unlock(&hg_check_lock);
}

void
hg_check_margo_add(hg_class_t *hg_class, const void *obj,
                   enum hg_check_kind kind, const char *what)
{
    struct hg_check_rec *rec;

    pthread_mutex_lock(&hg_check_lock);
    rec = hg_check_put(hg_check.objs, hg_class, obj, kind);
    if (rec != NULL)
        rec->what = what;
    pthread_mutex_unlock(&hg_check_lock);
}

void
hg_check_margo_addr_kept(hg_addr_t addr)
{
    struct hg_check_rec *rec;

    pthread_mutex_lock(&hg_check_lock);
    rec = hg_check_find(hg_check.objs, addr, NULL);
    if (rec != NULL && rec->kind == HG_CHECK_ADDR && !rec->reported) {
        rec->reported = true;
        hg_check_report_margo(rec, "margo_finalize");
    }
    pthread_mutex_unlock(&hg_check_lock);
    hg_check_maybe_abort();
}

void
hg_check_target(hg_handle_t handle)
{
    struct hg_check_rec *rec;

    pthread_mutex_lock(&hg_check_lock);
    rec = hg_check_put(hg_check.objs, handle->ctx->hg_class, handle,
                       HG_CHECK_TARGET);
    /* Where the request was dispatched says little; the handler that
     * owns the handle says more, unless it is Margo's dispatcher (the RPC
     * name is then all there is to say). */
    if (rec != NULL) {
        void *cb = handle->rpc != NULL && handle->rpc->rpc_cb != NULL
                       ? (void *) (uintptr_t) handle->rpc->rpc_cb
                       : NULL;

        rec->nframes = cb != NULL && !hg_check_in_library(cb) ? 1 : 0;
        rec->frames[0] = cb;
        rec->is_function = true;
    }
    pthread_mutex_unlock(&hg_check_lock);
}

void
hg_check_op_begin(hg_class_t *hg_class, const void *op, enum hg_check_kind kind)
{
    pthread_mutex_lock(&hg_check_lock);
    hg_check_put(hg_check.ops, hg_class, op, kind);
    pthread_mutex_unlock(&hg_check_lock);
}

void
hg_check_op_end(const void *op)
{
    pthread_mutex_lock(&hg_check_lock);
    hg_check_drop(hg_check.ops, op);
    pthread_mutex_unlock(&hg_check_lock);
}

void
hg_check_op_ran(const struct hg_completion *comp)
{
    struct hg_check_rec *rec;

    if (comp->run == hg_request_run)
        return; /* a request for a handler, not a callback */
    pthread_mutex_lock(&hg_check_lock);
    rec = hg_check_find(hg_check.ops, comp->object, NULL);
    if (rec != NULL && ++rec->runs == 2)
        hg_check_report_twice(rec);
    pthread_mutex_unlock(&hg_check_lock);
    hg_check_maybe_abort();
}

void
hg_check_class_busy(hg_class_t *hg_class)
{
    pthread_mutex_lock(&hg_check_lock);
    hg_check_report_class(hg_class, "HG_Finalize");
    pthread_mutex_unlock(&hg_check_lock);
    hg_check_maybe_abort();
}

void
hg_check_class_gone(hg_class_t *hg_class)
{
    pthread_mutex_lock(&hg_check_lock);
    for (int t = 0; t < 2; t++) {
        struct hg_check_rec **table = t == 0 ? hg_check.objs : hg_check.ops;

        for (size_t b = 0; b < HG_CHECK_BUCKETS; b++) {
            struct hg_check_rec **slot = &table[b];

            while (*slot != NULL) {
                struct hg_check_rec *rec = *slot;

                if (rec->hg_class == hg_class &&
                    rec->kind >= HG_CHECK_MARGO_REQUEST) {
                    /* Margo's objects outlive the class: kept for the
                     * check at exit. */
                    rec->hg_class = NULL;
                    slot = &rec->next;
                } else if (rec->hg_class == hg_class) {
                    *slot = rec->next;
                    free(rec);
                } else {
                    slot = &rec->next;
                }
            }
        }
    }
    pthread_mutex_unlock(&hg_check_lock);
}

/* Every class still alive at exit was never finalized. */
static void
hg_check_at_exit(void)
{
    unsigned int found;

    pthread_mutex_lock(&hg_check_lock);
    for (size_t b = 0; b < HG_CHECK_BUCKETS; b++) {
        for (struct hg_check_rec *rec = hg_check.objs[b]; rec != NULL;
             rec = rec->next) {
            if (rec->kind == HG_CHECK_CLASS)
                hg_check_report_class(rec->hg_class, NULL);
        }
    }
    /* Margo's requests never waited for and timers never destroyed. */
    for (size_t b = 0; b < HG_CHECK_BUCKETS; b++) {
        for (struct hg_check_rec *rec = hg_check.objs[b]; rec != NULL;
             rec = rec->next) {
            if (rec->kind >= HG_CHECK_MARGO_REQUEST && !rec->reported) {
                rec->reported = true;
                hg_check_report_margo(rec, NULL);
            }
        }
    }
    found = hg_check.violations;
    if (found > 0)
        hg_check_report_summary();
    pthread_mutex_unlock(&hg_check_lock);
    hg_check_maybe_abort();
    if (found > 0) {
        fflush(NULL);
        _exit(QS_CHECK_EXIT_STATUS);
    }
}

/* What lib/core and lib/bulk call, through core/hg_core.h. */
static const struct hg_core_check_hooks hg_check_hooks = {
    .obj_add = hg_check_obj_add,
    .obj_del = hg_check_obj_del,
    .op_begin = hg_check_op_begin,
    .op_end = hg_check_op_end,
    .op_ran = hg_check_op_ran,
};

static void
hg_check_start(bool abort_mode)
{
    pthread_mutex_lock(&hg_check_lock);
    hg_check.abort_mode = hg_check.abort_mode || abort_mode;
    if (!hg_check.started) {
        hg_check.started = true;
        hg_check_find_library();
        atexit(hg_check_at_exit);
    }
    pthread_mutex_unlock(&hg_check_lock);
    atomic_store(&hg_core_check_hooks, &hg_check_hooks);
    atomic_store(&hg_check_on, true);
}

__attribute__((constructor)) static void
hg_check_from_env(void)
{
    const char *env = getenv(QS_CHECK_ENV);

    if (env == NULL || env[0] == '\0' || strcmp(env, "0") == 0)
        return;
    hg_check_start(strcmp(env, "abort") == 0);
}

int
qs_check_enable(void)
{
    hg_check_start(false);
    return 0;
}

int
qs_check_enabled(void)
{
    return atomic_load(&hg_check_on) ? 1 : 0;
}

unsigned int
qs_check_violations(void)
{
    unsigned int n;

    pthread_mutex_lock(&hg_check_lock);
    n = hg_check.violations;
    pthread_mutex_unlock(&hg_check_lock);
    return n;
}

void
qs_check_clear(void)
{
    pthread_mutex_lock(&hg_check_lock);
    hg_check.violations = 0;
    hg_check.first[0] = '\0';
    pthread_mutex_unlock(&hg_check_lock);
}
