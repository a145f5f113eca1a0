/*
 * tl::engine: a Margo instance. A server engine (THALLIUM_SERVER_MODE or
 * MARGO_SERVER_MODE) listens; a client one does not.
 *
 * Lifetime, as in Thallium: copies of an engine share it, and when the
 * last copy made by the program goes away a server engine waits for
 * finalize (a server's main() may end right after its define() calls) and
 * a client engine finalizes. A server engine whose last copy goes while an
 * exception unwinds the stack (a failed check in a test, say) finalizes
 * instead, as current Thallium's does in every case: nobody is left to
 * shut it down. finalize() from inside a handler only asks for
 * the shutdown; the thread waiting for finalize (the server's destructor,
 * or wait_for_finalize()) performs it. Engines the layer hands out
 * (request, provider and archive get_engine()) are references that never
 * finalize.
 */
#ifndef THALLIUM_ENGINE_HPP
#define THALLIUM_ENGINE_HPP

#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <margo-config.h>
#include <margo.h>

#include <thallium/bulk.hpp>
#include <thallium/bulk_mode.hpp>
#include <thallium/detail/named_objects.hpp>
#include <thallium/detail/registry.hpp>
#include <thallium/detail/rpc_dispatch.hpp>
#include <thallium/endpoint.hpp>
#include <thallium/exception.hpp>
#include <thallium/function_util.hpp>
#include <thallium/logger.hpp>
#include <thallium/pool.hpp>
#include <thallium/remote_procedure.hpp>
#include <thallium/request.hpp>

#define THALLIUM_SERVER_MODE MARGO_SERVER_MODE
#define THALLIUM_CLIENT_MODE MARGO_CLIENT_MODE

namespace thallium
{

class timed_callback;

namespace detail
{

/* A C++ callable pushed as a Margo finalize callback: runs once, then is
 * freed (or freed when popped). */
inline void
run_cpp_callback(void *arg)
{
    auto *f = static_cast<std::function<void()> *>(arg);
    try {
        (*f)();
    } catch (...) {
    }
    delete f;
}

/* Finalize now: only valid outside the instance's handlers. */
inline void
finalize_now(engine_state &s)
{
    if (s.finalized.load())
        return;
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
}

/* Whether an exception is propagating through the caller. */
inline bool
unwinding()
{
#if defined(__cpp_lib_uncaught_exceptions) &&                                  \
    __cpp_lib_uncaught_exceptions >= 201411L
    return std::uncaught_exceptions() > 0;
#else
    return std::uncaught_exception();
#endif
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
        if (server && !unwinding())
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

    /* With a JSON configuration, as margo_init_ext() takes it. */
    engine(const std::string &addr, int mode, const char *config,
           const struct hg_init_info *hg_opt = nullptr)
    {
        struct margo_init_info info = {};
        info.json_config = config;
        info.hg_init_info = const_cast<struct hg_init_info *>(hg_opt);
        init_ext(addr, mode, &info);
    }
    engine(const std::string &addr, int mode, const std::string &config,
           const struct hg_init_info *hg_opt = nullptr)
        : engine(addr, mode, config.c_str(), hg_opt)
    {
    }
    engine(const std::string &addr, int mode,
           const struct margo_init_info *info)
    {
        init_ext(addr, mode, info);
    }

    /* An engine whose handlers run on default_handler_pool (every RPC
     * defined without a pool of its own). Progress runs in the callers'
     * context when progress_pool is a pool of the calling execution
     * stream, and otherwise on an execution stream of Margo's own (not on
     * progress_pool itself: Margo does not take external pools). */
    engine(const std::string &addr, int mode, const pool &progress_pool,
           const pool &default_handler_pool)
    {
        if (progress_pool.is_null() || default_handler_pool.is_null())
            throw exception("engine: null pool", HG_INVALID_ARG);
        bool progress_here = false;
        ABT_xstream self = ABT_XSTREAM_NULL;
        if (ABT_xstream_self(&self) == ABT_SUCCESS)
            for (const pool &p : xstream(self).get_main_pools())
                progress_here = progress_here || p == progress_pool;
        margo_instance_id m = margo_init_opt(addr.c_str(), mode, nullptr,
                                             progress_here ? 0 : 1, 0);
        if (m == MARGO_INSTANCE_NULL)
            throw margo_exception("margo_init", HG_OTHER_ERROR,
                                  "could not initialize Margo on \"" + addr +
                                      "\"");
        adopt(m, mode == MARGO_SERVER_MODE);
        m_state->default_pool = default_handler_pool.native_handle();
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

    /* The same, with the handler running on pool p. */
    template <typename F>
    remote_procedure define(const std::string &name, F &&handler,
                            std::uint16_t provider_id, const pool &p)
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
            provider_id, p);
    }

    /* Register `fn` as the handler of `name` (for provider_id), running on
     * pool p (a null pool: the engine's handler pool). */
    remote_procedure define_raw(const std::string &name,
                                std::function<void(const request &)> fn,
                                std::uint16_t provider_id = 0,
                                const pool &p = pool())
    {
        margo_instance_id m = mid("define");
        hg_id_t id = detail::register_rpc(m, name, provider_id,
                                          p.is_null() ? m_state->default_pool
                                                      : p.native_handle());
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

    /* Callbacks run when the engine finalizes, last pushed first (Margo's
     * finalize callbacks: no handler runs any more, RPCs may not be sent).
     * The pre-finalize ones run at the start of the shutdown, while RPCs
     * still work. An owner (a provider) keeps a stack of its own. */
    template <typename F> void push_finalize_callback(F &&f)
    {
        push_finalize_callback(nullptr, std::forward<F>(f));
    }
    template <typename F> void push_finalize_callback(const void *owner, F &&f)
    {
        margo_provider_push_finalize_callback(
            mid("push_finalize_callback"), owner, detail::run_cpp_callback,
            new std::function<void()>(std::forward<F>(f)));
    }
    std::function<void()>
    top_finalize_callback(const void *owner = nullptr) const
    {
        return top_cb(margo_provider_top_finalize_callback, owner);
    }
    std::function<void()> pop_finalize_callback(const void *owner = nullptr)
    {
        return pop_cb(margo_provider_top_finalize_callback,
                      margo_provider_pop_finalize_callback, owner);
    }
    template <typename F> void push_prefinalize_callback(F &&f)
    {
        push_prefinalize_callback(nullptr, std::forward<F>(f));
    }
    template <typename F>
    void push_prefinalize_callback(const void *owner, F &&f)
    {
        margo_provider_push_prefinalize_callback(
            mid("push_prefinalize_callback"), owner, detail::run_cpp_callback,
            new std::function<void()>(std::forward<F>(f)));
    }
    std::function<void()>
    top_prefinalize_callback(const void *owner = nullptr) const
    {
        return top_cb(margo_provider_top_prefinalize_callback, owner);
    }
    std::function<void()> pop_prefinalize_callback(const void *owner = nullptr)
    {
        return pop_cb(margo_provider_top_prefinalize_callback,
                      margo_provider_pop_prefinalize_callback, owner);
    }

    /* Let peers shut this engine down; shut a peer down. */
    void enable_remote_shutdown()
    {
        margo_enable_remote_shutdown(mid("enable_remote_shutdown"));
    }
    void shutdown_remote_engine(const endpoint &ep) const
    {
        if (ep.is_null())
            throw exception("shutdown_remote_engine: null endpoint",
                            HG_INVALID_ARG);
        if (margo_shutdown_remote_instance(mid("shutdown_remote_engine"),
                                           ep.get_addr()) != 0)
            throw margo_exception(
                "margo_shutdown_remote_instance", HG_OTHER_ERROR,
                "refused or unreachable: " + static_cast<std::string>(ep));
    }

    /* The effective configuration, as JSON (margo_get_config()). */
    std::string get_config() const
    {
        char *c = margo_get_config(mid("get_config"));
        if (c == nullptr)
            throw margo_exception("margo_get_config", HG_OTHER_ERROR);
        std::string out(c);
        free(c);
        return out;
    }

    /* The pool where handlers of RPCs defined without a pool run, and the
     * one Margo's progress loop belongs to. */
    pool get_handler_pool() const
    {
        margo_instance_id m = mid("get_handler_pool");
        if (m_state->default_pool != ABT_POOL_NULL)
            return pool(m_state->default_pool);
        ABT_pool p = ABT_POOL_NULL;
        if (margo_get_handler_pool(m, &p) != 0)
            throw margo_exception("margo_get_handler_pool", HG_OTHER_ERROR);
        return pool(p);
    }
    pool get_progress_pool() const
    {
        ABT_pool p = ABT_POOL_NULL;
        if (margo_get_progress_pool(mid("get_progress_pool"), &p) != 0)
            throw margo_exception("margo_get_progress_pool", HG_OTHER_ERROR);
        return pool(p);
    }
    /* The pools and execution streams of the engine's configuration.
     * After finalize, as in Thallium, they still answer: from the list
     * kept when the engine finalized (detail/named_objects.hpp). */
    pool_list pools() const
    {
        return pool_list(m_state);
    }
    xstream_list xstreams() const
    {
        return xstream_list(m_state);
    }

    /* Logging through Margo's logger (defined in logger.hpp). */
    void set_logger(logger *l);
    void set_log_level(logger::level lvl);

    /* A callback run once, some time after start() (timed_callback.hpp). */
    template <typename F> timed_callback create_timed_callback(F &&cb) const;

    const std::shared_ptr<detail::engine_state> &state() const noexcept
    {
        return m_state;
    }

  private:
    void init_ext(const std::string &addr, int mode,
                  const struct margo_init_info *info)
    {
        margo_instance_id m = margo_init_ext(addr.c_str(), mode, info);
        if (m == MARGO_INSTANCE_NULL)
            throw margo_exception("margo_init_ext", HG_OTHER_ERROR,
                                  "could not initialize Margo on \"" + addr +
                                      "\"");
        adopt(m, mode == MARGO_SERVER_MODE);
    }
    using top_fn = int (*)(margo_instance_id, const void *,
                           margo_finalize_callback_t *, void **);
    using pop_fn = int (*)(margo_instance_id, const void *);
    std::function<void()> top_cb(top_fn top, const void *owner) const
    {
        margo_finalize_callback_t cb = nullptr;
        void *arg = nullptr;
        if (top(mid("top_finalize_callback"), owner, &cb, &arg) == 0)
            return std::function<void()>();
        if (cb == detail::run_cpp_callback)
            return *static_cast<std::function<void()> *>(arg);
        return [cb, arg]() { cb(arg); };
    }
    std::function<void()> pop_cb(top_fn top, pop_fn pop, const void *owner)
    {
        margo_instance_id m = mid("pop_finalize_callback");
        margo_finalize_callback_t cb = nullptr;
        void *arg = nullptr;
        if (top(m, owner, &cb, &arg) == 0)
            return std::function<void()>();
        pop(m, owner);
        if (cb == detail::run_cpp_callback) {
            auto *f = static_cast<std::function<void()> *>(arg);
            std::function<void()> out = std::move(*f);
            delete f;
            return out;
        }
        return [cb, arg]() { cb(arg); };
    }
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
