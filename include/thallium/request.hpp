/*
 * tl::request: what a handler receives first. It answers the origin
 * (respond(values...)), says who sent it (get_endpoint()) and gives the
 * raw arguments (get_input()). Copies share the request; the handle is
 * released when the last copy goes, so a handler may keep a copy and
 * respond later.
 */
#ifndef THALLIUM_REQUEST_HPP
#define THALLIUM_REQUEST_HPP

#include <cstdint>
#include <memory>
#include <tuple>
#include <utility>

#include <thallium/detail/handle_ref.hpp>
#include <thallium/detail/provider_id.hpp>
#include <thallium/endpoint.hpp>
#include <thallium/packed_data.hpp>
#include <thallium/proc_object.hpp>

namespace thallium
{

template <typename... CtxArg> class request_with_context
{
  public:
    request_with_context() = default;
    explicit request_with_context(std::shared_ptr<detail::handle_ref> ref)
        : m_ref(std::move(ref))
    {
    }
    request_with_context(std::shared_ptr<detail::handle_ref> ref,
                         const std::tuple<CtxArg...> &ctx)
        : m_ref(std::move(ref)), m_context(ctx)
    {
    }

    /* The same request, with a serialization context for its input and
     * its response (std::ref(x) stays a reference). */
    template <typename... A>
    request_with_context<detail::context_type_t<A>...>
    with_serialization_context(A &&...args) const
    {
        return request_with_context<detail::context_type_t<A>...>(
            m_ref,
            std::tuple<detail::context_type_t<A>...>(std::forward<A>(args)...));
    }

    /* Send the response: the values are encoded as the origin's
     * operator() result. Throws when the RPC is one-way or already
     * answered, or when the response could not be sent. */
    template <typename... T> void respond(const T &...values) const
    {
        margo_instance_id mid = check_respond();
        detail::output_proc_ctx<std::tuple<CtxArg...>, T...> out(mid, m_context,
                                                                 values...);
        hg_return_t ret = margo_respond(m_ref->handle, &out);
        out.rethrow();
        MARGO_ASSERT(ret, margo_respond);
    }

    endpoint get_endpoint() const
    {
        const struct hg_info *info = margo_get_info(handle());
        if (info == nullptr)
            throw exception("request has no handle", HG_INVALID_ARG);
        return endpoint(m_ref->state, info->addr, false);
    }

    packed_data<CtxArg...> get_input() const
    {
        return packed_data<CtxArg...>(m_ref, true, m_context);
    }

    /* The provider the request was sent to (0 for plain RPCs). */
    std::uint16_t get_provider_id() const
    {
        const struct hg_info *info = margo_get_info(handle());
        return info == nullptr ? 0 : detail::provider_id_of(info->id);
    }

    hg_handle_t native_handle() const noexcept
    {
        return m_ref ? m_ref->handle : HG_HANDLE_NULL;
    }
    bool is_null() const noexcept
    {
        return m_ref == nullptr;
    }
    margo_instance_id get_margo_instance() const
    {
        handle();
        return m_ref->state->checked_mid("request");
    }

  private:
    hg_handle_t handle() const
    {
        if (!m_ref)
            throw exception("null request", HG_INVALID_ARG);
        return m_ref->handle;
    }
    margo_instance_id check_respond() const
    {
        handle();
        margo_instance_id mid = m_ref->state->checked_mid("respond");
        if (m_ref->disabled_response)
            throw exception("respond() on an RPC defined with "
                            "disable_response()",
                            HG_OPNOTSUPPORTED);
        if (m_ref->responded.exchange(true))
            throw exception("request already answered", HG_BUSY);
        return mid;
    }

    std::shared_ptr<detail::handle_ref> m_ref;
    mutable std::tuple<CtxArg...> m_context;
};

using request = request_with_context<>;

/* Responds with `data` when it goes out of scope, whatever path the
 * handler leaves by (the value it refers to at that moment is sent). */
template <typename T> class auto_respond
{
  public:
    auto_respond(const request &req, T &data) : m_req(req), m_data(data)
    {
    }
    auto_respond(const auto_respond &) = delete;
    auto_respond(auto_respond &&) = delete;
    auto_respond &operator=(const auto_respond &) = delete;
    auto_respond &operator=(auto_respond &&) = delete;
    /* A destructor must not throw: a failed respond is dropped (the
     * origin then sees the RPC fail or time out). */
    ~auto_respond()
    {
        try {
            m_req.respond(m_data);
        } catch (...) {
        }
    }

  private:
    const request &m_req;
    T &m_data;
};

} // namespace thallium

#endif
