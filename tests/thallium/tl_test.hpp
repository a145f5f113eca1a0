/*
 * A tiny harness for the Thallium layer's tests. Each test program defines
 * its server side once (define_server) and its checks once (run_client),
 * and runs them either in one process over the simulated fabric, or as
 * two processes over a real fabric:
 *
 *   test_tl_x sim                 server and client engines in one process
 *   test_tl_x server <info>       prints "listening at <addr>", serves
 *                                 until a client sends "tl_test_stop"
 *   test_tl_x client <addr>       runs the checks against that server
 *
 * A failed CHECK prints where and why (and the sim seed) and exits 1.
 */
#ifndef TL_TEST_HPP
#define TL_TEST_HPP

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>

#include <na_sim.h>
#include <thallium.hpp>

namespace tl = thallium;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,        \
                         __LINE__, #cond);                                     \
            na_sim_print_replay_hint(stderr);                                  \
            std::exit(1);                                                      \
        }                                                                      \
    } while (0)

#define CHECK_EQ(a, b)                                                         \
    do {                                                                       \
        if (!((a) == (b))) {                                                   \
            std::cerr << __FILE__ << ":" << __LINE__                           \
                      << ": CHECK_EQ failed: " << #a << " == " << #b << " ("   \
                      << (a) << " vs " << (b) << ")\n";                        \
            na_sim_print_replay_hint(stderr);                                  \
            std::exit(1);                                                      \
        }                                                                      \
    } while (0)

/* Expect `stmt` to throw E; `check` then runs with the exception as `e`. */
#define CHECK_THROWS(E, stmt, check)                                           \
    do {                                                                       \
        bool thrown_ = false;                                                  \
        try {                                                                  \
            stmt;                                                              \
        } catch (const E &e) {                                                 \
            thrown_ = true;                                                    \
            check;                                                             \
        }                                                                      \
        if (!thrown_) {                                                        \
            std::fprintf(stderr, "%s:%d: %s did not throw %s\n", __FILE__,     \
                         __LINE__, #stmt, #E);                                 \
            std::exit(1);                                                      \
        }                                                                      \
    } while (0)

/* The test program provides these two. */
void define_server(tl::engine &server);
void run_client(tl::engine &client, const tl::endpoint &server, bool sim);

/* Stops a server from a handler (finalize from inside a handler). */
inline void
define_stop(tl::engine &server)
{
    server.define("tl_test_stop", [&server](const tl::request &req) {
        req.respond();
        server.finalize();
    });
}

inline int
tl_test_main(int argc, char **argv)
{
    std::string mode = argc > 1 ? argv[1] : "sim";
    if (mode == "sim") {
        tl::engine server("sim://tl-test-server", THALLIUM_SERVER_MODE);
        define_server(server);
        define_stop(server);
        {
            tl::engine client("sim", THALLIUM_CLIENT_MODE);
            tl::endpoint ep = client.lookup("sim://tl-test-server");
            run_client(client, ep, true);
            client.define("tl_test_stop").on(ep)();
        }
        server.wait_for_finalize();
        std::printf("%s: OK (sim)\n", argv[0]);
        return 0;
    }
    if (mode == "server" && argc > 2) {
        tl::engine server(argv[2], THALLIUM_SERVER_MODE);
        define_server(server);
        define_stop(server);
        std::cout << "listening at " << server.self() << std::endl;
        server.wait_for_finalize();
        std::printf("%s: server OK\n", argv[0]);
        return 0;
    }
    if (mode == "client" && argc > 2) {
        std::string addr = argv[2];
        std::string proto = addr.substr(0, addr.find("://"));
        tl::engine client(proto, THALLIUM_CLIENT_MODE);
        tl::endpoint ep = client.lookup(addr);
        run_client(client, ep, false);
        client.define("tl_test_stop").on(ep)();
        std::printf("%s: client OK\n", argv[0]);
        return 0;
    }
    std::fprintf(stderr, "usage: %s sim | server <info> | client <addr>\n",
                 argv[0]);
    return 2;
}

#endif
