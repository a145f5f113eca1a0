/*
 * The hot-path bias (lib/util/qs_bias.h) revoked in the middle of real
 * traffic. A one-thread process runs an sm server class, whose watchdog
 * gives this thread the bias, and a client class with eight RPCs in
 * flight; then a second thread takes over the client's trigger (the
 * answers' callbacks, which forward again) while the first keeps
 * progressing both classes, so the two threads share the client
 * context's completion queue, and the second's first trigger revokes the
 * bias with the first inside its sections. Every answer must come back right
 * (the server returns 3 * x + 1), before and after, and the bias must be
 * held before the second thread and revoked after it. Each round is a
 * forked child (a bias is taken once per process), and the rounds start
 * the second thread after different numbers of answers.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mercury.h"
#include "mercury_macros.h"
#include "unit/bias_expected.h"

MERCURY_GEN_PROC(bias_in_t, ((uint64_t) (x)))
MERCURY_GEN_PROC(bias_out_t, ((uint64_t) (y)))

#define BIAS_ROUNDS 8
#define BIAS_INFLIGHT 8
#define BIAS_AFTER 3000 /* answers after the second thread started */
#define BIAS_LIMIT_NS (20ull * 1000000000ull)

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "test_hg_bias: %s:%d: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
            _exit(1);                                                          \
        }                                                                      \
    } while (0)

struct slot {
    hg_handle_t handle;
    uint64_t x;
};

static struct {
    hg_class_t *server, *client;
    hg_context_t *sctx, *cctx;
    struct slot slots[BIAS_INFLIGHT];
    atomic_uint answered;
    uint64_t next_x, total; /* forwards made, and to make */
    atomic_int stop;
} b;

static uint64_t
bias_state(void)
{
    struct hg_stats st;

    memset(&st, 0, sizeof(st));
    CHECK(HG_Class_get_stats(b.server, &st) == HG_SUCCESS);
    return st.hot_path_bias;
}

static hg_return_t
echo_rpc(hg_handle_t handle)
{
    bias_in_t in;
    bias_out_t out;

    CHECK(HG_Get_input(handle, &in) == HG_SUCCESS);
    out.y = 3 * in.x + 1;
    CHECK(HG_Free_input(handle, &in) == HG_SUCCESS);
    CHECK(HG_Respond(handle, NULL, NULL, &out) == HG_SUCCESS);
    return HG_Destroy(handle);
}

static void forward(struct slot *s);

static hg_return_t
answered(const struct hg_cb_info *info)
{
    struct slot *s = info->arg;
    bias_out_t out;

    CHECK(info->ret == HG_SUCCESS);
    CHECK(HG_Get_output(s->handle, &out) == HG_SUCCESS);
    CHECK(out.y == 3 * s->x + 1);
    CHECK(HG_Free_output(s->handle, &out) == HG_SUCCESS);
    atomic_fetch_add(&b.answered, 1);
    if (b.next_x < b.total)
        forward(s);
    return HG_SUCCESS;
}

static void
forward(struct slot *s)
{
    bias_in_t in;

    s->x = b.next_x++;
    in.x = s->x;
    CHECK(HG_Forward(s->handle, answered, s, &in) == HG_SUCCESS);
}

/* The first thread progresses both classes and runs the server's
 * handlers; it runs the client's callbacks too unless the second thread
 * does. */
static void
pump(bool client_trigger)
{
    unsigned int n;

    HG_Progress(b.cctx, 0);
    if (client_trigger)
        HG_Trigger(b.cctx, 0, 64, &n);
    HG_Progress(b.sctx, 0);
    HG_Trigger(b.sctx, 0, 64, &n);
}

static void
run_until(unsigned int target, bool client_trigger)
{
    uint64_t limit = HG_Clock_now(b.client) + BIAS_LIMIT_NS;

    while (atomic_load(&b.answered) < target) {
        if (HG_Clock_now(b.client) >= limit)
            fprintf(stderr, "test_hg_bias: %u of %u answers\n",
                    atomic_load(&b.answered), target);
        CHECK(HG_Clock_now(b.client) < limit);
        pump(client_trigger);
    }
}

static void *
trigger_thread(void *arg)
{
    unsigned int n;

    while (!atomic_load(&b.stop))
        HG_Trigger(b.cctx, 0, 64, &n);
    return arg;
}

static void
round_child(unsigned int before, bool expected)
{
    struct hg_init_info ii = HG_INIT_INFO_INITIALIZER;
    char self[256];
    hg_size_t len = sizeof(self);
    hg_addr_t saddr, addr;
    hg_id_t id;
    pthread_t t;

    b.server = HG_Init("na+sm", HG_TRUE);
    CHECK(b.server != NULL);
    ii.no_probe = HG_TRUE;
    b.client = HG_Init_opt("na+sm", HG_FALSE, &ii);
    CHECK(b.client != NULL);
    b.sctx = HG_Context_create(b.server);
    b.cctx = HG_Context_create(b.client);
    CHECK(b.sctx != NULL && b.cctx != NULL);
    id = MERCURY_REGISTER(b.server, "bias_echo", bias_in_t, bias_out_t,
                          echo_rpc);
    CHECK(MERCURY_REGISTER(b.client, "bias_echo", bias_in_t, bias_out_t,
                           NULL) == id);
    CHECK(HG_Addr_self(b.server, &saddr) == HG_SUCCESS);
    CHECK(HG_Addr_to_string(b.server, self, &len, saddr) == HG_SUCCESS);
    CHECK(HG_Addr_free(b.server, saddr) == HG_SUCCESS);
    CHECK(HG_Addr_lookup2(b.client, self, &addr) == HG_SUCCESS);
    CHECK(bias_state() == (expected ? 1u : 0u));
    b.total = before + BIAS_AFTER + 100;
    for (int i = 0; i < BIAS_INFLIGHT; i++) {
        CHECK(HG_Create(b.cctx, addr, id, &b.slots[i].handle) == HG_SUCCESS);
        forward(&b.slots[i]);
    }
    run_until(before, true);
    CHECK(bias_state() == (expected ? 1u : 0u));
    CHECK(pthread_create(&t, NULL, trigger_thread, NULL) == 0);
    run_until(before + BIAS_AFTER, false);
    atomic_store(&b.stop, 1);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(bias_state() == (expected ? 4u : 0u));
    /* The last ones: the callbacks are this thread's again. */
    run_until((unsigned int) b.total, true);
    for (int i = 0; i < BIAS_INFLIGHT; i++)
        CHECK(HG_Destroy(b.slots[i].handle) == HG_SUCCESS);
    for (int i = 0; i < 16; i++)
        pump(true);
    CHECK(HG_Addr_free(b.client, addr) == HG_SUCCESS);
    CHECK(HG_Context_destroy(b.cctx) == HG_SUCCESS);
    CHECK(HG_Context_destroy(b.sctx) == HG_SUCCESS);
    CHECK(HG_Finalize(b.client) == HG_SUCCESS);
    CHECK(HG_Finalize(b.server) == HG_SUCCESS);
}

int
main(void)
{
    bool expected = bias_expected();
    hg_class_t *probe = HG_Init("na+sm", HG_FALSE);

    if (probe == NULL) {
        printf("test_hg_bias: no sm plugin in this build: skipped\n");
        return 77;
    }
    HG_Finalize(probe);
    if (!expected)
        printf("test_hg_bias: no hot-path bias in this build or kernel; "
               "the traffic runs with the locks taken\n");
    for (unsigned int r = 0; r < BIAS_ROUNDS; r++) {
        unsigned int before = 200 + 397 * r;
        pid_t pid = fork();
        int status;

        if (pid < 0)
            return 1;
        if (pid == 0) {
            round_child(before, expected);
            _exit(0);
        }
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            fprintf(stderr, "test_hg_bias: FAILED in round %u\n", r);
            return 1;
        }
    }
    printf("test_hg_bias: OK (%d rounds, bias %s)\n", BIAS_ROUNDS,
           expected ? "held, then revoked mid-traffic" : "not available");
    return 0;
}
