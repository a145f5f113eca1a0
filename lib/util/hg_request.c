/*
 * Mercury's request helper (include/mercury_request.h).
 */
#include "mercury_request.h"

#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

/* Longest single progress call while waiting, so a completion signalled
 * by another thread is noticed within this many ms. */
#define HG_REQUEST_PROGRESS_SLICE_MS 100u

struct hg_request_class {
    hg_request_progress_func_t progress;
    hg_request_trigger_func_t trigger;
    void *arg;
};

hg_request_class_t *
hg_request_init(hg_request_progress_func_t progress,
                hg_request_trigger_func_t trigger, void *arg)
{
    hg_request_class_t *request_class;

    if (progress == NULL || trigger == NULL)
        return NULL;
    request_class = malloc(sizeof(*request_class));
    if (request_class == NULL)
        return NULL;
    request_class->progress = progress;
    request_class->trigger = trigger;
    request_class->arg = arg;
    return request_class;
}

void
hg_request_finalize(hg_request_class_t *request_class, void **arg)
{
    if (request_class == NULL)
        return;
    if (arg != NULL)
        *arg = request_class->arg;
    free(request_class);
}

hg_request_t *
hg_request_create(hg_request_class_t *request_class)
{
    hg_request_t *request;

    if (request_class == NULL)
        return NULL;
    request = malloc(sizeof(*request));
    if (request == NULL)
        return NULL;
    request->request_class = request_class;
    request->data = NULL;
    __atomic_store_n(&request->completed, 0, __ATOMIC_RELAXED);
    return request;
}

void
hg_request_destroy(hg_request_t *request)
{
    free(request);
}

static uint64_t
hg_request_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

static bool
hg_request_done(hg_request_t *request)
{
    return __atomic_load_n(&request->completed, __ATOMIC_ACQUIRE) != 0;
}

int
hg_request_wait(hg_request_t *request, unsigned int timeout, unsigned int *flag)
{
    const hg_request_class_t *rc;
    uint64_t deadline, now;
    bool completed;

    if (request == NULL || request->request_class == NULL)
        return HG_UTIL_FAIL;
    rc = request->request_class;
    now = timeout ? hg_request_now_ms() : 0;
    deadline = now + timeout;
    /* As Mercury: trigger, look, progress; a zero timeout progresses once
     * without blocking. */
    do {
        unsigned int triggered;
        uint64_t remaining = deadline - now;

        do {
            triggered = 0;
        } while (rc->trigger(0, &triggered, rc->arg) == HG_UTIL_SUCCESS &&
                 triggered);
        completed = hg_request_done(request);
        if (completed)
            break;
        rc->progress(remaining < HG_REQUEST_PROGRESS_SLICE_MS
                         ? (unsigned int) remaining
                         : HG_REQUEST_PROGRESS_SLICE_MS,
                     rc->arg);
        if (timeout != 0)
            now = hg_request_now_ms();
    } while (now < deadline);
    if (flag != NULL)
        *flag = completed;
    return HG_UTIL_SUCCESS;
}
