/* Starts one thread and joins it: one_thread_selftest runs it with
 * one_thread_shim.c preloaded, which must record it. */
#include <pthread.h>
#include <stdio.h>

static void *
run(void *arg)
{
    return arg;
}

int
main(void)
{
    static int token;
    pthread_t t;
    void *ret = NULL;

    if (pthread_create(&t, NULL, run, &token) != 0 ||
        pthread_join(t, &ret) != 0 || ret != &token) {
        fprintf(stderr, "thread_probe: the thread did not run\n");
        return 1;
    }
    printf("thread_probe: a thread ran\n");
    return 0;
}
