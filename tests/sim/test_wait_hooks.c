/*
 * When a simulated fabric tells the thread runtime that a thread waits in
 * it (na_runtime.h: wait_enter, wait_leave), the fabric must already know
 * that thread as one of its pollers, and no other waiter may see the
 * thread between the two states.
 *
 * Why: a waiter moves the clock to its deadline once nothing is due, no
 * completion waits for another thread and the runtime says nobody is at
 * work (na_sim_others_hold). A progress thread entering its first wait
 * was once declared idle before the world learnt that a second thread
 * polls it: a client waiting for the reply then saw a world driven by one
 * thread, the server's request untriggered and nobody at work, and jumped
 * to its deadline, so its timed call expired while the server was about
 * to run it (test_margo_clock_sim under load, about 1 run in 40).
 *
 * The check is structural, so that it fails on every run: the hooks,
 * called on a thread polling the world for the first time, look at the
 * world's state and at whether its lock is held.
 *
 * And the count of pollers goes both ways: a world whose other pollers
 * have exited is driven by one thread again.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "na.h"
#include "na/na_runtime.h"
#include "na_sim_internal.h"

/* What the hooks saw on the second thread. */
struct wh_seen {
    pthread_t thread;
    struct na_sim_world *world;
    int enters, leaves;
    bool enter_multi;    /* world->multi_threaded at wait_enter */
    bool enter_locked;   /* the world lock held at wait_enter */
    bool leave_unlisted; /* the thread no longer listed at wait_leave */
    bool leave_locked;   /* the world lock held at wait_leave */
};

static struct wh_seen wh_seen;

/* Whether the calling thread holds the world lock: a default mutex that
 * its holder tries again reports EBUSY (nobody else runs meanwhile). */
static bool
wh_lock_held(void)
{
    int rc = pthread_mutex_trylock(&wh_seen.world->lock);

    if (rc == 0)
        pthread_mutex_unlock(&wh_seen.world->lock);
    return rc == EBUSY;
}

static bool
wh_listed(void)
{
    for (unsigned int i = 0; i < wh_seen.world->waiting_count; i++)
        if (pthread_equal(wh_seen.world->waiting[i].thread, pthread_self()))
            return true;
    return false;
}

static bool
wh_busy(void)
{
    return false;
}

static void
wh_wait_enter(void)
{
    if (!pthread_equal(pthread_self(), wh_seen.thread))
        return;
    wh_seen.enters++;
    wh_seen.enter_multi = wh_seen.world->multi_threaded;
    wh_seen.enter_locked = wh_lock_held();
}

static void
wh_wait_leave(void)
{
    if (!pthread_equal(pthread_self(), wh_seen.thread))
        return;
    wh_seen.leaves++;
    wh_seen.leave_unlisted = !wh_listed();
    wh_seen.leave_locked = wh_lock_held();
}

static const struct na_runtime_hooks wh_hooks = {
    .busy = wh_busy,
    .wait_enter = wh_wait_enter,
    .wait_leave = wh_wait_leave,
};

struct wh_poll {
    na_class_t *na;
    na_context_t *ctx;
    na_return_t ret;
};

static void *
wh_poller(void *arg)
{
    struct wh_poll *p = arg;
    unsigned int count = 0;

    wh_seen.thread = pthread_self();
    /* Nothing will come: the wait ends at its deadline. */
    p->ret = NA_Poll_wait(p->na, p->ctx, 1, &count);
    return NULL;
}

static void
test_second_poller_noted_before_idle(void **state)
{
    na_class_t *client, *server;
    na_context_t *cctx, *sctx;
    struct wh_poll poll;
    unsigned int count = 0;
    pthread_t t;

    (void) state;
    client = NA_Initialize("sim://wh-client", true);
    assert_non_null(client);
    server = NA_Initialize("sim://wh-server", true);
    assert_non_null(server);
    cctx = NA_Context_create(client);
    sctx = NA_Context_create(server);
    assert_non_null(cctx);
    assert_non_null(sctx);
    wh_seen.world = ((struct na_sim_node *) server->plugin_class)->world;

    /* This thread is the world's first poller. */
    assert_int_equal(NA_Poll(client, cctx, &count), NA_SUCCESS);
    assert_false(wh_seen.world->multi_threaded);

    na_runtime_set_hooks(&wh_hooks);
    poll.na = server;
    poll.ctx = sctx;
    poll.ret = NA_PROTOCOL_ERROR;
    assert_int_equal(pthread_create(&t, NULL, wh_poller, &poll), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    na_runtime_set_hooks(NULL);
    assert_int_equal(poll.ret, NA_TIMEOUT);

    assert_int_equal(wh_seen.enters, 1);
    assert_int_equal(wh_seen.leaves, 1);
    assert_true(wh_seen.enter_multi);
    assert_true(wh_seen.enter_locked);
    assert_true(wh_seen.leave_unlisted);
    assert_true(wh_seen.leave_locked);

    assert_int_equal(NA_Context_destroy(client, cctx), NA_SUCCESS);
    assert_int_equal(NA_Context_destroy(server, sctx), NA_SUCCESS);
    assert_int_equal(NA_Finalize(client), NA_SUCCESS);
    assert_int_equal(NA_Finalize(server), NA_SUCCESS);
}

/* A helper thread that polls the world once, then waits (alive) until
 * told to exit. */
struct wh_helper {
    na_class_t *na;
    na_context_t *ctx;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool polled, go;
};

static void *
wh_helper_main(void *arg)
{
    struct wh_helper *h = arg;
    unsigned int count = 0;

    (void) NA_Poll(h->na, h->ctx, &count);
    pthread_mutex_lock(&h->lock);
    h->polled = true;
    pthread_cond_broadcast(&h->cond);
    while (!h->go)
        pthread_cond_wait(&h->cond, &h->lock);
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

/* A world whose second poller has exited is driven by one thread again:
 * its waits stop waiting on real time (a program's joined helper
 * threads once left every later wait of the world 1 ms of real time
 * first, so that long virtual waits ran at about real time). While the
 * helper lives, the world stays multi-threaded. */
static void
test_exited_poller_leaves_one_thread(void **state)
{
    na_class_t *client, *server;
    na_context_t *cctx, *sctx;
    struct na_sim_world *world;
    struct wh_helper h;
    unsigned int count = 0;
    pthread_t t;

    (void) state;
    client = NA_Initialize("sim://wh-client", true);
    server = NA_Initialize("sim://wh-server", true);
    assert_non_null(client);
    assert_non_null(server);
    cctx = NA_Context_create(client);
    sctx = NA_Context_create(server);
    assert_non_null(cctx);
    assert_non_null(sctx);
    world = ((struct na_sim_node *) server->plugin_class)->world;
    assert_int_equal(NA_Poll(client, cctx, &count), NA_SUCCESS);
    assert_false(world->multi_threaded);

    memset(&h, 0, sizeof(h));
    h.na = server;
    h.ctx = sctx;
    pthread_mutex_init(&h.lock, NULL);
    pthread_cond_init(&h.cond, NULL);
    assert_int_equal(pthread_create(&t, NULL, wh_helper_main, &h), 0);
    pthread_mutex_lock(&h.lock);
    while (!h.polled)
        pthread_cond_wait(&h.cond, &h.lock);
    pthread_mutex_unlock(&h.lock);

    /* The helper polled and lives: two pollers. */
    assert_int_equal(NA_Poll(client, cctx, &count), NA_SUCCESS);
    assert_true(world->multi_threaded);
    assert_int_equal(world->live_pollers, 2);

    pthread_mutex_lock(&h.lock);
    h.go = true;
    pthread_cond_broadcast(&h.cond);
    pthread_mutex_unlock(&h.lock);
    assert_int_equal(pthread_join(t, NULL), 0);

    /* It exited: the next poll finds one live poller. */
    assert_int_equal(world->live_pollers, 1);
    assert_int_equal(NA_Poll(client, cctx, &count), NA_SUCCESS);
    assert_false(world->multi_threaded);
    /* And this thread alone polling the other context changes nothing. */
    assert_int_equal(NA_Poll(server, sctx, &count), NA_SUCCESS);
    assert_false(world->multi_threaded);

    pthread_cond_destroy(&h.cond);
    pthread_mutex_destroy(&h.lock);
    assert_int_equal(NA_Context_destroy(client, cctx), NA_SUCCESS);
    assert_int_equal(NA_Context_destroy(server, sctx), NA_SUCCESS);
    assert_int_equal(NA_Finalize(client), NA_SUCCESS);
    assert_int_equal(NA_Finalize(server), NA_SUCCESS);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_poller_noted_before_idle),
        cmocka_unit_test(test_exited_poller_leaves_one_thread),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
