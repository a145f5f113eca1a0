/*
 * RPCs through the Thallium layer: handlers as free functions, lambdas and
 * std::function, typed arguments and responses (operator T, as<T...>,
 * unpack), one-way RPCs, request::get_endpoint / get_input, async and
 * timed calls, errors raised in handlers, unknown RPCs, endpoints.
 */
#include "tl_test.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>

#include <thallium/serialization/stl/string.hpp>
#include <thallium/serialization/stl/vector.hpp>

static std::atomic<int> g_oneway_sum{0};
static std::mutex g_held_lock;
static std::vector<tl::request> g_held;

static void
sum_fn(const tl::request &req, int a, int b)
{
    req.respond(a + b);
}

static void
define_rpcs(tl::engine &e)
{
    e.define("sum", sum_fn);
    e.define("hello", [](const tl::request &req, const std::string &name) {
        req.respond(std::string("hello ") + name);
    });
    std::function<void(const tl::request &, std::vector<int> &)> rev =
        [](const tl::request &req, std::vector<int> &v) {
            std::vector<int> r(v.rbegin(), v.rend());
            req.respond(r, (int) v.size());
        };
    e.define("reverse", rev);
    e.define("no_args", [](const tl::request &req) { req.respond(42); });
    e.define("void_reply", [](const tl::request &req) { req.respond(); });
    e.define("oneway", [](const tl::request &, int x) {
         g_oneway_sum += x;
     }).disable_response();
    e.define("oneway_count",
             [](const tl::request &req) { req.respond(g_oneway_sum.load()); });
    e.define("whoami", [](const tl::request &req) {
        req.respond(static_cast<std::string>(req.get_endpoint()));
    });
    e.define("raw_input", [](const tl::request &req) {
        auto t = req.get_input().as<int, std::string>();
        req.respond(std::get<1>(t) + std::to_string(std::get<0>(t)));
    });
    e.define("throws", [](const tl::request &, int code) {
        throw tl::exception("thrown on purpose", (hg_return_t) code);
    });
    e.define("throws_std", [](const tl::request &) {
        throw std::runtime_error("std exception");
    });
    /* Held without an answer: the origin's timed call must time out. */
    e.define("hold", [](const tl::request &req) {
        std::lock_guard<std::mutex> g(g_held_lock);
        g_held.push_back(req);
    });
    e.define("release_held", [](const tl::request &req) {
        std::vector<tl::request> held;
        {
            std::lock_guard<std::mutex> g(g_held_lock);
            held.swap(g_held);
        }
        for (auto &r : held)
            r.respond(1);
        req.respond((int) held.size());
    });
    /* auto_respond answers with the value as it is when the handler
     * returns. */
    e.define("tripled", [](const tl::request &req, int x) {
        int v = 0;
        tl::auto_respond<int> answer{req, v};
        v = 3 * x;
    });
    /* An RPC whose registration goes with its auto_remote_procedure. */
    static tl::auto_remote_procedure *g_auto = new tl::auto_remote_procedure(
        e.define("auto_rpc", [](const tl::request &req) { req.respond(5); }));
    e.define("drop_auto", [](const tl::request &req) {
        delete g_auto;
        g_auto = nullptr;
        req.respond();
    });
    e.push_finalize_callback([]() { delete g_auto; });
    e.define("respond_twice", [](const tl::request &req) {
        req.respond(1);
        bool refused = false;
        try {
            req.respond(2);
        } catch (const tl::exception &ex) {
            refused = ex.code() == HG_BUSY;
        }
        (void) refused;
    });
}

void
define_server(tl::engine &server)
{
    define_rpcs(server);
}

void
run_client(tl::engine &client, const tl::endpoint &server, bool sim)
{
    (void) sim;
    /* Typed arguments, the response converted to the expected type. */
    tl::remote_procedure sum = client.define("sum");
    int r = sum.on(server)(3, 4);
    CHECK_EQ(r, 7);
    CHECK_EQ(sum.on(server)(-10, 4).as<int>(), -6);

    std::string h = client.define("hello").on(server)(std::string("tl"));
    CHECK_EQ(h, "hello tl");

    std::vector<int> v{1, 2, 3, 4, 5};
    auto t = client.define("reverse").on(server)(v).as<std::vector<int>, int>();
    CHECK(std::get<0>(t) == (std::vector<int>{5, 4, 3, 2, 1}));
    CHECK_EQ(std::get<1>(t), 5);
    std::vector<int> out;
    int n = 0;
    client.define("reverse").on(server)(v).unpack(out, n);
    CHECK(out == (std::vector<int>{5, 4, 3, 2, 1}) && n == 5);

    CHECK_EQ(client.define("no_args").on(server)().as<int>(), 42);
    tl::packed_data<> empty = client.define("void_reply").on(server)();
    CHECK(empty.valid());

    /* One-way: nothing to decode; the server still sees every call. */
    tl::remote_procedure oneway = client.define("oneway").disable_response();
    for (int i = 1; i <= 10; i++) {
        tl::packed_data<> p = oneway.on(server)(i);
        CHECK(!p.valid());
    }
    /* The one-way RPCs are not ordered with the next call: ask until the
     * server has seen them all (each ask makes progress). */
    int seen = 0;
    for (int i = 0; i < 1000 && seen != 55; i++)
        seen = client.define("oneway_count").on(server)();
    CHECK_EQ(seen, 55);

    /* The server sees this client's address. */
    std::string me = client.define("whoami").on(server)();
    CHECK(!me.empty());
    CHECK_EQ(me, static_cast<std::string>(client.self()));

    std::string raw =
        client.define("raw_input").on(server)(7, std::string("x"));
    CHECK_EQ(raw, "x7");

    /* Async: several in flight, waited in any order. */
    std::vector<tl::async_response> reqs;
    for (int i = 0; i < 8; i++)
        reqs.push_back(sum.on(server).async(i, 100));
    for (int i = 7; i >= 0; i--) {
        int s = reqs[(size_t) i].wait();
        CHECK_EQ(s, i + 100);
    }
    /* wait_any: each completes once, with its own result. */
    reqs.clear();
    for (int i = 0; i < 6; i++)
        reqs.push_back(sum.on(server).async(i, 1000));
    std::vector<int> got;
    while (!reqs.empty()) {
        decltype(reqs.begin()) done;
        int s = tl::async_response::wait_any(reqs.begin(), reqs.end(), done);
        CHECK(done != reqs.end());
        reqs.erase(done);
        got.push_back(s);
    }
    std::sort(got.begin(), got.end());
    CHECK(got == (std::vector<int>{1000, 1001, 1002, 1003, 1004, 1005}));
    decltype(reqs.begin()) none;
    CHECK_THROWS(tl::exception,
                 tl::async_response::wait_any(reqs.begin(), reqs.end(), none),
                 CHECK_EQ(e.code(), HG_INVALID_ARG));
    tl::async_response a = sum.on(server).async(1, 1);
    while (!a.received()) {
    }
    CHECK_EQ(a.wait().as<int>(), 2);

    /* Errors raised by a handler reach the origin as an exception with the
     * handler's code. */
    CHECK_THROWS(tl::exception,
                 client.define("throws").on(server)((int) HG_PERMISSION),
                 CHECK_EQ(e.code(), HG_PERMISSION));
    CHECK_THROWS(tl::exception, client.define("throws_std").on(server)(),
                 CHECK_EQ(e.code(), HG_OTHER_ERROR));
    /* Arguments that do not decode as the handler's types. */
    CHECK_THROWS(tl::exception, client.define("hello").on(server)(),
                 CHECK(e.code() != HG_SUCCESS));
    /* An RPC the server does not have. */
    CHECK_THROWS(tl::exception, client.define("no_such_rpc").on(server)(1),
                 CHECK_EQ(e.code(), HG_NOENTRY));
    /* Decoding a response as the wrong type. */
    CHECK_THROWS(tl::exception, sum.on(server)(1, 2).as<std::string>(),
                 CHECK(e.code() != HG_SUCCESS));

    /* Timed: a held request times out (at its deadline, read on the NA
     * clock: milliseconds, not a unit a thousand times longer); a prompt
     * one does not. */
    hg_class_t *cls = margo_get_class(client.get_margo_instance());
    uint64_t t0 = HG_Clock_now(cls);
    CHECK_THROWS(
        tl::timeout,
        client.define("hold").on(server).timed(std::chrono::milliseconds(100)),
        CHECK_EQ(e.code(), HG_TIMEOUT));
    CHECK(HG_Clock_now(cls) - t0 >= 100ull * 1000000ull);
    CHECK(HG_Clock_now(cls) - t0 < 10ull * 1000000000ull);
    int t2 = sum.on(server).timed(std::chrono::seconds(10), 20, 22);
    CHECK_EQ(t2, 42);
    int released = client.define("release_held").on(server)();
    CHECK_EQ(released, 1);
    CHECK_EQ(client.define("respond_twice").on(server)().as<int>(), 1);
    CHECK_EQ(client.define("tripled").on(server)(14).as<int>(), 42);
    CHECK_EQ(client.define("auto_rpc").on(server)().as<int>(), 5);
    client.define("drop_auto").on(server)();
    CHECK_THROWS(tl::exception, client.define("auto_rpc").on(server)(),
                 CHECK_EQ(e.code(), HG_NOENTRY));

    /* Endpoints: copies compare equal, print as their address. */
    tl::endpoint copy = server;
    CHECK(copy == server);
    CHECK(!(copy != server));
    std::ostringstream os;
    os << copy;
    CHECK_EQ(os.str(), static_cast<std::string>(server));
    tl::endpoint again = client.lookup(static_cast<std::string>(server));
    CHECK(again == server);
    CHECK(client.self() != server);
    tl::endpoint null_ep;
    CHECK(null_ep.is_null());
    CHECK_THROWS(tl::exception, sum.on(null_ep)(1, 2),
                 CHECK_EQ(e.code(), HG_INVALID_ARG));
}

int
main(int argc, char **argv)
{
    return tl_test_main(argc, argv);
}
