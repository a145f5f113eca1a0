/*
 * Engine lifecycle and the Margo services behind it, on sim: finalize and
 * pre-finalize callbacks (order, owners, top/pop), a server engine whose
 * destructor waits until a peer shuts it down remotely (and finalizes
 * when an exception unwinds it), a client engine
 * finalized by its destructor, timers and thread::sleep in virtual time,
 * a custom logger, a JSON configuration, handler and progress threads,
 * and the synchronisation types.
 */
#include "tl_test.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

static void
callbacks()
{
    std::string order;
    tl::engine e("sim://lc-callbacks", THALLIUM_SERVER_MODE);
    int owner = 0;
    e.push_finalize_callback([&order]() { order += "A"; });
    e.push_finalize_callback(&owner, [&order]() { order += "B"; });
    e.push_finalize_callback([&order]() { order += "C"; });
    e.push_prefinalize_callback([&order]() { order += "P"; });
    CHECK(static_cast<bool>(e.top_finalize_callback()));
    std::function<void()> c = e.pop_finalize_callback();
    CHECK(static_cast<bool>(c));
    c(); /* popped: runs only when called */
    CHECK_EQ(order, "C");
    CHECK(static_cast<bool>(e.top_finalize_callback(&owner)));
    CHECK(!e.pop_finalize_callback(&e)); /* nobody pushed with that owner */
    e.finalize();
    CHECK_EQ(order, "CPBA");
    CHECK(!static_cast<bool>(e));
    CHECK_THROWS(tl::exception, e.self(), CHECK_EQ(e.code(), HG_CANCELED));
}

/* A server engine whose last copy goes while an exception unwinds (a
 * failed check in a service's test) finalizes: waiting for a remote
 * shutdown would hang the program. */
static void
server_unwound()
{
    tl::endpoint kept;
    bool caught = false;
    try {
        tl::engine s("sim://lc-unwound", THALLIUM_SERVER_MODE);
        s.define("ping", [](const tl::request &req) { req.respond(1); });
        kept = s.self();
        throw std::runtime_error("a check failed");
    } catch (const std::runtime_error &) {
        caught = true;
    }
    CHECK(caught);
    CHECK(!static_cast<bool>(kept.get_engine()));
}

static void
destructors_and_remote_shutdown()
{
    std::mutex m;
    std::condition_variable cv;
    bool ready = false, server_done = false;
    std::thread server([&]() {
        {
            tl::engine s("sim://lc-server", THALLIUM_SERVER_MODE);
            s.enable_remote_shutdown();
            s.define("ping", [](const tl::request &req) { req.respond(1); });
            {
                std::lock_guard<std::mutex> g(m);
                ready = true;
            }
            cv.notify_all();
            /* The destructor waits for finalize. */
        }
        std::lock_guard<std::mutex> g(m);
        server_done = true;
    });
    {
        std::unique_lock<std::mutex> g(m);
        cv.wait(g, [&] { return ready; });
    }
    tl::endpoint kept;
    {
        tl::engine c("sim", THALLIUM_CLIENT_MODE);
        tl::endpoint ep = c.lookup("sim://lc-server");
        CHECK_EQ(c.define("ping").on(ep)().as<int>(), 1);
        {
            std::lock_guard<std::mutex> g(m);
            CHECK(!server_done);
        }
        c.shutdown_remote_engine(ep);
        kept = c.self();
        CHECK(static_cast<bool>(kept.get_engine()));
    }
    /* The client engine's destructor finalized it. */
    CHECK(!static_cast<bool>(kept.get_engine()));
    server.join();
    CHECK(server_done);

    /* A server that did not enable remote shutdown refuses. */
    tl::engine s2("sim://lc-server2", THALLIUM_SERVER_MODE);
    tl::engine c2("sim", THALLIUM_CLIENT_MODE);
    CHECK_THROWS(tl::exception,
                 c2.shutdown_remote_engine(c2.lookup("sim://lc-server2")),
                 CHECK(e.code() != HG_SUCCESS));
    s2.finalize();
}

static void
timers_and_sleep()
{
    tl::engine e("sim://lc-timers", THALLIUM_SERVER_MODE);
    int fired = 0, cancelled = 0;
    {
        tl::timed_callback t1 =
            e.create_timed_callback([&fired]() { fired++; });
        tl::timed_callback t2 =
            e.create_timed_callback([&cancelled]() { cancelled++; });
        auto start = std::chrono::steady_clock::now();
        t1.start(std::chrono::seconds(10));
        t2.start(1000.0);
        t2.cancel();
        tl::thread::sleep(e, 20000.0);
        CHECK_EQ(fired, 1);
        CHECK_EQ(cancelled, 0);
        /* 20 s of fabric time took (much) less real time. */
        CHECK(std::chrono::steady_clock::now() - start <
              std::chrono::seconds(10));
    } /* timers are destroyed before their engine finalizes */
    e.finalize();
}

class collect : public tl::logger
{
  public:
    mutable std::mutex m;
    mutable std::vector<std::string> lines;
    void add(const char *lvl, const char *msg) const
    {
        std::lock_guard<std::mutex> g(m);
        lines.push_back(std::string(lvl) + ":" + msg);
    }
    bool has(const std::string &s) const
    {
        std::lock_guard<std::mutex> g(m);
        for (auto &l : lines)
            if (l.find(s) != std::string::npos)
                return true;
        return false;
    }
    void trace(const char *msg) const override
    {
        add("trace", msg);
    }
    void debug(const char *msg) const override
    {
        add("debug", msg);
    }
    void info(const char *msg) const override
    {
        add("info", msg);
    }
    void warning(const char *msg) const override
    {
        add("warning", msg);
    }
    void error(const char *msg) const override
    {
        add("error", msg);
    }
    void critical(const char *msg) const override
    {
        add("critical", msg);
    }
};

static void
logging()
{
    collect log;
    tl::engine s("sim://lc-log", THALLIUM_SERVER_MODE);
    s.set_logger(&log);
    s.set_log_level(tl::logger::level::info);
    margo_info(s.get_margo_instance(), "hello %d", 42);
    margo_debug(s.get_margo_instance(), "filtered");
    CHECK(log.has("info:hello 42"));
    CHECK(!log.has("filtered"));
    s.define("boom", [](const tl::request &) { throw tl::exception("boom"); });
    {
        tl::engine c("sim", THALLIUM_CLIENT_MODE);
        CHECK_THROWS(tl::exception,
                     c.define("boom").on(c.lookup("sim://lc-log"))(),
                     CHECK(e.code() != HG_SUCCESS));
    }
    CHECK(log.has("error:thallium: handler threw: boom"));
    s.finalize();
}

static void
config_and_threads()
{
    const char *cfg = R"({"use_progress_thread": true, "rpc_thread_count": 2})";
    tl::engine s("sim://lc-config", THALLIUM_SERVER_MODE, cfg);
    std::string got = s.get_config();
    CHECK(!got.empty() && got[0] == '{');
    CHECK(got.find("progress") != std::string::npos);
    std::atomic<int> calls{0};
    s.define("work", [&calls](const tl::request &req, int x) {
        calls++;
        req.respond(x * 2);
    });
    {
        tl::engine c("sim", THALLIUM_CLIENT_MODE);
        tl::endpoint ep = c.lookup("sim://lc-config");
        std::vector<tl::async_response> rs;
        for (int i = 0; i < 16; i++)
            rs.push_back(c.define("work").on(ep).async(i));
        for (int i = 0; i < 16; i++)
            CHECK_EQ(rs[(size_t) i].wait().as<int>(), 2 * i);
    }
    CHECK_EQ(calls.load(), 16);
    s.finalize();
    CHECK_THROWS(tl::exception,
                 tl::engine("sim://lc-bad", THALLIUM_SERVER_MODE, "{not json"),
                 CHECK(e.code() != HG_SUCCESS));
}

static void
sync_types()
{
    tl::abt scope;
    tl::mutex m;
    tl::condition_variable cv;
    tl::eventual<int> ev;
    tl::eventual<void> done;
    tl::barrier bar(3);
    tl::rwlock rw;
    tl::recursive_mutex rm;
    int counter = 0;
    bool go = false;
    std::vector<std::thread> ts;
    for (int i = 0; i < 2; i++)
        ts.emplace_back([&]() {
            {
                std::unique_lock<tl::mutex> g(m);
                cv.wait(g, [&] { return go; });
                counter++;
            }
            rw.rdlock();
            rw.unlock();
            bar.wait();
        });
    {
        std::lock_guard<tl::mutex> g(m);
        go = true;
    }
    cv.notify_all();
    bar.wait();
    for (auto &t : ts)
        t.join();
    CHECK_EQ(counter, 2);
    rm.lock();
    rm.lock();
    rm.unlock();
    rm.unlock();
    CHECK(!ev.test());
    std::thread setter([&]() {
        ev.set_value(7);
        done.set_value();
    });
    CHECK_EQ(ev.wait(), 7);
    done.wait();
    setter.join();
    CHECK(ev.test());
}

int
main()
{
    callbacks();
    destructors_and_remote_shutdown();
    server_unwound();
    timers_and_sleep();
    logging();
    config_and_threads();
    sync_types();
    std::printf("test_lifecycle: OK\n");
    return 0;
}
