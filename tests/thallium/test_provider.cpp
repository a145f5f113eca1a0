/*
 * tl::provider<T>: several providers of one class under different ids,
 * methods with and without a request parameter, return values sent as the
 * response, one-way void methods, const methods, ignore_return_value,
 * provider_handle, unknown provider ids, and providers going away.
 */
#include "tl_test.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <thallium/serialization/stl/map.hpp>
#include <thallium/serialization/stl/string.hpp>
#include <thallium/serialization/stl/vector.hpp>

class store : public tl::provider<store>
{
  public:
    store(tl::engine &e, uint16_t id) : tl::provider<store>(e, id)
    {
        define("store_put", &store::put);
        define("store_get", &store::get);
        define("store_count", &store::count);
        m_touch = define("store_touch", &store::touch);
        define("store_whoami", &store::whoami);
        define("store_ignored", &store::ignored, tl::ignore_return_value());
        define("store_weights", &store::weights);
    }
    std::atomic<int> touched{0};
    /* What define() returned for the void method: one-way. */
    tl::remote_procedure m_touch;

  private:
    /* Answers through the request. */
    void put(const tl::request &req, const std::vector<std::string> &keys,
             const std::map<std::string, double> &values)
    {
        for (auto &k : keys)
            m_data[k] = values.count(k) ? values.at(k) : -1.0;
        req.respond((int) keys.size());
    }
    /* Return value is the response. */
    double get(const std::string &key)
    {
        auto it = m_data.find(key);
        return it == m_data.end() ? -2.0 : it->second;
    }
    size_t count() const
    {
        return m_data.size();
    }
    /* void, no request: one-way. */
    void touch(int n)
    {
        touched += n;
    }
    int whoami(const tl::request &req)
    {
        req.respond((int) req.get_provider_id() * 1000 +
                    (int) get_provider_id());
        return 0;
    }
    int ignored(const tl::request &req)
    {
        req.respond(7);
        return 99;
    }
    std::map<std::string, double> weights(const std::vector<std::string> &keys)
    {
        std::map<std::string, double> out;
        for (auto &k : keys)
            out[k] = get(k);
        return out;
    }
    std::map<std::string, double> m_data;
};

/* A provider with an identity. */
class named : public tl::provider<named>
{
  public:
    named(tl::engine &e, uint16_t id) : tl::provider<named>(e, id, "counter")
    {
        define("named_identity", &named::my_identity);
    }
    std::string my_identity() const
    {
        return identity();
    }
};

static store *g_stores[2];
static named *g_named;

void
define_server(tl::engine &server)
{
    g_stores[0] = new store(server, 1);
    g_stores[1] = new store(server, 2);
    server.define("touched", [](const tl::request &req, int which) {
        req.respond(g_stores[which]->touched.load());
    });
    /* Drop provider 2 on request: its RPCs must then be unknown. */
    server.define("drop2", [](const tl::request &req) {
        delete g_stores[1];
        g_stores[1] = nullptr;
        req.respond();
    });
    /* The provider's own handle of its void method sends and returns:
     * made from a handler on the server, to the server itself, it must
     * not wait for an answer (the bound only ends a wait that should not
     * be there; false then). */
    server.define("touch_self", [&server](const tl::request &req) {
        bool one_way = true;
        try {
            g_stores[0]
                ->m_touch.on(tl::provider_handle(server.self(), 1))
                .timed(std::chrono::seconds(5), 0);
        } catch (const tl::exception &e) {
            std::fprintf(stderr, "touch_self: %s\n", e.what());
            one_way = false;
        }
        req.respond(one_way);
    });
    g_named = new named(server, 3);
    /* A second provider with the id of one that has an identity. */
    CHECK_THROWS(tl::exception, named(server, 3), CHECK_EQ(e.code(), HG_EXIST));
    server.define("drop3", [](const tl::request &req) {
        delete g_named;
        g_named = nullptr;
        req.respond();
    });
    server.push_finalize_callback([]() {
        delete g_named;
        delete g_stores[0];
        delete g_stores[1];
    });
}

void
run_client(tl::engine &client, const tl::endpoint &server, bool sim)
{
    (void) sim;
    tl::provider_handle p1(server, 1), p2(server, 2), p9(server, 9);
    CHECK_EQ(p1.provider_id(), 1);
    tl::remote_procedure put = client.define("store_put");
    tl::remote_procedure get = client.define("store_get");

    std::vector<std::string> keys{"a", "b", "c"};
    std::map<std::string, double> vals{{"a", 1.5}, {"b", 2.5}, {"c", -3.25}};
    CHECK_EQ(put.on(p1)(keys, vals).as<int>(), 3);
    CHECK_EQ(put.on(p2)(std::vector<std::string>{"a"},
                        std::map<std::string, double>{{"a", 9.0}})
                 .as<int>(),
             1);
    /* The providers keep their own data. */
    CHECK_EQ(get.on(p1)(std::string("a")).as<double>(), 1.5);
    CHECK_EQ(get.on(p2)(std::string("a")).as<double>(), 9.0);
    CHECK_EQ(get.on(p1)(std::string("c")).as<double>(), -3.25);
    CHECK_EQ(get.on(p2)(std::string("c")).as<double>(), -2.0);
    CHECK_EQ(client.define("store_count").on(p1)().as<size_t>(), 3u);
    std::map<std::string, double> w =
        client.define("store_weights").on(p1)(keys);
    CHECK(w == vals);

    /* One-way void method. */
    tl::remote_procedure touch =
        client.define("store_touch").disable_response();
    for (int i = 0; i < 5; i++)
        touch.on(p2)(i);
    int seen = 0;
    for (int i = 0; i < 1000 && seen != 10; i++)
        seen = client.define("touched").on(server)(1);
    CHECK_EQ(seen, 10);
    CHECK(client.define("touch_self").on(server)().as<bool>());

    CHECK_EQ(client.define("store_whoami").on(p2)().as<int>(), 2002);
    CHECK_EQ(client.define("store_ignored").on(p1)().as<int>(), 7);

    /* A provider id nobody registered, and the default target. */
    CHECK_THROWS(tl::exception, get.on(p9)(std::string("a")),
                 CHECK_EQ(e.code(), HG_NOENTRY));
    CHECK_THROWS(tl::exception, get.on(server)(std::string("a")),
                 CHECK_EQ(e.code(), HG_NOENTRY));

    /* Identities: asked over the network. */
    tl::provider_handle p3(server, 3);
    CHECK_EQ(p3.get_identity(), "counter");
    std::string local = client.define("named_identity").on(p3)();
    CHECK_EQ(local, "counter");
    CHECK_THROWS(tl::exception, p1.get_identity(),
                 CHECK_EQ(e.code(), HG_NOENTRY));
    client.define("drop3").on(server)();
    CHECK_THROWS(tl::exception, p3.get_identity(),
                 CHECK_EQ(e.code(), HG_NOENTRY));

    client.define("drop2").on(server)();
    CHECK_THROWS(tl::exception, get.on(p2)(std::string("a")),
                 CHECK_EQ(e.code(), HG_NOENTRY));
    CHECK_EQ(get.on(p1)(std::string("b")).as<double>(), 2.5);
}

int
main(int argc, char **argv)
{
    return tl_test_main(argc, argv);
}
