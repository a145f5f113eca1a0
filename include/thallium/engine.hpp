/*
 * tl::engine: a Margo instance. A server engine (THALLIUM_SERVER_MODE or
 * MARGO_SERVER_MODE) listens; a client one does not.
 *
 * Lifetime, as in Thallium: copies of an engine share it, and when the
 * last copy made by the program goes away a server engine waits for
 * finalize (a server's main() may end right after its define() calls) and
 * a client engine finalizes. finalize() from inside a handler only asks for
 * the shutdown; the thread waiting for finalize (the server's destructor,
 * or wait_for_finalize()) performs it. Engines the layer hands out
 * (request, provider and archive get_engine()) are references that never
 * finalize.
 */
#ifndef THALLIUM_ENGINE_HPP
#define THALLIUM_ENGINE_HPP

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <margo.h>

#include <thallium/bulk.hpp>
#include <thallium/bulk_mode.hpp>
#include <thallium/detail/registry.hpp>
#include <thallium/detail/rpc_dispatch.hpp>
#include <thallium/endpoint.hpp>
#include <thallium/exception.hpp>
#include <thallium/function_util.hpp>
#include <thallium/remote_procedure.hpp>
#include <thallium/request.hpp>

#define THALLIUM_SERVER_MODE MARGO_SERVER_MODE
#define THALLIUM_CLIENT_MODE MARGO_CLIENT_MODE

namespace thallium
{

class pool;

namespace detail
{

/* Run the layer's finalize callbacks, last pushed first. */
inline void
run_finalize_callbacks(engine_state &s)
{
    for (;;) {
        std::function<void()> cb;
        {
            std::lock_guard<std::mutex> g(s.lock);
            if (s.finalize_cbs.empty())
                return;
            cb = std::move(s.finalize_cbs.back().second);
            s.finalize_cbs.pop_back();
        }
        if (cb)
            cb();
    }
}

inline void
mark_finalized(engine_state &s)
{
    if (!s.finalized.exchange(true))
        forget_state(s.mid);
}

/* Finalize now: only valid outside the instance's handlers. */
inline void
finalize_now(engine_state &s)
{
    if (s.finalized.load())
        return;
    run_finalize_callbacks(s);
    margo_finalize(s.mid);
    mark_finalized(s);
}

inline void
wait_for_finalize(engine_state &s)
{
    if (s.finalized.load())
        return;
    margo_wait_for_finalize(s.mid);
    mark_finalized(s);
    /* Margo already shut down: callbacks see a finalized engine. */
    run_finalize_callbacks(s);
}

/* The shared token of the program's own copies of an engine. */
struct engine_life {
    engine_life(std::shared_ptr<engine_state> s, bool is_server)
        : state(std::move(s)), server(is_server)
    {
    }
    engine_life(const engine_life &) = delete;
    engine_life &operator=(const engine_life &) = delete;
    std::shared_ptr<engine_state> state;
    bool server;
    ~engine_life()
    {
        if (state->finalized.load())
            return;
        if (server)
            wait_for_finalize(*state);
        else if (handler_depth() == 0)
            finalize_now(*state);
        else
            margo_finalize(state->mid);
    }
};

} // namespace detail

class engine
{
  public:
    engine() = default;

    engine(const std::string &addr, int mode, bool use_progress_thread = false,
           std::int32_t rpc_thread_count = 0,
           const struct hg_init_info *hg_opt = nullptr)
    {
        margo_instance_id mid =
            margo_init_opt(addr.c_str(), mode, hg_opt,
                           use_progress_thread ? 1 : 0, (int) rpc_thread_count);
        if (mid == MARGO_INSTANCE_NULL)
            throw margo_exception("margo_init", HG_OTHER_ERROR,
                                  "could not initialize Margo on \"" + addr +
                                      "\"");
        adopt(mid, mode == MARGO_SERVER_MODE);
    }

    /* An engine over an existing instance. With take_ownership it behaves
     * like one the program created (finalize or wait at the end). */
    engine(margo_instance_id mid, bool take_ownership = false)
        : m_state(detail::state_of(mid))
    {
        if (take_ownership && mid != MARGO_INSTANCE_NULL)
            m_life = std::make_shared<detail::engine_life>(
                m_state, margo_is_listening(mid) == HG_TRUE);
    }

    engine(const engine &) = default;
    engine(engine &&) noexcept = default;
    engine &operator=(const engine &) = default;
    engine &operator=(engine &&) noexcept = default;
    ~engine() = default;

    /* A non-owning reference to the engine of `state`. */
    static engine reference(std::shared_ptr<detail::engine_state> state)
    {
        engine e;
        e.m_state = std::move(state);
        return e;
    }

    margo_instance_id get_margo_instance() const noexcept
    {
        return m_state ? m_state->mid : MARGO_INSTANCE_NULL;
    }
    explicit operator bool() const noexcept
    {
        return m_state && !m_state->finalized.load();
    }
    bool is_listening() const
    {
        return margo_is_listening(mid("is_listening")) == HG_TRUE;
    }

    endpoint self() const
    {
        hg_addr_t a = HG_ADDR_NULL;
        hg_return_t ret = margo_addr_self(mid("self"), &a);
        MARGO_ASSERT(ret, margo_addr_self);
        return endpoint(m_state, a, true);
    }

    endpoint lookup(const std::string &address) const
    {
        hg_addr_t a = HG_ADDR_NULL;
        hg_return_t ret = margo_addr_lookup(mid("lookup"), address.c_str(), &a);
        if (ret != HG_SUCCESS)
            detail::throw_hg("margo_addr_lookup", ret, address);
        return endpoint(m_state, a, true);
    }

    /* An RPC this engine sends. Keeps an existing registration (a handler
     * defined under the same name stays). */
    remote_procedure define(const std::string &name)
    {
        margo_instance_id m = mid("define");
        detail::origin_rpc_id(m, name, 0, false);
        return remote_procedure(m_state, name, 0);
    }

    /* An RPC with a handler: a free function, std::function or lambda
     * taking (const tl::request&, args...). */
    template <typename F>
    remote_procedure define(const std::string &name, F &&handler,
                            std::uint16_t provider_id = 0)
    {
        using traits = detail::function_traits<typename std::decay<F>::type>;
        using args = typename detail::tail_args<typename traits::args>::type;
        using fn_t = typename std::decay<F>::type;
        fn_t fn(std::forward<F>(handler));
        return define_raw(
            name,
            [fn](const request &req) mutable {
                detail::invoke_with_input<args>::call(fn, req,
                                                      detail::discard_result{});
            },
            provider_id);
    }

    /* Register `fn` as the handler of `name` (for provider_id). */
    remote_procedure define_raw(const std::string &name,
                                std::function<void(const request &)> fn,
                                std::uint16_t provider_id = 0)
    {
        margo_instance_id m = mid("define");
        hg_id_t id = detail::register_rpc(m, name, provider_id);
        auto *entry = new detail::rpc_entry{m_state, std::move(fn)};
        hg_return_t ret =
            margo_register_data(m, id, entry, detail::free_rpc_entry);
        if (ret != HG_SUCCESS) {
            delete entry;
            detail::throw_hg("margo_register_data", ret, name);
        }
        return remote_procedure(m_state, name, provider_id);
    }

    bulk expose(const std::vector<std::pair<void *, std::size_t>> &segments,
                bulk_mode mode)
    {
        std::vector<void *> ptrs;
        std::vector<hg_size_t> sizes;
        for (const auto &s : segments) {
            ptrs.push_back(s.first);
            sizes.push_back((hg_size_t) s.second);
        }
        return expose((unsigned) segments.size(), ptrs.data(), sizes.data(),
                      mode);
    }
    bulk expose(unsigned count, void **ptrs, const hg_size_t *sizes,
                bulk_mode mode)
    {
        hg_bulk_t h = HG_BULK_NULL;
        hg_return_t ret = margo_bulk_create(mid("expose"), count, ptrs, sizes,
                                            (hg_uint8_t) mode, &h);
        MARGO_ASSERT(ret, margo_bulk_create);
        return bulk(m_state, h, true);
    }
    /* A tl::bulk over an HG bulk handle (the bulk takes a reference). */
    bulk wrap(hg_bulk_t blk, bool is_local)
    {
        mid("wrap");
        if (blk != HG_BULK_NULL)
            HG_Bulk_ref_incr(blk);
        return bulk(m_state, blk, is_local);
    }

    void finalize()
    {
        if (!m_state || m_state->finalized.load())
            return;
        m_state->finalize_requested = true;
        if (detail::handler_depth() > 0)
            margo_finalize(m_state->mid);
        else
            detail::finalize_now(*m_state);
    }
    void wait_for_finalize()
    {
        if (m_state)
            detail::wait_for_finalize(*m_state);
    }
    void finalize_and_wait()
    {
        finalize();
        wait_for_finalize();
    }

    /* Callbacks run when the engine finalizes, last pushed first. An owner
     * keeps a stack of its own (providers use it). */
    template <typename F> void push_finalize_callback(F &&f)
    {
        push_finalize_callback(nullptr, std::forward<F>(f));
    }
    template <typename F> void push_finalize_callback(const void *owner, F &&f)
    {
        mid("push_finalize_callback");
        std::lock_guard<std::mutex> g(m_state->lock);
        m_state->finalize_cbs.emplace_back(
            owner, std::function<void()>(std::forward<F>(f)));
    }
    std::function<void()>
    top_finalize_callback(const void *owner = nullptr) const
    {
        mid("top_finalize_callback");
        std::lock_guard<std::mutex> g(m_state->lock);
        for (auto it = m_state->finalize_cbs.rbegin();
             it != m_state->finalize_cbs.rend(); ++it)
            if (it->first == owner)
                return it->second;
        return std::function<void()>();
    }
    std::function<void()> pop_finalize_callback(const void *owner = nullptr)
    {
        mid("pop_finalize_callback");
        std::lock_guard<std::mutex> g(m_state->lock);
        auto &v = m_state->finalize_cbs;
        for (auto it = v.rbegin(); it != v.rend(); ++it) {
            if (it->first == owner) {
                std::function<void()> f = std::move(it->second);
                v.erase(std::next(it).base());
                return f;
            }
        }
        return std::function<void()>();
    }

    const std::shared_ptr<detail::engine_state> &state() const noexcept
    {
        return m_state;
    }

  private:
    void adopt(margo_instance_id m, bool server)
    {
        m_state = detail::state_of(m);
        m_life = std::make_shared<detail::engine_life>(m_state, server);
    }
    margo_instance_id mid(const char *what) const
    {
        if (!m_state)
            throw exception(std::string(what) + ": null engine",
                            HG_INVALID_ARG);
        return m_state->checked_mid(what);
    }

    std::shared_ptr<detail::engine_state> m_state;
    std::shared_ptr<detail::engine_life> m_life;
};

inline endpoint::endpoint(const engine &e, hg_addr_t addr, bool take_ownership)
    : endpoint(e.state(), addr, take_ownership)
{
}
inline engine
endpoint::get_engine() const
{
    return engine::reference(m_state);
}

template <typename... C>
inline engine
proc_output_archive<C...>::get_engine() const
{
    return engine(m_mid);
}
template <typename... C>
inline engine
proc_input_archive<C...>::get_engine() const
{
    return engine(m_mid);
}

} // namespace thallium

#endif
