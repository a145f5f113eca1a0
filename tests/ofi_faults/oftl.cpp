/*
 * The kill scenarios with a Thallium client: a remote_procedure called
 * without a timeout (as Thallium services call) on a server process that
 * is SIGKILLed while its handler holds the request (kill_in_handler), or
 * while it pulls 64 MiB the client exposes (kill_in_bulk). The call must
 * end with exactly one tl::exception whose code is HG_HOSTUNREACH, within
 * the liveness bound, and never return a value or hang.
 *
 *   test_ofi_faults_tl kill_in_handler | kill_in_bulk
 *   test_ofi_faults_tl --server --info <string>   (started by the client)
 *
 * QS_OFI_FAULTS_INFO overrides the info string (default
 * ofi+tcp://127.0.0.1:0). The server is this binary again (ofproc.c), a
 * Thallium engine in server mode that reports "A <address>", "H" (the
 * hold handler was entered) and "P" (a pull was posted) on its pipe.
 */
extern "C" {
#include "ofi_faults/ofproc.h"
}

#include <signal.h>
#include <sys/wait.h>

#include <poll.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <thallium.hpp>

namespace tl = thallium;

namespace
{

/* Size of the exposed buffer: large enough that a kill sent after the
 * "pull started" marker lands mid-transfer (as in ofrpc.h). */
constexpr std::size_t big_pull = std::size_t(64) << 20;
/* Two probe intervals plus the fabric's verdict (architecture.md). */
constexpr std::uint64_t bound_ms = 3000;
/* Waits for the server's events: this many 100 ms polls of its pipe (an
 * event ends a poll at once). */
constexpr int max_polls = 200;

std::uint64_t
now_ns()
{
    return (std::uint64_t) std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

const char *
info_string()
{
    const char *info = std::getenv("QS_OFI_FAULTS_INFO");

    return info != nullptr && *info != '\0' ? info : "ofi+tcp://127.0.0.1:0";
}

/* ---- the server role ------------------------------------------------ */

int
server_main(int argc, char **argv)
{
    const char *info = info_string();

    for (int i = 2; i + 1 < argc; i += 2)
        if (std::strcmp(argv[i], "--info") == 0)
            info = argv[i + 1];
    try {
        tl::engine engine(info, THALLIUM_SERVER_MODE);
        /* Never set: the handler holds its request until the kill. */
        tl::eventual<int> never;

        engine.define("tl_hold", [&never](const tl::request &req, int v) {
            of_notify("H");
            never.wait();
            req.respond(v);
        });
        engine.define(
            "tl_pull", [&engine](const tl::request &req, tl::bulk &remote) {
                std::vector<char> local(big_pull);
                std::vector<std::pair<void *, std::size_t>> seg{
                    {local.data(), local.size()}};
                tl::bulk lb = engine.expose(seg, tl::bulk_mode::write_only);

                of_notify("P");
                std::size_t n = remote.on(req.get_endpoint()) >> lb;
                of_notify("B 0 1");
                req.respond(n);
            });
        of_notify("A %s", std::string(engine.self()).c_str());
        engine.wait_for_finalize();
    } catch (const tl::exception &e) {
        std::fprintf(stderr, "tl server: %s\n", e.what());
        return 2;
    }
    return 0;
}

/* ---- the client ----------------------------------------------------- */

bool
wait_event(of_child &c, const int &counter, const char *what)
{
    for (int i = 0; i < max_polls; i++) {
        struct pollfd p = {c.fd, POLLIN, 0};

        of_child_poll(&c);
        if (counter > 0)
            return true;
        if (c.eof) {
            std::fprintf(stderr, "ERROR: %s: the server exited first\n", what);
            return false;
        }
        (void) poll(&p, 1, 100);
    }
    std::fprintf(stderr, "ERROR: %s: no event from the server in %d s\n", what,
                 max_polls / 10);
    return false;
}

/* What the calling thread saw. */
struct outcome {
    std::atomic<int> returned{0};   /* the call returned a value        */
    std::atomic<int> exceptions{0}; /* tl::exception caught             */
    std::atomic<int> others{0};     /* anything else thrown             */
    hg_return_t code = HG_SUCCESS;
    std::string what;
    std::uint64_t at_ns = 0;
};

int
client_main(bool bulk)
{
    const char *info = info_string();
    const char *args[] = {"--info", of_server_info(info), nullptr};
    of_child srv;
    outcome out;
    int failures = 0;

    if (of_spawn(&srv, "--server", args) != 0) {
        std::perror("ERROR: cannot start a server process");
        return 1;
    }
    if (!wait_event(srv, srv.listening, "server address")) {
        of_reap_all();
        return 1;
    }
    {
        tl::engine client(info, THALLIUM_CLIENT_MODE);
        {
            tl::endpoint ep = client.lookup(srv.addr);
            tl::remote_procedure rp =
                client.define(bulk ? "tl_pull" : "tl_hold");
            std::vector<char> buf;
            tl::bulk exposed;
            std::uint64_t killed;
            int status;

            if (bulk) {
                buf.resize(big_pull);
                for (std::size_t i = 0; i < buf.size(); i++)
                    buf[i] = (char) ((i * 131u) ^ (i >> 12));
                std::vector<std::pair<void *, std::size_t>> seg{
                    {buf.data(), buf.size()}};
                exposed = client.expose(seg, tl::bulk_mode::read_only);
            }
            /* No timeout anywhere: only liveness can end this call. */
            std::thread caller([&] {
                try {
                    std::size_t r = bulk ? (std::size_t) rp.on(ep)(exposed)
                                         : (std::size_t)(int) rp.on(ep)(7);
                    (void) r;
                    out.returned++;
                } catch (const tl::exception &e) {
                    out.code = e.code();
                    out.what = e.what();
                    out.exceptions++;
                } catch (...) {
                    out.others++;
                }
                out.at_ns = now_ns();
            });
            if (!wait_event(srv, bulk ? srv.pulls : srv.held,
                            bulk ? "pull started" : "handler entered")) {
                /* The call may never end now: leave without joining. */
                of_reap_all();
                std::fflush(nullptr);
                std::_Exit(1);
            }
            killed = now_ns();
            status = of_child_kill(&srv);
            if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
                std::fprintf(stderr, "ERROR: server not killed (status %#x)\n",
                             status);
                failures++;
            }
            if (bulk && srv.bulk_done != 0) {
                std::fprintf(stderr, "ERROR: the pull completed before the "
                                     "kill: not a kill mid-transfer\n");
                failures++;
            }
            /* A hang here is the bug (ctest's limit, the script's 60 s). */
            caller.join();
            std::uint64_t ms = (out.at_ns - killed) / 1000000;
            std::printf("  %s: %s %llu ms after the kill\n",
                        bulk ? "call whose pull was killed"
                             : "call held by the killed server",
                        out.exceptions == 1 ? HG_Error_to_string(out.code)
                                            : "no-exception",
                        (unsigned long long) ms);
            if (out.exceptions == 1)
                std::printf("  exception: %s\n", out.what.c_str());
            if (out.exceptions != 1 || out.returned != 0 || out.others != 0) {
                std::fprintf(stderr,
                             "ERROR: %d tl::exception, %d returns, %d other "
                             "throws; want exactly one tl::exception\n",
                             out.exceptions.load(), out.returned.load(),
                             out.others.load());
                failures++;
            } else if (out.code != HG_HOSTUNREACH) {
                std::fprintf(stderr,
                             "ERROR: the exception carries %s, want "
                             "HG_HOSTUNREACH\n",
                             HG_Error_to_string(out.code));
                failures++;
            }
            if (ms > bound_ms) {
                std::fprintf(stderr,
                             "ERROR: the call ended %llu ms after the kill, "
                             "bound %llu ms\n",
                             (unsigned long long) ms,
                             (unsigned long long) bound_ms);
                failures++;
            }
        }
        client.finalize();
    }
    of_reap_all();
    if (failures == 0)
        std::printf("test_ofi_faults_tl: OK\n");
    return failures == 0 ? 0 : 1;
}

} // namespace

int
main(int argc, char **argv)
{
    if (argc > 1 && std::strcmp(argv[1], "--server") == 0)
        return server_main(argc, argv);
    if (argc == 2 && std::strcmp(argv[1], "kill_in_handler") == 0)
        return client_main(false);
    if (argc == 2 && std::strcmp(argv[1], "kill_in_bulk") == 0)
        return client_main(true);
    std::fprintf(stderr, "usage: test_ofi_faults_tl kill_in_handler | "
                         "kill_in_bulk | --server --info <string>\n");
    return 2;
}
