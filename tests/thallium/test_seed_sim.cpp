/*
 * Seed 002's client and server, the files of examples/thallium_bulk
 * included unchanged, run in one process over the simulated fabric: the
 * server's main() in a thread (its engine's destructor waits for
 * finalize), the client's main() in this one. The only change is the
 * fabric: tl::engine is replaced by a subclass that maps the seed's tcp
 * addresses to simulated nodes.
 */
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <streambuf>
#include <string>
#include <thread>

#include <na_sim.h>
#include <thallium.hpp>
#include <thallium/serialization/stl/string.hpp>

namespace
{

std::mutex g_lock;
std::condition_variable g_cv;
bool g_server_ready = false;
margo_instance_id g_server_mid = MARGO_INSTANCE_NULL;
std::string g_out;

/* std::cout's buffer during the run: keeps what the seed prints. */
class capture_buf : public std::streambuf
{
  protected:
    int_type overflow(int_type c) override
    {
        if (c != traits_type::eof()) {
            std::lock_guard<std::mutex> g(g_lock);
            g_out.push_back((char) c);
            g_cv.notify_all();
        }
        return c;
    }
};

std::string
to_sim(const std::string &addr)
{
    return addr.find("://") == std::string::npos ? "sim" : "sim://seed-server";
}

} // namespace

namespace thallium
{
class seed_sim_engine : public engine
{
  public:
    seed_sim_engine(const std::string &addr, int mode)
        : engine(to_sim(addr), mode)
    {
        if (mode == THALLIUM_SERVER_MODE)
            g_server_mid = get_margo_instance();
    }
    /* The seed's server defines its RPC, then its engine goes out of
     * scope: it is ready once this runs. */
    ~seed_sim_engine()
    {
        std::lock_guard<std::mutex> g(g_lock);
        if (get_margo_instance() == g_server_mid) {
            g_server_ready = true;
            g_cv.notify_all();
        }
    }
    endpoint lookup(const std::string &addr) const
    {
        return engine::lookup(to_sim(addr));
    }
};
} // namespace thallium

#define engine seed_sim_engine
#define main seed_client_main
#include "../../examples/thallium_bulk/client.cpp"
#undef main
/* The server's main() ends without a return statement, which only the
 * real main() may do: its last statement, `....disable_response();`, gets
 * a `return 0;` appended here, so the renamed function returns a value. */
#define main seed_server_main
#define disable_response()                                                     \
    disable_response();                                                        \
    return 0
#include "../../examples/thallium_bulk/server.cpp"
#undef disable_response
#undef main
#undef engine

int
main()
{
    capture_buf buf;
    std::streambuf *old = std::cout.rdbuf(&buf);
    std::thread server([] { seed_server_main(0, nullptr); });
    {
        std::unique_lock<std::mutex> g(g_lock);
        g_cv.wait(g, [] { return g_server_ready; });
    }
    int rc = seed_client_main(0, nullptr);
    const std::string want = "Server received bulk: Matthi\n";
    {
        std::unique_lock<std::mutex> g(g_lock);
        g_cv.wait(g, [&] { return g_out.find(want) != std::string::npos; });
    }
    margo_finalize(g_server_mid);
    server.join();
    std::cout.rdbuf(old);
    std::cout << g_out;
    if (rc != 0 || g_out != want) {
        std::fprintf(stderr, "test_seed_sim: client rc %d, output '%s'\n", rc,
                     g_out.c_str());
        na_sim_print_replay_hint(stderr);
        return 1;
    }
    std::printf("test_seed_sim: OK\n");
    return 0;
}
