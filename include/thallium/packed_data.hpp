/*
 * tl::packed_data: the still-encoded arguments of a request or values of a
 * response. as<T>() (or a conversion to T) decodes one value, as<T1, T2,
 * ...>() a std::tuple of them; decoding errors throw tl::exception.
 */
#ifndef THALLIUM_PACKED_DATA_HPP
#define THALLIUM_PACKED_DATA_HPP

#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include <thallium/detail/handle_ref.hpp>
#include <thallium/proc_object.hpp>

namespace thallium
{

template <typename... CtxArg> class packed_data
{
  public:
    packed_data() = default;
    packed_data(std::shared_ptr<detail::handle_ref> ref, bool is_input)
        : m_ref(std::move(ref)), m_is_input(is_input)
    {
    }
    packed_data(std::shared_ptr<detail::handle_ref> ref, bool is_input,
                const std::tuple<CtxArg...> &ctx)
        : m_ref(std::move(ref)), m_is_input(is_input), m_context(ctx)
    {
    }

    /* The same data, decoded with a serialization context (what the
     * archives' get_context() returns: std::ref(x) stays a reference). */
    template <typename... A>
    packed_data<detail::context_type_t<A>...>
    with_serialization_context(A &&...args) const
    {
        return packed_data<detail::context_type_t<A>...>(
            m_ref, m_is_input,
            std::tuple<detail::context_type_t<A>...>(std::forward<A>(args)...));
    }

    /* Whether there is anything to decode (false for one-way RPCs). */
    bool valid() const noexcept
    {
        return m_ref != nullptr;
    }

    template <typename T> T as() const
    {
        using V = typename std::decay<T>::type;
        detail::input_proc_ctx<std::tuple<CtxArg...>, V> p(mid(), m_context);
        decode(p);
        return std::move(std::get<0>(p.values()));
    }
    template <typename T1, typename T2, typename... Tn>
    std::tuple<typename std::decay<T1>::type, typename std::decay<T2>::type,
               typename std::decay<Tn>::type...>
    as() const
    {
        detail::input_proc_ctx<
            std::tuple<CtxArg...>, typename std::decay<T1>::type,
            typename std::decay<T2>::type, typename std::decay<Tn>::type...>
            p(mid(), m_context);
        decode(p);
        return std::move(p.values());
    }
    template <typename T> operator T() const
    {
        return as<T>();
    }

    /* Decode into existing variables. */
    template <typename... T> void unpack(T &...x) const
    {
        detail::input_proc_ctx<std::tuple<CtxArg...>, T...> p(mid(), m_context);
        decode(p);
        std::tie(x...) = std::move(p.values());
    }

  private:
    margo_instance_id mid() const
    {
        if (!m_ref)
            throw exception("no data to decode (one-way RPC, or a response "
                            "that was never received)",
                            HG_INVALID_ARG);
        return m_ref->state->checked_mid("packed_data");
    }
    void decode(detail::proc_object &p) const
    {
        hg_handle_t h = m_ref->handle;
        hg_return_t ret =
            m_is_input ? margo_get_input(h, &p) : margo_get_output(h, &p);
        p.rethrow();
        MARGO_ASSERT(ret, margo_get_output);
        if (m_is_input)
            margo_free_input(h, &p);
        else
            margo_free_output(h, &p);
    }

    std::shared_ptr<detail::handle_ref> m_ref;
    bool m_is_input = false;
    /* Archives get a non-const reference to it. */
    mutable std::tuple<CtxArg...> m_context;
};

} // namespace thallium

#endif
