/*
 * The tutorial's server and client, unchanged, in one process and one
 * thread over the simulated fabric.
 *
 * server.c and client.c are compiled into this file with three renames:
 * their main functions become sum_server_main() and sum_client_main(),
 * margo_init() hands out simulated nodes instead of "tcp" ones, and the
 * server's margo_wait_for_finalize() first runs the client four times, as
 * four client processes would. Each client's blocking margo_forward()
 * drives both instances (the Margo layer progresses every instance that has
 * no progress thread), so the server's handler runs inside the client's
 * call, and the whole run is deterministic for the simulator's seed. The
 * sixteenth RPC's handler calls margo_finalize(), which completes once the
 * server reaches margo_wait_for_finalize().
 */
#include <margo.h>
#include <stdio.h>

#define SUM_SIM_SERVER "sim://sum-server"
#define SUM_SIM_CLIENT_RUNS 4

static margo_instance_id
sum_sim_init(const char *addr_str, int mode, int use_progress_thread,
             int rpc_thread_count)
{
    (void) addr_str;
    /* "sim" alone gives each client run a fresh, automatically named node. */
    return margo_init(mode == MARGO_SERVER_MODE ? SUM_SIM_SERVER : "sim", mode,
                      use_progress_thread, rpc_thread_count);
}

static void
sum_sim_run_clients(void)
{
    extern int sum_client_main(int argc, char **argv);
    char prog[] = "client", addr[] = SUM_SIM_SERVER;
    char *argv[] = {prog, addr, NULL};

    for (int run = 0; run < SUM_SIM_CLIENT_RUNS; run++) {
        fprintf(stderr, "sum_sim: client run %d\n", run + 1);
        sum_client_main(2, argv);
    }
}

#define margo_init sum_sim_init
#define margo_wait_for_finalize(mid)                                           \
    (sum_sim_run_clients(), margo_wait_for_finalize(mid))
#define main sum_server_main
#include "server.c"
#undef main
#undef margo_wait_for_finalize

#define main sum_client_main
#include "client.c"
#undef main
#undef margo_init

int
main(int argc, char **argv)
{
    int ret = sum_server_main(argc, argv);

    fprintf(stderr, "sum_sim: server exited\n");
    return ret;
}
