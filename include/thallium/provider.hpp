/*
 * tl::provider<T>: the base of a CRTP provider class.
 *
 *     class kv : public tl::provider<kv> {
 *         int get(const std::string &key) { ... }            // answered
 *         void put(const tl::request &r, std::string k, int v) { r.respond(); }
 *       public:
 *         kv(tl::engine &e, uint16_t id) : tl::provider<kv>(e, id) {
 *             define("kv_get", &kv::get);
 *             define("kv_put", &kv::put);
 *         }
 *     };
 *
 * define() registers a member function for this provider id. A method
 * without a request parameter has its return value sent as the response;
 * one that returns void and takes no request is one-way (its RPC is
 * defined with disable_response()). A method taking `const tl::request&`
 * first answers through it (its return value is ignored). Passing
 * tl::ignore_return_value() never sends the return value. The provider's
 * RPCs are deregistered when it is destroyed.
 */
#ifndef THALLIUM_PROVIDER_HPP
#define THALLIUM_PROVIDER_HPP

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <thallium/engine.hpp>
#include <thallium/function_util.hpp>

namespace thallium
{

typedef std::integral_constant<bool, true> ignore_return_value;

namespace detail
{

template <typename A> struct is_request_arg {
    static constexpr bool value =
        std::is_same<typename std::decay<A>::type, request>::value;
};

/* Sends what a method returned (or nothing for void). */
template <typename R> struct respond_result {
    template <typename G> void operator()(const request &req, G &&g) const
    {
        R r = g();
        req.respond(r);
    }
};
template <> struct respond_result<void> {
    template <typename G> void operator()(const request &, G &&g) const
    {
        g();
    }
};

} // namespace detail

template <typename T> class provider
{
  public:
    /* With an identity (a string naming the provider's type, which
     * clients read with provider_handle::get_identity()); a provider id
     * that already has one throws (HG_EXIST). */
    provider(const engine &e, std::uint16_t provider_id,
             const char *identity = nullptr)
        : m_engine(engine::reference(e.state())), m_provider_id(provider_id)
    {
        set_identity(identity);
    }
    provider(margo_instance_id mid, std::uint16_t provider_id,
             const char *identity = nullptr)
        : m_engine(mid), m_provider_id(provider_id)
    {
        set_identity(identity);
    }
    provider(const provider &) = delete;
    provider &operator=(const provider &) = delete;
    virtual ~provider()
    {
        /* Handlers point at this object: none may run once it is gone. */
        if (!m_engine)
            return;
        if (m_has_identity)
            margo_provider_deregister_identity(m_engine.get_margo_instance(),
                                               m_provider_id);
        for (auto &rp : m_rpcs) {
            try {
                rp.deregister();
            } catch (const exception &) {
            }
        }
    }

    std::uint16_t get_provider_id() const noexcept
    {
        return m_provider_id;
    }
    /* The identity registered for this provider id ("" if none). */
    const char *identity() const
    {
        const char *id = margo_provider_registered_identity(
            m_engine.get_margo_instance(), m_provider_id);
        return id ? id : "";
    }
    /* The engine this provider is registered with, by value (an engine
     * is a reference to shared state), public as in Thallium: services
     * call provider->get_engine().push_finalize_callback(...). */
    engine get_engine() const noexcept
    {
        return m_engine;
    }

  protected:
    /* define(name, &T::method[, pool][, tl::ignore_return_value()]): the
     * handler runs on pool p (default: the engine's handler pool). */
    template <typename R, typename... A>
    remote_procedure define(const std::string &name, R (T::*method)(A...),
                            const pool &p = pool())
    {
        return define_method<R, A...>(name, method, false, p);
    }
    template <typename R, typename... A>
    remote_procedure define(const std::string &name, R (T::*method)(A...) const,
                            const pool &p = pool())
    {
        return define_method<R, A...>(name, method, false, p);
    }
    template <typename R, typename... A>
    remote_procedure define(const std::string &name, R (T::*method)(A...),
                            const ignore_return_value &)
    {
        return define_method<R, A...>(name, method, true, pool());
    }
    template <typename R, typename... A>
    remote_procedure define(const std::string &name, R (T::*method)(A...) const,
                            const ignore_return_value &)
    {
        return define_method<R, A...>(name, method, true, pool());
    }
    template <typename R, typename... A>
    remote_procedure define(const std::string &name, R (T::*method)(A...),
                            const pool &p, const ignore_return_value &)
    {
        return define_method<R, A...>(name, method, true, p);
    }
    template <typename R, typename... A>
    remote_procedure define(const std::string &name, R (T::*method)(A...) const,
                            const pool &p, const ignore_return_value &)
    {
        return define_method<R, A...>(name, method, true, p);
    }

  private:
    template <typename R, typename... A, typename M>
    remote_procedure define_method(const std::string &name, M method,
                                   bool ignore, const pool &p)
    {
        T *self = static_cast<T *>(this);
        return define_dispatch<R>(
            name, self, method, ignore, std::integral_constant < bool,
            (sizeof...(A) > 0) &&
                detail::is_request_arg<typename std::tuple_element<
                        0, std::tuple<A..., void>>::type>::value > {},
            (std::tuple<A...> *) nullptr, p);
    }

    /* Methods taking the request first: they answer themselves. */
    template <typename R, typename M, typename Req, typename... A>
    remote_procedure define_dispatch(const std::string &name, T *self, M method,
                                     bool, std::true_type,
                                     std::tuple<Req, A...> *, const pool &p)
    {
        auto fn = [self, method](const request &req, A... args) {
            (self->*method)(req, std::forward<A>(args)...);
        };
        return remember(m_engine.define_raw(
            name,
            [fn](const request &req) mutable {
                detail::invoke_with_input<std::tuple<typename std::decay<
                    A>::type...>>::call(fn, req, detail::discard_result{});
            },
            m_provider_id, p));
    }

    /* Methods without the request: the return value is the response, and
     * void methods are one-way. */
    template <typename R, typename M, typename... A>
    remote_procedure define_dispatch(const std::string &name, T *self, M method,
                                     bool ignore, std::false_type,
                                     std::tuple<A...> *, const pool &p)
    {
        auto fn = [self, method](const request &, A... args) {
            return (self->*method)(std::forward<A>(args)...);
        };
        using args = std::tuple<typename std::decay<A>::type...>;
        remote_procedure rp =
            ignore ? m_engine.define_raw(
                         name,
                         [fn](const request &req) mutable {
                             detail::invoke_with_input<args>::call(
                                 fn, req, detail::discard_result{});
                         },
                         m_provider_id, p)
                   : m_engine.define_raw(
                         name,
                         [fn](const request &req) mutable {
                             detail::invoke_with_input<args>::call(
                                 fn, req, detail::respond_result<R>{});
                         },
                         m_provider_id, p);
        if (std::is_void<R>::value)
            rp.disable_response();
        return remember(rp);
    }

    void set_identity(const char *identity)
    {
        if (identity == nullptr)
            return;
        hg_return_t ret = margo_provider_register_identity(
            m_engine.get_margo_instance(), m_provider_id, identity);
        MARGO_ASSERT(ret, margo_provider_register_identity);
        m_has_identity = true;
    }

    remote_procedure remember(const remote_procedure &rp)
    {
        m_rpcs.push_back(rp);
        return rp;
    }

    engine m_engine;
    std::uint16_t m_provider_id;
    bool m_has_identity = false;
    std::vector<remote_procedure> m_rpcs;
};

} // namespace thallium

#endif
