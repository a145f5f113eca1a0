/*
 * Liveness through the Thallium layer on the simulated fabric: a client
 * engine calls a remote_procedure without a timeout on a server engine of
 * the same process whose sim node crashes while its handler holds the
 * request (killed_in_handler) or while it pulls 4 MiB from the client
 * (killed_mid_bulk). The call must end with exactly one tl::exception
 * whose code is HG_HOSTUNREACH within the liveness bound, in virtual time.
 *
 * The handler itself moves the virtual clock to a point the seed picks
 * (na_sim_run_until) and crashes its node there (na_sim_node_crash), so
 * the crash lands where the scenario says whatever the threads' real-time
 * interleaving: in the handler, or inside the pull. One line per run,
 * "call ...: HG_HOSTUNREACH <us> us after the kill", is what
 * scripts/liveness-trials.sh reads.
 *
 *   test_tl_liveness_sim killed_in_handler | killed_mid_bulk [margo]
 *
 * With "margo", the same with a plain margo_forward on Margo instances:
 * it must return HG_HOSTUNREACH within the bound.
 *   (QS_SIM_SEED=<n> picks the seed; the default is fixed)
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <margo.h>
#include <mercury_proc_bulk.h>
#include <na_sim.h>
#include <thallium.hpp>

namespace tl = thallium;

namespace
{

/* Two probe intervals (1 s) plus the sim's detection delay and margin. */
constexpr std::uint64_t bound_ns = 2100ull * 1000000ull;
constexpr std::size_t pull_size = std::size_t(4) << 20;

/* What the server's handler did, read by the client after its call. */
struct crash_point {
    std::uint64_t posted_ns = 0; /* the pull was posted (bulk)        */
    std::uint64_t at_ns = 0;     /* the node crashed                  */
    bool ok = false;             /* the crash landed where it should  */
};

/* From inside the handler, so that no other thread can let virtual time
 * pass in between: move the clock to the seed's point and crash the
 * server's node there. */
void
crash_after(crash_point &cp, std::uint64_t from_ns, std::uint64_t delay_ns)
{
    na_sim_run_until(from_ns + delay_ns, nullptr);
    cp.at_ns = na_sim_clock_now();
    cp.ok = na_sim_node_crash("lv-srv") == NA_SUCCESS;
}

/* How the client's call ended. */
struct outcome {
    int returned = 0;   /* it returned a value (Margo: HG_SUCCESS)   */
    int exceptions = 0; /* Thallium: tl::exception caught            */
    int others = 0;     /* anything else thrown                      */
    hg_return_t code = HG_SUCCESS;
    std::string what;
    std::uint64_t ended_ns = 0;
};

/* The oracle, the same for both layers. Returns the failures. */
int
check(const outcome &o, const crash_point &cp, bool bulk, bool margo,
      std::uint64_t seed, std::uint64_t pull_ns)
{
    std::uint64_t us =
        o.ended_ns > cp.at_ns ? (o.ended_ns - cp.at_ns) / 1000 : 0;
    int failures = 0;

    std::printf("  seed %llu\n  %s %s: %s %llu us after the kill\n",
                (unsigned long long) seed, margo ? "margo_forward" : "call",
                bulk ? "whose pull was killed" : "held by the killed server",
                o.exceptions == 1 || margo ? HG_Error_to_string(o.code)
                                           : "no-exception",
                (unsigned long long) us);
    if (!cp.ok || cp.at_ns == 0) {
        std::fprintf(stderr, "ERROR: the server's node did not crash\n");
        failures++;
    }
    if (bulk && cp.at_ns - cp.posted_ns >= pull_ns) {
        std::fprintf(stderr,
                     "ERROR: the crash came %llu ns after the pull was "
                     "posted: not mid-transfer\n",
                     (unsigned long long) (cp.at_ns - cp.posted_ns));
        failures++;
    }
    if (!margo && (o.exceptions != 1 || o.returned != 0 || o.others != 0)) {
        std::fprintf(stderr,
                     "ERROR: %d tl::exception, %d returns, %d other throws; "
                     "want exactly one tl::exception\n",
                     o.exceptions, o.returned, o.others);
        failures++;
    } else if (o.code != HG_HOSTUNREACH) {
        std::fprintf(stderr, "ERROR: the call ended with %s (%s)\n",
                     HG_Error_to_string(o.code), o.what.c_str());
        failures++;
    }
    if (o.ended_ns < cp.at_ns || o.ended_ns - cp.at_ns > bound_ns) {
        std::fprintf(stderr,
                     "ERROR: the call ended at %llu ns, the crash was at %llu "
                     "ns, bound %llu ns\n",
                     (unsigned long long) o.ended_ns,
                     (unsigned long long) cp.at_ns,
                     (unsigned long long) bound_ns);
        failures++;
    }
    return failures;
}

/* ---- Margo: the same scenarios with margo_forward ------------------- */

struct margo_server {
    margo_instance_id mid = MARGO_INSTANCE_NULL;
    crash_point *cp = nullptr;
    std::uint64_t delay_ns = 0;
    hg_bulk_t local = HG_BULK_NULL, remote = HG_BULK_NULL;
    margo_request req = MARGO_REQUEST_NULL;
    hg_handle_t pull_handle = HG_HANDLE_NULL;
};
margo_server g_ms;

void
lv_mhold(hg_handle_t h)
{
    crash_after(*g_ms.cp, na_sim_clock_now(), g_ms.delay_ns);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(lv_mhold)

void
lv_mpull(hg_handle_t h)
{
    const struct hg_info *info = margo_get_info(h);

    if (margo_get_input(h, &g_ms.remote) != HG_SUCCESS)
        return;
    g_ms.pull_handle = h;
    g_ms.cp->posted_ns = na_sim_clock_now();
    if (margo_bulk_itransfer(g_ms.mid, HG_BULK_PULL, info->addr, g_ms.remote, 0,
                             g_ms.local, 0, pull_size, &g_ms.req) != HG_SUCCESS)
        return;
    crash_after(*g_ms.cp, g_ms.cp->posted_ns, g_ms.delay_ns);
}
DEFINE_MARGO_RPC_HANDLER(lv_mpull)

int
run_margo(bool bulk, crash_point &cp, std::uint64_t seed,
          std::uint64_t delay_ns, std::uint64_t pull_ns)
{
    std::vector<char> local(pull_size), src(pull_size, 'x');
    void *lp = local.data(), *sp = src.data();
    hg_size_t len = pull_size;
    hg_bulk_t exposed = HG_BULK_NULL;
    hg_addr_t addr = HG_ADDR_NULL;
    hg_handle_t h = HG_HANDLE_NULL;
    margo_instance_id cmid;
    hg_id_t id;
    outcome o;
    int failures;

    g_ms = margo_server();
    g_ms.cp = &cp;
    g_ms.delay_ns = delay_ns;
    g_ms.mid = margo_init("sim://lv-srv", MARGO_SERVER_MODE, 0, 0);
    cmid = margo_init("sim", MARGO_CLIENT_MODE, 0, 0);
    if (g_ms.mid == MARGO_INSTANCE_NULL || cmid == MARGO_INSTANCE_NULL) {
        std::fprintf(stderr, "ERROR: margo_init failed\n");
        return 1;
    }
    margo_register_name(g_ms.mid, "lv_mhold", nullptr, nullptr,
                        lv_mhold_handler);
    margo_register_name(g_ms.mid, "lv_mpull", hg_proc_hg_bulk_t, nullptr,
                        lv_mpull_handler);
    margo_bulk_create(g_ms.mid, 1, &lp, &len, HG_BULK_WRITE_ONLY, &g_ms.local);
    id = bulk
             ? margo_register_name(cmid, "lv_mpull", hg_proc_hg_bulk_t, nullptr,
                                   nullptr)
             : margo_register_name(cmid, "lv_mhold", nullptr, nullptr, nullptr);
    margo_bulk_create(cmid, 1, &sp, &len, HG_BULK_READ_ONLY, &exposed);
    margo_addr_lookup(cmid, "sim://lv-srv", &addr);
    margo_create(cmid, addr, id, &h);
    /* No deadline: only liveness can end this call. */
    o.code = margo_forward(h, bulk ? &exposed : nullptr);
    o.ended_ns = na_sim_clock_now();
    failures = check(o, cp, bulk, true, seed, pull_ns);
    margo_destroy(h);
    margo_addr_free(cmid, addr);
    margo_bulk_free(exposed);
    margo_finalize(cmid);
    /* Back up: what the node held fails; the server finalizes. */
    na_sim_node_restart("lv-srv");
    if (g_ms.req != MARGO_REQUEST_NULL && margo_wait(g_ms.req) == HG_SUCCESS) {
        std::fprintf(stderr, "ERROR: the killed pull succeeded\n");
        failures++;
    }
    if (g_ms.pull_handle != HG_HANDLE_NULL) {
        margo_free_input(g_ms.pull_handle, &g_ms.remote);
        margo_destroy(g_ms.pull_handle);
    }
    margo_bulk_free(g_ms.local);
    margo_finalize(g_ms.mid);
    return failures;
}

int
run(bool bulk, bool margo)
{
    const char *seed_env = std::getenv(NA_SIM_SEED_ENV);
    /* 100 MB/s: the 4 MiB pull takes 42 ms of virtual time. */
    struct na_sim_link slow = {1000, 100000000};
    const std::uint64_t pull_ns = pull_size * 1000000000ull / slow.bandwidth;
    std::uint64_t seed, delay_ns;
    int failures = 0;
    outcome o;
    crash_point cp;

    if (seed_env == nullptr || *seed_env == '\0')
        na_sim_set_seed(bulk ? 32 : 31);
    na_sim_world_hold();
    na_sim_set_link_default(&slow);
    seed = na_sim_get_seed();
    /* Where the crash lands: inside the 1 s before the first probe, or
     * inside the pull's 42 ms. */
    delay_ns =
        bulk ? 1000000ull + seed * 7919ull * 104729ull % (pull_ns - 2000000ull)
             : seed * 7919ull * 104729ull % 900000000ull;
    if (margo) {
        failures = run_margo(bulk, cp, seed, delay_ns, pull_ns);
        goto done;
    }
    {
        tl::engine server("sim://lv-srv", THALLIUM_SERVER_MODE);
        std::vector<char> local(pull_size);
        std::vector<std::pair<void *, std::size_t>> lseg{
            {local.data(), local.size()}};
        tl::bulk lb = server.expose(lseg, tl::bulk_mode::write_only);

        /* A crashed node's operations are held back until its restart,
         * as a dead process's would never run: after the crash the
         * handlers touch nothing, and the pull waits for the restart. */
        std::unique_ptr<tl::async_bulk_op> pull;

        server.define("lv_hold", [&](const tl::request &, int) {
            crash_after(cp, na_sim_clock_now(), delay_ns);
        });
        server.define("lv_pull", [&](const tl::request &req, tl::bulk &b) {
            tl::endpoint from = req.get_endpoint();

            cp.posted_ns = na_sim_clock_now();
            pull.reset(new tl::async_bulk_op(b.on(from).pull_to(lb)));
            crash_after(cp, cp.posted_ns, delay_ns);
        });
        {
            tl::engine client("sim", THALLIUM_CLIENT_MODE);
            std::vector<char> src(pull_size, 'x');
            std::vector<std::pair<void *, std::size_t>> seg{
                {src.data(), src.size()}};
            tl::bulk exposed = client.expose(seg, tl::bulk_mode::read_only);
            tl::endpoint ep = client.lookup("sim://lv-srv");
            tl::remote_procedure rp =
                client.define(bulk ? "lv_pull" : "lv_hold");

            /* No timeout anywhere: only liveness can end this call. */
            try {
                if (bulk)
                    (void) (std::size_t) rp.on(ep)(exposed);
                else
                    (void) (int) rp.on(ep)(7);
                o.returned++;
            } catch (const tl::exception &e) {
                o.code = e.code();
                o.what = e.what();
                o.exceptions++;
            } catch (...) {
                o.others++;
            }
            o.ended_ns = na_sim_clock_now();
        }
        failures = check(o, cp, bulk, false, seed, pull_ns);
        /* Back up: what the node held fails, and the server engine
         * finalizes as usual. */
        na_sim_node_restart("lv-srv");
        if (pull) {
            try {
                pull->wait();
                std::fprintf(stderr, "ERROR: the killed pull succeeded\n");
                failures++;
            } catch (const tl::exception &) {
            }
            pull.reset();
        }
        lb = tl::bulk();
        server.finalize();
    }
done:
    na_sim_world_release();
    if (failures != 0)
        na_sim_print_replay_hint(stderr);
    else
        std::printf("test_tl_liveness_sim: OK\n");
    return failures == 0 ? 0 : 1;
}

} // namespace

int
main(int argc, char **argv)
{
    bool margo = argc == 3 && std::strcmp(argv[2], "margo") == 0;

    if (argc == 3 && !margo)
        argc = 0;
    if ((argc == 2 || argc == 3) &&
        std::strcmp(argv[1], "killed_in_handler") == 0)
        return run(false, margo);
    if ((argc == 2 || argc == 3) &&
        std::strcmp(argv[1], "killed_mid_bulk") == 0)
        return run(true, margo);
    std::fprintf(stderr, "usage: test_tl_liveness_sim killed_in_handler | "
                         "killed_mid_bulk [margo]\n");
    return 2;
}
