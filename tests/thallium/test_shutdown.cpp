/*
 * Engine lifecycle across processes: a server that waits for finalize
 * (wait_for_finalize) with pre-finalize and finalize callbacks, shut down
 * by a client through enable_remote_shutdown / shutdown_remote_engine;
 * the client's engine is finalized by its destructor. Runs on sim (the
 * server in a thread of the same process) and, through run_two.sh, as two
 * processes over ofi+tcp.
 *
 *   test_shutdown sim | server <info> | client <addr>
 */
#include "tl_test.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

/* Serves until shut down remotely; returns the callbacks' trace. */
static std::string
serve(const std::string &info, std::string *addr_out, std::mutex *m,
      std::condition_variable *cv)
{
    std::string order;
    {
        tl::engine s(info, THALLIUM_SERVER_MODE);
        s.push_finalize_callback([&order]() { order += "F"; });
        s.push_prefinalize_callback([&order]() { order += "P"; });
        s.define("ping",
                 [](const tl::request &req, int x) { req.respond(x + 1); });
        /* Not enabled yet: a shutdown request is refused. */
        s.define("enable", [&s](const tl::request &req) {
            s.enable_remote_shutdown();
            req.respond();
        });
        std::string addr = s.self();
        if (m) {
            std::lock_guard<std::mutex> g(*m);
            *addr_out = addr;
            cv->notify_all();
        } else
            std::cout << "listening at " << addr << std::endl;
        s.wait_for_finalize();
        CHECK(!static_cast<bool>(s));
        CHECK_THROWS(tl::exception, s.self(), CHECK_EQ(e.code(), HG_CANCELED));
    }
    return order;
}

static void
client(const std::string &addr)
{
    std::string proto = addr.substr(0, addr.find("://"));
    tl::engine c(proto, THALLIUM_CLIENT_MODE);
    tl::endpoint ep = c.lookup(addr);
    int r = c.define("ping").on(ep)(41);
    CHECK_EQ(r, 42);
    CHECK_THROWS(tl::exception, c.shutdown_remote_engine(ep), (void) e);
    /* The refused request left the server up. */
    r = c.define("ping").on(ep)(1);
    CHECK_EQ(r, 2);
    c.define("enable").on(ep)();
    c.shutdown_remote_engine(ep);
    /* The server is gone: a call to it fails, it does not hang. */
    CHECK_THROWS(tl::exception,
                 c.define("ping").on(ep).timed(std::chrono::seconds(5), 1),
                 CHECK(e.code() != HG_SUCCESS));
    /* c's destructor finalizes the client engine. */
}

int
main(int argc, char **argv)
{
    std::string mode = argc > 1 ? argv[1] : "sim";
    if (mode == "sim") {
        std::mutex m;
        std::condition_variable cv;
        std::string addr, order;
        std::thread server(
            [&]() { order = serve("sim://shutdown-server", &addr, &m, &cv); });
        {
            std::unique_lock<std::mutex> g(m);
            cv.wait(g, [&] { return !addr.empty(); });
        }
        client(addr);
        server.join();
        CHECK_EQ(order, "PF");
        std::printf("%s: OK (sim)\n", argv[0]);
        return 0;
    }
    if (mode == "server" && argc > 2) {
        std::string order = serve(argv[2], nullptr, nullptr, nullptr);
        CHECK_EQ(order, "PF");
        std::printf("%s: server OK\n", argv[0]);
        return 0;
    }
    if (mode == "client" && argc > 2) {
        client(argv[2]);
        std::printf("%s: client OK\n", argv[0]);
        return 0;
    }
    std::fprintf(stderr, "usage: %s sim | server <info> | client <addr>\n",
                 argv[0]);
    return 2;
}
