/*
 * A program that loads the library with dlopen(), polls a simulated world
 * from a second thread, finalizes and dlclose()s the library, and only
 * then lets that thread exit. The thread's exit runs the fabric's
 * thread-exit destructor (plugins/sim/na_sim.c counts a world's live
 * pollers), so the library must still be mapped: it is linked with
 * -z nodelete. Without it the exiting thread jumps into unmapped code.
 *
 * Usage: test_dlclose PATH_TO_LIBQUICKSILVER; prints "dlclose: OK".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "na.h"

typedef na_class_t *(*init_fn)(const char *, bool);
typedef na_context_t *(*ctx_create_fn)(na_class_t *);
typedef na_return_t (*ctx_destroy_fn)(na_class_t *, na_context_t *);
typedef na_return_t (*poll_fn)(na_class_t *, na_context_t *, unsigned int *);
typedef na_return_t (*finalize_fn)(na_class_t *);

struct dl_poller {
    poll_fn poll;
    na_class_t *na;
    na_context_t *ctx;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool polled, go;
    na_return_t ret;
};

static void *
dl_poller_main(void *arg)
{
    struct dl_poller *p = arg;
    unsigned int count = 0;

    p->ret = p->poll(p->na, p->ctx, &count);
    pthread_mutex_lock(&p->lock);
    p->polled = true;
    pthread_cond_broadcast(&p->cond);
    while (!p->go)
        pthread_cond_wait(&p->cond, &p->lock);
    pthread_mutex_unlock(&p->lock);
    return NULL; /* the destructor runs after this */
}

static void *
dl_sym(void *lib, const char *name)
{
    void *f = dlsym(lib, name);

    if (f == NULL) {
        fprintf(stderr, "dlclose: no %s: %s\n", name, dlerror());
        exit(1);
    }
    return f;
}

int
main(int argc, char **argv)
{
    struct dl_poller p = {.lock = PTHREAD_MUTEX_INITIALIZER,
                          .cond = PTHREAD_COND_INITIALIZER};
    init_fn init;
    ctx_create_fn ctx_create;
    ctx_destroy_fn ctx_destroy;
    finalize_fn finalize;
    unsigned int count = 0;
    pthread_t t;
    void *lib;

    if (argc != 2) {
        fprintf(stderr, "usage: test_dlclose LIBRARY\n");
        return 2;
    }
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "dlclose: dlopen: %s\n", dlerror());
        return 1;
    }
    init = (init_fn) dl_sym(lib, "NA_Initialize");
    ctx_create = (ctx_create_fn) dl_sym(lib, "NA_Context_create");
    ctx_destroy = (ctx_destroy_fn) dl_sym(lib, "NA_Context_destroy");
    p.poll = (poll_fn) dl_sym(lib, "NA_Poll");
    finalize = (finalize_fn) dl_sym(lib, "NA_Finalize");

    p.na = init("sim://dl", true);
    if (p.na == NULL || (p.ctx = ctx_create(p.na)) == NULL) {
        fprintf(stderr, "dlclose: no sim class or context\n");
        return 1;
    }
    /* This thread polls first; the helper is the world's second poller. */
    if (p.poll(p.na, p.ctx, &count) != NA_SUCCESS ||
        pthread_create(&t, NULL, dl_poller_main, &p) != 0)
        return 1;
    pthread_mutex_lock(&p.lock);
    while (!p.polled)
        pthread_cond_wait(&p.cond, &p.lock);
    pthread_mutex_unlock(&p.lock);
    if (p.ret != NA_SUCCESS || ctx_destroy(p.na, p.ctx) != NA_SUCCESS ||
        finalize(p.na) != NA_SUCCESS) {
        fprintf(stderr, "dlclose: poll or finalize failed\n");
        return 1;
    }
    if (dlclose(lib) != 0) {
        fprintf(stderr, "dlclose: %s\n", dlerror());
        return 1;
    }
    pthread_mutex_lock(&p.lock);
    p.go = true;
    pthread_cond_broadcast(&p.cond);
    pthread_mutex_unlock(&p.lock);
    pthread_join(t, NULL);
    printf("dlclose: OK\n");
    return 0;
}
