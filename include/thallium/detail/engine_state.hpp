/*
 * What every object of the layer shares about its engine: the Margo
 * instance and whether it is still usable. Endpoints, bulks, requests and
 * remote procedures hold a shared_ptr to it, so it outlives them all and an
 * object used after its engine finalized throws instead of touching a
 * freed instance.
 */
#ifndef THALLIUM_DETAIL_ENGINE_STATE_HPP
#define THALLIUM_DETAIL_ENGINE_STATE_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <margo-config.h>
#include <margo.h>

#include <thallium/exception.hpp>

namespace thallium
{
namespace detail
{

struct engine_state {
    margo_instance_id mid = MARGO_INSTANCE_NULL;
    /* Set when Margo runs the last of the instance's finalize callbacks
     * (the first one the layer pushed, see registry.hpp), or once a
     * finalize from outside any handler returned. */
    std::atomic<bool> finalized{false};
    /* finalize() was asked for; the instance may still be up until the
     * thread that owns the shutdown runs it. */
    std::atomic<bool> finalize_requested{false};
    /* Where handlers of RPCs defined without a pool run: the engine's
     * handler pool when built with engine(addr, mode, pool, pool),
     * ABT_POOL_NULL for Margo's own choice. */
    ABT_pool default_pool = ABT_POOL_NULL;
    /* What engine::pools() and engine::xstreams() answer once the engine
     * is finalized (named_objects.hpp): each configured pool and stream
     * with its name, handle and reference count as they were when Margo
     * ran the layer's finalize callback, before it freed them. Thallium's
     * lists keep working after finalize (Margo keeps the instance while
     * Thallium holds a reference), and services such as Bedrock release
     * their pool references from destructors that run after it. */
    struct finalized_object {
        std::string name;
        void *handle;
        unsigned refcount;
    };
    std::mutex after_lock;
    std::vector<finalized_object> after_pools;    /* after_lock */
    std::vector<finalized_object> after_xstreams; /* after_lock */

    /* Called from the layer's finalize callback, while Margo's pools and
     * streams still exist. */
    void snapshot_objects()
    {
        std::lock_guard<std::mutex> g(after_lock);
        after_pools.clear();
        after_xstreams.clear();
        for (std::size_t i = 0; i < margo_get_num_pools(mid); i++) {
            struct margo_pool_info info {
            };
            unsigned c = 0;
            if (margo_find_pool_by_index(mid, (std::uint32_t) i, &info) !=
                HG_SUCCESS)
                continue;
            margo_pool_ref_count_by_index(mid, (std::uint32_t) i, &c);
            after_pools.push_back(
                {info.name ? info.name : "", (void *) info.pool, c});
        }
        for (std::size_t i = 0; i < margo_get_num_xstreams(mid); i++) {
            struct margo_xstream_info info {
            };
            unsigned c = 0;
            if (margo_find_xstream_by_index(mid, (std::uint32_t) i, &info) !=
                HG_SUCCESS)
                continue;
            margo_xstream_ref_count_by_index(mid, (std::uint32_t) i, &c);
            after_xstreams.push_back(
                {info.name ? info.name : "", (void *) info.xstream, c});
        }
    }

    margo_instance_id checked_mid(const char *what) const
    {
        if (mid == MARGO_INSTANCE_NULL)
            throw exception(std::string(what) + ": the engine is null",
                            HG_INVALID_ARG);
        if (finalized.load())
            throw exception(std::string(what) + ": the engine is finalized",
                            HG_CANCELED);
        return mid;
    }
};

/* How many handlers of any engine the calling thread is running: a
 * finalize() from inside one only records the request (Margo finishes it
 * in the thread that waits for finalize). */
inline int &
handler_depth()
{
    static thread_local int depth = 0;
    return depth;
}

} // namespace detail
} // namespace thallium

#endif
