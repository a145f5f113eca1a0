/*
 * A Margo service and its client in one process, using the run-time
 * parameters, the progress counters and the current RPC id: the handler
 * checks that margo_get_current_rpc_id() names its own RPC, and a ULT the
 * handler starts on the handler pool carries the id on with
 * margo_set_current_rpc_id().
 *   margo_params_prog ADDRESS     (e.g. "sim://params" or "ofi+tcp")
 */
#include <margo.h>
#include <margo-util.h>

#include <stdio.h>
#include <string.h>

MERCURY_GEN_PROC(echo_in_t, ((int32_t) (x)))
MERCURY_GEN_PROC(echo_out_t, ((int32_t) (x))((int32_t) (id_ok)))

struct child_args {
    margo_instance_id mid;
    hg_id_t parent, seen;
};

static void
child_ult(void *arg)
{
    struct child_args *c = arg;

    margo_set_current_rpc_id(c->mid, c->parent);
    margo_get_current_rpc_id(c->mid, &c->seen);
}

static void
echo_ult(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    const struct hg_info *info = margo_get_info(h);
    echo_in_t in;
    echo_out_t out;
    hg_id_t cur = 0;
    struct child_args c = {mid, info->id, 0};
    ABT_pool pool;
    ABT_thread t;

    margo_get_input(h, &in);
    margo_get_current_rpc_id(mid, &cur);
    margo_get_handler_pool(mid, &pool);
    ABT_thread_create(pool, child_ult, &c, ABT_THREAD_ATTR_NULL, &t);
    ABT_thread_free(&t);
    out.x = in.x;
    out.id_ok = cur == info->id && c.seen == info->id;
    margo_respond(h, &out);
    margo_free_input(h, &in);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(echo_ult)

int
main(int argc, char **argv)
{
    const char *addr = argc > 1 ? argv[1] : "sim://params";
    margo_instance_id mid;
    hg_id_t id;
    hg_addr_t self;
    hg_handle_t h;
    echo_in_t in = {41};
    echo_out_t out;
    unsigned ub = 0;
    uint64_t progress;
    int ok = 1;

    if (margo_set_environment(NULL) != 0)
        return 1;
    mid = margo_init(addr, MARGO_SERVER_MODE, 0, 1);
    if (mid == MARGO_INSTANCE_NULL)
        return 1;
    ok &= margo_set_param(mid, "progress_timeout_ub_msecs", "20") == 0;
    ok &= margo_get_progress_timeout_ub_msec(mid, &ub) == 0 && ub == 20;
    ok &= margo_set_param(mid, "no_such_parameter", "1") == -1;
    progress = margo_get_num_progress_calls(mid);

    id = MARGO_REGISTER(mid, "echo", echo_in_t, echo_out_t, echo_ult);
    margo_addr_self(mid, &self);
    margo_create(mid, self, id, &h);
    ok &= margo_forward(h, &in) == HG_SUCCESS;
    ok &= margo_get_output(h, &out) == HG_SUCCESS;
    ok &= out.x == 41 && out.id_ok;
    margo_free_output(h, &out);
    margo_destroy(h);
    margo_addr_free(mid, self);
    ok &= margo_get_num_progress_calls(mid) > progress;
    ok &= margo_get_num_trigger_calls(mid) > 0;
    margo_finalize(mid);
    printf("margo_params_prog: %s\n", ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
