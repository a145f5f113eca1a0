/*
 * Mercury's request helper: wait for a completion that a callback
 * signals, by driving a caller-supplied progress and trigger function.
 *
 * A program creates one request class over its progress / trigger pair
 * (usually wrapping HG_Progress() and HG_Trigger() on one context), then
 * per operation: hg_request_create(), start the operation with a callback
 * that calls hg_request_complete(), hg_request_wait(), and
 * hg_request_destroy() (or hg_request_reset() to reuse it).
 *
 * Names, types and semantics are Mercury 2.4's (mercury_util). The request
 * structure is public as in Mercury; read it through the functions.
 */
#ifndef MERCURY_REQUEST_H
#define MERCURY_REQUEST_H

#include "qs_export.h"
#include <stdint.h>

#ifndef HG_UTIL_SUCCESS
#define HG_UTIL_SUCCESS 0
#define HG_UTIL_FAIL -1
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hg_request_class hg_request_class_t; /* opaque */
typedef struct hg_request hg_request_t;

struct hg_request {
    hg_request_class_t *request_class;
    void *data;
    int32_t completed; /* accessed atomically */
};

/*
 * Progress for up to `timeout` ms; return HG_UTIL_SUCCESS or
 * HG_UTIL_FAIL (a failure, e.g. HG_TIMEOUT, does not stop a wait).
 */
typedef int (*hg_request_progress_func_t)(unsigned int timeout, void *arg);

/*
 * Run completion callbacks, waiting up to `timeout` ms; set *flag to
 * whether any ran. HG_UTIL_SUCCESS, or HG_UTIL_FAIL when none could run.
 */
typedef int (*hg_request_trigger_func_t)(unsigned int timeout,
                                         unsigned int *flag, void *arg);

/* A class over a progress and a trigger function, both given `arg`.
 * NULL when out of memory or a function is NULL. */
QS_EXPORT hg_request_class_t *
hg_request_init(hg_request_progress_func_t progress,
                hg_request_trigger_func_t trigger, void *arg);

/* Free the class (NULL is a no-op); *arg (if arg is not NULL) receives the
 * argument given to hg_request_init(). Requests of the class must be
 * destroyed first. */
QS_EXPORT void hg_request_finalize(hg_request_class_t *request_class,
                                   void **arg);

/* A new, not completed request with data NULL; NULL when out of memory
 * or request_class is NULL. */
QS_EXPORT hg_request_t *hg_request_create(hg_request_class_t *request_class);

/* Free a request (NULL is a no-op). */
QS_EXPORT void hg_request_destroy(hg_request_t *request);

/*
 * Trigger until nothing more runs, and return once the request has
 * completed or `timeout` ms (real time) have passed, progressing in
 * between. timeout 0 looks and progresses once without blocking. *flag (if flag
 * is not NULL) receives whether the request completed. Returns HG_UTIL_SUCCESS
 * (HG_UTIL_FAIL for a NULL request).
 */
QS_EXPORT int hg_request_wait(hg_request_t *request, unsigned int timeout,
                              unsigned int *flag);

/* Mark the request not completed, to reuse it. */
static inline void
hg_request_reset(hg_request_t *request)
{
    __atomic_store_n(&request->completed, 0, __ATOMIC_RELEASE);
}

/* Mark the request completed; a waiter sees it at its next check. Usually
 * called from the operation's completion callback. */
static inline void
hg_request_complete(hg_request_t *request)
{
    __atomic_store_n(&request->completed, 1, __ATOMIC_RELEASE);
}

/* hg_request_wait() on each request in turn, each with `timeout`; *flag
 * is that of the last one. Returns HG_UTIL_SUCCESS. */
static inline int
hg_request_waitall(int count, hg_request_t *request[], unsigned int timeout,
                   unsigned int *flag)
{
    for (int i = 0; i < count; i++)
        hg_request_wait(request[i], timeout, flag);
    return HG_UTIL_SUCCESS;
}

/* Attach user data to a request. */
static inline void
hg_request_set_data(hg_request_t *request, void *data)
{
    request->data = data;
}

/* The user data attached with hg_request_set_data(). */
static inline void *
hg_request_get_data(hg_request_t *request)
{
    return request->data;
}

#ifdef __cplusplus
}
#endif

#endif /* MERCURY_REQUEST_H */
