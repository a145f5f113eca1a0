/*
 * The invariant checker (include/qs_check.h) for a Margo program: a
 * server and a client instance in one process on the simulated fabric,
 * with one leak planted per mode. check_qc_margo.sh runs each mode with
 * and without QS_CHECK=1 and checks what the checker says.
 *
 *   clean    everything released: no report
 *   request  margo_iforward() whose request is never margo_wait()ed
 *   timer    margo_timer_create() never margo_timer_destroy()ed
 *   addr     margo_addr_lookup() kept to margo_finalize()
 *   handle   margo_create() never margo_destroy()ed
 *   bulk     margo_bulk_create() never margo_bulk_free()d
 *
 * Each leak is made in a function of its own (qc_leak_<mode>), which the
 * report must name as the place the object was created.
 */
#include <margo.h>
#include <margo-timer.h>
#include <mercury_macros.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

MERCURY_GEN_PROC(qc_val_t, ((int32_t) (v)))

static void
qc_echo(hg_handle_t h)
{
    qc_val_t in;

    if (margo_get_input(h, &in) == HG_SUCCESS) {
        margo_respond(h, &in);
        margo_free_input(h, &in);
    }
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(qc_echo)

static margo_instance_id qc_srv, qc_cli;
static hg_id_t qc_id;
static hg_addr_t qc_addr = HG_ADDR_NULL;
static char qc_srv_name[256];

#define QC_NOINLINE __attribute__((noinline))

static void
qc_timer_cb(void *arg)
{
    (void) arg;
}

/* One round trip through margo_iforward and margo_wait. */
static void
qc_call(hg_addr_t addr)
{
    hg_handle_t h;
    margo_request req;
    qc_val_t in = {.v = 7}, out;

    if (margo_create(qc_cli, addr, qc_id, &h) != HG_SUCCESS ||
        margo_iforward(h, &in, &req) != HG_SUCCESS ||
        margo_wait(req) != HG_SUCCESS ||
        margo_get_output(h, &out) != HG_SUCCESS || out.v != 7) {
        fprintf(stderr, "qc_margo: round trip failed\n");
        exit(2);
    }
    margo_free_output(h, &out);
    margo_destroy(h);
}

QC_NOINLINE static void
qc_leak_request(void)
{
    hg_handle_t h;
    margo_request req;
    qc_val_t in = {.v = 1}, out;

    margo_create(qc_cli, qc_addr, qc_id, &h);
    margo_iforward(h, &in, &req); /* the planted leak: never waited for */
    /* A blocking call drives progress until the first one is answered. */
    qc_call(qc_addr);
    if (margo_get_output(h, &out) == HG_SUCCESS)
        margo_free_output(h, &out);
    margo_destroy(h);
}

QC_NOINLINE static void
qc_leak_timer(void)
{
    margo_timer_t t;

    margo_timer_create(qc_cli, qc_timer_cb, NULL, &t); /* never destroyed */
}

QC_NOINLINE static void
qc_leak_addr(void)
{
    hg_addr_t a;

    margo_addr_lookup(qc_cli, qc_srv_name, &a); /* kept to finalize */
    qc_call(a);
}

QC_NOINLINE static void
qc_leak_handle(void)
{
    hg_handle_t h;

    margo_create(qc_cli, qc_addr, qc_id, &h); /* never destroyed */
}

static char qc_buf[4096];

QC_NOINLINE static void
qc_leak_bulk(void)
{
    hg_bulk_t b;
    void *p = qc_buf;
    hg_size_t sz = sizeof(qc_buf);

    margo_bulk_create(qc_cli, 1, &p, &sz, HG_BULK_READ_ONLY, &b);
}

/* The clean program does each of the above and releases it. */
static void
qc_clean(void)
{
    margo_timer_t t;
    hg_bulk_t b;
    hg_addr_t a;
    void *p = qc_buf;
    hg_size_t sz = sizeof(qc_buf);

    margo_timer_create(qc_cli, qc_timer_cb, NULL, &t);
    margo_timer_start(t, 1000.0);
    margo_timer_destroy(t);
    margo_bulk_create(qc_cli, 1, &p, &sz, HG_BULK_READ_ONLY, &b);
    margo_bulk_free(b);
    margo_addr_lookup(qc_cli, qc_srv_name, &a);
    qc_call(a);
    margo_addr_free(qc_cli, a);
}

int
main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "clean";
    hg_size_t n = sizeof(qc_srv_name);
    hg_addr_t self;

    qc_srv = margo_init("sim", MARGO_SERVER_MODE, 0, 0);
    qc_cli = margo_init("sim", MARGO_CLIENT_MODE, 0, 0);
    if (qc_srv == MARGO_INSTANCE_NULL || qc_cli == MARGO_INSTANCE_NULL)
        return 2;
    MARGO_REGISTER(qc_srv, "qc_echo", qc_val_t, qc_val_t, qc_echo);
    qc_id = MARGO_REGISTER(qc_cli, "qc_echo", qc_val_t, qc_val_t, NULL);
    margo_addr_self(qc_srv, &self);
    margo_addr_to_string(qc_srv, qc_srv_name, &n, self);
    margo_addr_free(qc_srv, self);
    margo_addr_lookup(qc_cli, qc_srv_name, &qc_addr);
    qc_call(qc_addr);

    if (strcmp(mode, "clean") == 0)
        qc_clean();
    else if (strcmp(mode, "request") == 0)
        qc_leak_request();
    else if (strcmp(mode, "timer") == 0)
        qc_leak_timer();
    else if (strcmp(mode, "addr") == 0)
        qc_leak_addr();
    else if (strcmp(mode, "handle") == 0)
        qc_leak_handle();
    else if (strcmp(mode, "bulk") == 0)
        qc_leak_bulk();
    else {
        fprintf(stderr, "qc_margo: unknown mode %s\n", mode);
        return 2;
    }
    margo_addr_free(qc_cli, qc_addr);
    margo_finalize(qc_cli);
    margo_finalize(qc_srv);
    printf("qc_margo %s: done\n", mode);
    return 0;
}
