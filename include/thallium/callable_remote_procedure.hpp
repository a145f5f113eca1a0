/*
 * tl::callable_remote_procedure: a remote procedure bound to a target
 * (remote_procedure::on(endpoint) or on(provider_handle)).
 *
 *     int r = sum.on(ep)(3, 4);                   blocking call
 *     auto t = f.on(ep)(x).as<int, std::string>();
 *     tl::async_response a = sum.on(ep).async(3, 4);   ...  a.wait()
 *     sum.on(ep).timed(std::chrono::milliseconds(50), 3, 4);  tl::timeout
 *
 * Each call creates its own HG handle, so a callable may be called again
 * while the response of an earlier call is still held.
 */
#ifndef THALLIUM_CALLABLE_REMOTE_PROCEDURE_HPP
#define THALLIUM_CALLABLE_REMOTE_PROCEDURE_HPP

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include <thallium/async_response.hpp>
#include <thallium/detail/handle_ref.hpp>
#include <thallium/detail/provider_id.hpp>
#include <thallium/endpoint.hpp>
#include <thallium/packed_data.hpp>
#include <thallium/proc_object.hpp>

namespace thallium
{

template <typename... CtxArg> class callable_remote_procedure_with_context
{
  public:
    callable_remote_procedure_with_context(const endpoint &ep,
                                           const std::string &name,
                                           std::uint16_t provider_id,
                                           bool ignore_response)
        : m_endpoint(ep), m_name(name), m_provider_id(provider_id),
          m_ignore_response(ignore_response)
    {
    }
    callable_remote_procedure_with_context(const endpoint &ep,
                                           const std::string &name,
                                           std::uint16_t provider_id,
                                           bool ignore_response,
                                           const std::tuple<CtxArg...> &ctx)
        : m_endpoint(ep), m_name(name), m_provider_id(provider_id),
          m_ignore_response(ignore_response), m_context(ctx)
    {
    }

    /* The same call with a serialization context for its arguments and
     * its response (std::ref(x) stays a reference). */
    template <typename... A>
    callable_remote_procedure_with_context<detail::context_type_t<A>...>
    with_serialization_context(A &&...args) const
    {
        return callable_remote_procedure_with_context<
            detail::context_type_t<A>...>(
            m_endpoint, m_name, m_provider_id, m_ignore_response,
            std::tuple<detail::context_type_t<A>...>(std::forward<A>(args)...));
    }

    template <typename... T>
    packed_data<CtxArg...> operator()(const T &...args) const
    {
        auto ref = create();
        detail::output_proc_ctx<std::tuple<CtxArg...>, T...> in(
            ref->state->mid, m_context, args...);
        hg_return_t ret = forward(ref->handle, &in, 0.0);
        in.rethrow();
        MARGO_ASSERT(ret, margo_forward);
        if (m_ignore_response)
            return packed_data<CtxArg...>(nullptr, false, m_context);
        return packed_data<CtxArg...>(ref, false, m_context);
    }

    template <typename R, typename P, typename... T>
    packed_data<CtxArg...> timed(const std::chrono::duration<R, P> &timeout,
                                 const T &...args) const
    {
        auto ref = create();
        detail::output_proc_ctx<std::tuple<CtxArg...>, T...> in(
            ref->state->mid, m_context, args...);
        double ms = std::chrono::duration_cast<
                        std::chrono::duration<double, std::milli>>(timeout)
                        .count();
        /* 0 would mean "no deadline" to Margo. */
        hg_return_t ret = forward(ref->handle, &in, ms > 0 ? ms : 1e-6);
        in.rethrow();
        MARGO_ASSERT(ret, margo_forward_timed);
        if (m_ignore_response)
            return packed_data<CtxArg...>(nullptr, false, m_context);
        return packed_data<CtxArg...>(ref, false, m_context);
    }

    template <typename... T> async_response async(const T &...args) const
    {
        auto ref = create();
        detail::output_proc_ctx<std::tuple<CtxArg...>, T...> in(
            ref->state->mid, m_context, args...);
        margo_request req = MARGO_REQUEST_NULL;
        hg_return_t ret = iforward(ref->handle, &in, &req);
        in.rethrow();
        MARGO_ASSERT(ret, margo_iforward);
        return async_response(req, ref);
    }

    template <typename R, typename P, typename... T>
    async_response timed_async(const std::chrono::duration<R, P> &timeout,
                               const T &...args) const
    {
        auto ref = create();
        detail::output_proc_ctx<std::tuple<CtxArg...>, T...> in(
            ref->state->mid, m_context, args...);
        margo_request req = MARGO_REQUEST_NULL;
        double ms = std::chrono::duration_cast<
                        std::chrono::duration<double, std::milli>>(timeout)
                        .count();
        hg_return_t ret = margo_provider_iforward_timed(
            m_provider_id, ref->handle, &in, ms > 0 ? ms : 1e-6, &req);
        in.rethrow();
        MARGO_ASSERT(ret, margo_iforward_timed);
        return async_response(req, ref);
    }

    const endpoint &get_endpoint() const noexcept
    {
        return m_endpoint;
    }
    std::uint16_t get_provider_id() const noexcept
    {
        return m_provider_id;
    }

  private:
    std::shared_ptr<detail::handle_ref> create() const
    {
        if (m_endpoint.is_null())
            throw exception("RPC on a null endpoint", HG_INVALID_ARG);
        const auto &state = m_endpoint.state();
        margo_instance_id mid = state->checked_mid("RPC");
        hg_handle_t h = HG_HANDLE_NULL;
        hg_id_t id = detail::origin_rpc_id(mid, m_name, m_provider_id,
                                           m_ignore_response);
        hg_return_t ret = margo_create(mid, m_endpoint.get_addr(), id, &h);
        MARGO_ASSERT(ret, margo_create);
        return std::make_shared<detail::handle_ref>(h, state,
                                                    m_ignore_response);
    }
    hg_return_t forward(hg_handle_t h, void *in, double timeout_ms) const
    {
        return timeout_ms > 0 ? margo_provider_forward_timed(m_provider_id, h,
                                                             in, timeout_ms)
                              : margo_provider_forward(m_provider_id, h, in);
    }
    hg_return_t iforward(hg_handle_t h, void *in, margo_request *req) const
    {
        return margo_provider_iforward(m_provider_id, h, in, req);
    }

    endpoint m_endpoint;
    std::string m_name;
    std::uint16_t m_provider_id;
    bool m_ignore_response;
    mutable std::tuple<CtxArg...> m_context;
};

using callable_remote_procedure = callable_remote_procedure_with_context<>;

} // namespace thallium

#endif
