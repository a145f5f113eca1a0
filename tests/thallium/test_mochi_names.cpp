/*
 * The names real Mochi services use (issue 26): every header Thallium
 * installs, included by its own name; the version macros of Thallium,
 * Margo and Mercury; provider::get_engine() from outside the provider;
 * tl::timer, tl::future, tl::self, tl::xstream_barrier; the pool a ULT
 * last ran from (main thread and handler); engine::pools() / xstreams()
 * after finalize. On sim, in one process.
 */
#include <thallium/abt.hpp>
#include <thallium/abt_errors.hpp>
#include <thallium/anonymous.hpp>
#include <thallium/async_response.hpp>
#include <thallium/barrier.hpp>
#include <thallium/bulk.hpp>
#include <thallium/bulk_mode.hpp>
#include <thallium/callable_remote_procedure.hpp>
#include <thallium/condition_variable.hpp>
#include <thallium/endpoint.hpp>
#include <thallium/engine.hpp>
#include <thallium/eventual.hpp>
#include <thallium/exception.hpp>
#include <thallium/function_util.hpp>
#include <thallium/future.hpp>
#include <thallium/logger.hpp>
#include <thallium/managed.hpp>
#include <thallium/margo_exception.hpp>
#include <thallium/margo_instance_ref.hpp>
#include <thallium/mutex.hpp>
#include <thallium/packed_data.hpp>
#include <thallium/pool.hpp>
#include <thallium/proc_object.hpp>
#include <thallium/provider.hpp>
#include <thallium/provider_handle.hpp>
#include <thallium/reference_util.hpp>
#include <thallium/remote_bulk.hpp>
#include <thallium/remote_procedure.hpp>
#include <thallium/request.hpp>
#include <thallium/rwlock.hpp>
#include <thallium/scheduler.hpp>
#include <thallium/self.hpp>
#include <thallium/serialization/cereal/archives.hpp>
#include <thallium/serialization/proc_input_archive.hpp>
#include <thallium/serialization/proc_output_archive.hpp>
#include <thallium/serialization/serialize.hpp>
#include <thallium/task.hpp>
#include <thallium/thread.hpp>
#include <thallium/timed_callback.hpp>
#include <thallium/timed_remote_bulk.hpp>
#include <thallium/timeout.hpp>
#include <thallium/timer.hpp>
#include <thallium/tuple_util.hpp>
#include <thallium/unit_type.hpp>
#include <thallium/xstream.hpp>
#include <thallium/xstream_barrier.hpp>
#include <thallium/serialization/stl/string.hpp>

#include <margo-version.h>
#include <mercury_config.h>

#include "tl_test.hpp"

#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

static_assert(THALLIUM_VERSION_NUM == THALLIUM_VERSION_MAJOR * 1000000 +
                                          THALLIUM_VERSION_MINOR * 1000 +
                                          THALLIUM_VERSION_PATCH,
              "THALLIUM_VERSION_NUM");
static_assert(MARGO_VERSION_NUM == MARGO_VERSION_MAJOR * 100000 +
                                       MARGO_VERSION_MINOR * 100 +
                                       MARGO_VERSION_PATCH,
              "MARGO_VERSION_NUM");
static_assert(HG_VERSION_MAJOR == 2 && HG_VERSION_MINOR == 4,
              "Mercury 2.4's version macros");
static_assert(
    std::is_same<tl::unwrap_decay_t<std::reference_wrapper<int>>, int &>::value,
    "unwrap_decay_t");

/* Warabi's shape: the engine is asked for from outside the provider. */
class blobs : public tl::provider<blobs>
{
  public:
    blobs(const tl::engine &e, std::uint16_t id) : tl::provider<blobs>(e, id)
    {
        define("blobs_last_pool", &blobs::last_pool);
    }
    /* Whether the handler's ULT says it runs from the engine's handler
     * pool, asked both ways. */
    int last_pool() const
    {
        tl::pool mine = tl::thread::self().get_last_pool();
        int ok = mine == get_engine().get_handler_pool() ? 1 : 0;
        ABT_pool by_self = ABT_POOL_NULL;
        if (ABT_self_get_last_pool(&by_self) != ABT_SUCCESS ||
            by_self != mine.native_handle())
            ok = 0;
        int id = -1;
        ABT_pool_get_id(mine.native_handle(), &id);
        if (tl::self::get_last_pool_id() != id)
            ok = 0;
        return ok;
    }
};

static int
add3(int a, int b, int c)
{
    return a + b + c;
}

static void
small_names()
{
    std::tuple<int, int, int> t(1, 2, 3);
    CHECK_EQ(tl::apply_function_to_tuple(add3, t), 6);
    std::function<int(int, int, int)> f = add3;
    CHECK_EQ(tl::apply_function_to_tuple(f, t), 6);

    tl::abt scope;
    tl::timer tm;
    double t0 = tl::timer::wtime();
    tm.start();
    tm.stop();
    CHECK(tm.read() >= 0.0);
    CHECK(tl::timer::wtime() >= t0);
    tl::timer copy(tm);
    CHECK_EQ(copy.read(), tm.read());
    CHECK(tl::timer::overhead() >= 0.0);

    int a = 1, b = 2;
    std::vector<int> seen;
    {
        tl::future<int> fu(2, [&seen](const std::vector<int *> &v) {
            for (int *p : v)
                seen.push_back(*p);
        });
        CHECK(!fu.test());
        fu.set(&b);
        CHECK(!fu.test());
        fu.set(&a);
        fu.wait();
        CHECK(fu.test());
        tl::future<int> moved(std::move(fu));
        CHECK(static_cast<bool>(moved));
        tl::future<int> plain(1);
        plain.set(nullptr);
        plain.wait();
    }
    CHECK_EQ(seen.size(), 2u);
    CHECK_EQ(seen[0], 2);
    CHECK_EQ(seen[1], 1);

    CHECK(tl::self::is_primary());
    CHECK(tl::self::on_primary_xstream());
    CHECK(tl::self::get_unit_type() == tl::unit_type::thread);
    tl::xstream_barrier xb(1);
    xb.wait();
}

static void
last_pools_and_finalize()
{
    tl::engine server("sim://mochi-names", THALLIUM_SERVER_MODE, false, 1);
    /* The main thread runs from the primary stream's first pool. */
    tl::pool primary = tl::xstream::self().get_main_pools()[0];
    CHECK(tl::thread::self().get_last_pool() == primary);
    int primary_id = -1;
    ABT_pool_get_id(primary.native_handle(), &primary_id);
    CHECK_EQ(tl::self::get_last_pool_id(), primary_id);
    CHECK(!(server.get_handler_pool() == primary));

    auto *prov = new blobs(server, 3);
    /* Public, as Warabi's Provider.cpp uses it. */
    int owner = 0;
    bool ran = false;
    prov->get_engine().push_finalize_callback(&owner, [&ran]() { ran = true; });
    {
        tl::engine client("sim", THALLIUM_CLIENT_MODE);
        tl::endpoint ep = client.lookup("sim://mochi-names");
        int ok =
            client.define("blobs_last_pool").on(tl::provider_handle(ep, 3))();
        CHECK_EQ(ok, 1);
        tl::margo_instance_ref ref(client.get_margo_instance());
        CHECK(static_cast<bool>(ref));
        CHECK(ref == tl::margo_instance_ref(client.get_margo_instance()));
    }
    delete prov;

    /* Bedrock's PoolRef: a reference taken before finalize is released by
     * a destructor that runs after it. */
    std::size_t npools = server.pools().size();
    std::size_t nxs = server.xstreams().size();
    std::string first = server.pools()[0].name();
    server.pools().ref_incr(first);
    server.xstreams().ref_incr(0);
    tl::pool handler = server.get_handler_pool();
    std::string handler_name = server.pools()[handler].name();
    tl::engine kept = server;
    server.finalize();
    CHECK(ran);
    CHECK_EQ(kept.pools().size(), npools);
    CHECK_EQ(kept.xstreams().size(), nxs);
    CHECK_EQ(kept.pools()[first].name(), first);
    CHECK_EQ(kept.pools()[0].index(), 0u);
    CHECK_EQ(kept.pools()[handler].name(), handler_name);
    CHECK_EQ(kept.pools().ref_count(first), 1u);
    kept.pools().release(first);
    CHECK_EQ(kept.pools().ref_count(first), 0u);
    CHECK_THROWS(tl::exception, kept.pools().release(first),
                 CHECK_EQ(e.code(), HG_PERMISSION));
    kept.xstreams().release(0);
    CHECK_THROWS(tl::exception, kept.pools()["no-such-pool"],
                 CHECK_EQ(e.code(), HG_NOENTRY));
    CHECK_THROWS(tl::exception, kept.pools()[npools],
                 CHECK_EQ(e.code(), HG_INVALID_ARG));
    kept.pools().remove(first);
    CHECK_EQ(kept.pools().size(), npools - 1);
}

int
main()
{
    small_names();
    last_pools_and_finalize();
    std::printf("test_mochi_names: OK\n");
    return 0;
}
