/*
 * The pools an engine runs on: engine(addr, mode, progress_pool,
 * handler_pool), define(name, handler, provider_id, pool), a provider's
 * define(name, method, pool), get_handler_pool / get_progress_pool, and
 * the configuration's pools() and xstreams(). On sim, in one process; a
 * handler reports the rank of the execution stream it ran on, so a pool
 * argument that was ignored shows up as a wrong rank.
 */
#include <string>

#include "tl_test.hpp"

class ranked : public tl::provider<ranked>
{
  public:
    ranked(tl::engine &e, std::uint16_t id, const tl::pool &p)
        : tl::provider<ranked>(e, id)
    {
        define("ranked_where", &ranked::where, p);
    }
    int where() const
    {
        return tl::xstream::self_rank();
    }
};

static void
pools_given_to_the_engine()
{
    tl::abt scope;
    tl::managed<tl::pool> handler_pool =
        tl::pool::create(tl::pool::access::mpmc);
    tl::managed<tl::pool> other_pool = tl::pool::create(tl::pool::access::mpmc);
    tl::managed<tl::xstream> handler_es =
        tl::xstream::create(tl::scheduler::predef::deflt, *handler_pool);
    tl::managed<tl::xstream> other_es =
        tl::xstream::create(tl::scheduler::predef::deflt, *other_pool);
    tl::pool primary = tl::xstream::self().get_main_pools()[0];
    const int handler_rank = handler_es->get_rank();
    const int other_rank = other_es->get_rank();
    CHECK(handler_rank != other_rank && handler_rank > 0 && other_rank > 0);
    {
        tl::engine server("sim://pools-server", THALLIUM_SERVER_MODE, primary,
                          *handler_pool);
        CHECK(server.get_handler_pool() == *handler_pool);
        auto where = [](const tl::request &req) {
            req.respond(tl::xstream::self_rank());
        };
        server.define("where_default", where);
        server.define("where_other", where, 0, *other_pool);
        server.define("where_provider", where, 5, *other_pool);
        ranked prov(server, 9, *other_pool);
        {
            tl::engine client("sim", THALLIUM_CLIENT_MODE);
            tl::endpoint ep = client.lookup("sim://pools-server");
            int r = client.define("where_default").on(ep)();
            CHECK_EQ(r, handler_rank);
            r = client.define("where_other").on(ep)();
            CHECK_EQ(r, other_rank);
            r = client.define("where_provider")
                    .on(tl::provider_handle(ep, 5))();
            CHECK_EQ(r, other_rank);
            r = client.define("ranked_where").on(tl::provider_handle(ep, 9))();
            CHECK_EQ(r, other_rank);
        }
        server.finalize();
    }
    CHECK_THROWS(tl::exception,
                 tl::engine("sim://pools-bad", THALLIUM_SERVER_MODE, tl::pool(),
                            *handler_pool),
                 CHECK(e.code() == HG_INVALID_ARG));
    handler_es->join();
    other_es->join();
}

static const char *config = R"({
  "argobots": {
    "pools": [
      {"name": "__primary__", "kind": "fifo_wait", "access": "mpmc"},
      {"name": "my_pool", "kind": "fifo_wait", "access": "mpmc"},
      {"name": "my_other_pool", "kind": "fifo", "access": "mpmc"}
    ],
    "xstreams": [
      {"name": "__primary__",
       "scheduler": {"type": "basic_wait", "pools": [0]}},
      {"name": "my_es",
       "scheduler": {"type": "basic_wait", "pools": ["my_pool", 2]}}
    ]
  },
  "progress_pool": "my_pool",
  "rpc_pool": "my_other_pool"
})";

static void
configured_pools_and_xstreams()
{
    tl::engine e("sim://pools-config", THALLIUM_SERVER_MODE, config);
    CHECK_EQ(e.pools().size(), 3u);
    CHECK_EQ(e.xstreams().size(), 2u);
    tl::pool my_pool = e.pools()["my_pool"];
    CHECK(!my_pool.is_null());
    CHECK_EQ(e.pools()[1].name(), std::string("my_pool"));
    CHECK_EQ(e.pools()[std::string("my_other_pool")].index(), 2u);
    CHECK(e.pools()[2] == e.pools()["my_other_pool"]);
    CHECK_EQ(e.pools()[my_pool].name(), std::string("my_pool"));
    CHECK(e.get_progress_pool() == my_pool);
    CHECK(e.get_handler_pool() == e.pools()["my_other_pool"]);
    tl::xstream es = e.xstreams()["my_es"];
    CHECK_EQ(e.xstreams()[1].name(), std::string("my_es"));
    CHECK(e.xstreams()[0].is_primary());
    CHECK(!es.is_primary());
    CHECK_EQ(es.get_main_pools().size(), 2u);
    CHECK(es.get_main_pools()[0] == my_pool);
    CHECK_THROWS(tl::exception, e.pools()["no_such_pool"],
                 CHECK(e.code() == HG_NOENTRY));
    CHECK_THROWS(tl::exception, e.xstreams()[7],
                 CHECK(e.code() == HG_INVALID_ARG));

    CHECK_EQ(e.pools().ref_count(0), 0u);
    e.pools().ref_incr(0);
    e.pools().ref_incr("__primary__");
    CHECK_EQ(e.pools().ref_count(std::string("__primary__")), 2u);
    e.pools().release(0);
    CHECK_EQ(e.pools().ref_count(0), 1u);
    e.xstreams().ref_incr("my_es");
    CHECK_EQ(e.xstreams().ref_count(1), 1u);
    e.xstreams().release(es);
    CHECK_EQ(e.xstreams().ref_count("my_es"), 0u);
    CHECK_THROWS(tl::exception, e.xstreams().release(1),
                 CHECK(e.code() == HG_PERMISSION));

    /* The counts are Margo's: a referenced pool cannot be removed, and
     * neither can the progress pool or the primary xstream. */
    margo_instance_id mid = e.get_margo_instance();
    CHECK(margo_add_pool_from_json(mid, R"({"name":"extra"})", nullptr) ==
          HG_SUCCESS);
    CHECK(margo_add_xstream_from_json(
              mid, R"({"name":"extra_es","scheduler":{"pools":["extra"]}})",
              nullptr) == HG_SUCCESS);
    std::size_t npools = e.pools().size();
    e.pools().ref_incr("extra");
    unsigned margo_refs = 0;
    CHECK(margo_pool_ref_count_by_name(mid, "extra", &margo_refs) ==
          HG_SUCCESS);
    CHECK_EQ(margo_refs, 1u);
    e.xstreams().remove("extra_es");
    CHECK_THROWS(tl::exception, e.pools().remove("extra"),
                 CHECK(e.code() == HG_PERMISSION));
    CHECK_EQ(e.pools().size(), npools);
    e.pools().release("extra");
    e.pools().remove(e.pools()["extra"]);
    CHECK_EQ(e.pools().size(), npools - 1);
    CHECK_THROWS(tl::exception, e.pools().remove("my_pool"),
                 CHECK(e.code() == HG_OTHER_ERROR));
    CHECK_THROWS(tl::exception, e.xstreams().remove(0),
                 CHECK(e.code() == HG_PERMISSION));
    e.finalize();
    /* As in Thallium, the lists still answer after finalize (from what the
     * engine kept then; test_mochi_names checks them further). */
    CHECK_EQ(e.pools().size(), npools - 1);
}

int
main()
{
    pools_given_to_the_engine();
    configured_pools_and_xstreams();
    std::printf("test_engine_pools: OK\n");
    return 0;
}
