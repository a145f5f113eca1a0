/*
 * The glue between C++ values and HG's proc callbacks. Every RPC of the
 * layer is registered with detail::proc_object_cb as both its input and
 * output proc; the in_struct / out_struct HG passes to it is a
 * detail::proc_object, whose process() runs the archives. An exception
 * thrown while encoding or decoding is caught there (it must not unwind
 * through C), kept in the object, and rethrown by the C++ caller once the
 * Margo call has returned.
 */
#ifndef THALLIUM_PROC_OBJECT_HPP
#define THALLIUM_PROC_OBJECT_HPP

#include <exception>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include <margo.h>

#include <thallium/exception.hpp>
#include <thallium/serialization/archives.hpp>

namespace thallium
{
namespace detail
{

/* std::index_sequence is C++14; this keeps the layer in one place. */
template <typename F, typename Tuple, std::size_t... I>
inline void
apply_impl(F &&f, Tuple &&t, std::index_sequence<I...>)
{
    std::forward<F>(f)(std::get<I>(std::forward<Tuple>(t))...);
}
template <typename F, typename Tuple>
inline void
apply(F &&f, Tuple &&t)
{
    apply_impl(std::forward<F>(f), std::forward<Tuple>(t),
               std::make_index_sequence<
                   std::tuple_size<typename std::decay<Tuple>::type>::value>{});
}

class proc_object
{
  public:
    explicit proc_object(margo_instance_id mid) : m_mid(mid)
    {
    }
    virtual ~proc_object() = default;

    hg_return_t process(hg_proc_t proc) noexcept
    {
        try {
            run(proc);
            return HG_SUCCESS;
        } catch (const exception &e) {
            m_error = std::current_exception();
            return e.code() == HG_SUCCESS ? HG_OTHER_ERROR : e.code();
        } catch (...) {
            m_error = std::current_exception();
            return hg_proc_get_op(proc) == HG_DECODE ? HG_PROTOCOL_ERROR
                                                     : HG_OTHER_ERROR;
        }
    }
    /* Rethrow what process() caught, if anything. */
    void rethrow() const
    {
        if (m_error)
            std::rethrow_exception(m_error);
    }

  protected:
    virtual void run(hg_proc_t proc) = 0;
    margo_instance_id m_mid;

  private:
    std::exception_ptr m_error;
};

inline hg_return_t
proc_object_cb(hg_proc_t proc, void *data)
{
    if (data == nullptr || hg_proc_get_op(proc) == HG_FREE)
        return HG_SUCCESS;
    return static_cast<proc_object *>(data)->process(proc);
}

/* A serialization context as given to with_serialization_context():
 * std::ref(x) is kept as a reference, anything else as a copy. */
template <typename T> struct context_type {
    using type = T;
};
template <typename T> struct context_type<std::reference_wrapper<T>> {
    using type = T &;
};
template <typename T>
using context_type_t =
    typename context_type<typename std::decay<T>::type>::type;

inline std::tuple<> &
no_context()
{
    static std::tuple<> empty;
    return empty;
}

/* Encodes values held by reference (arguments of a call, values of a
 * respond), with the archive's context `Ctx` (a std::tuple). */
template <typename Ctx, typename... T> class output_proc_ctx;
template <typename... C, typename... T>
class output_proc_ctx<std::tuple<C...>, T...> : public proc_object
{
  public:
    output_proc_ctx(margo_instance_id mid, std::tuple<C...> &ctx,
                    const T &...values)
        : proc_object(mid), m_ctx(ctx), m_values(values...)
    {
    }

  protected:
    void run(hg_proc_t proc) override
    {
        proc_output_archive<C...> ar(proc, m_ctx, m_mid);
        detail::apply([&ar](const T &...v) { serialize_all(ar, v...); },
                      m_values);
    }

  private:
    static void serialize_all(proc_output_archive<C...> &)
    {
    }
    template <typename U, typename... R>
    static void serialize_all(proc_output_archive<C...> &ar, const U &u,
                              const R &...r)
    {
        ar(u);
        serialize_all(ar, r...);
    }
    std::tuple<C...> &m_ctx;
    std::tuple<const T &...> m_values;
};

template <typename... T>
class output_proc : public output_proc_ctx<std::tuple<>, T...>
{
  public:
    output_proc(margo_instance_id mid, const T &...values)
        : output_proc_ctx<std::tuple<>, T...>(mid, no_context(), values...)
    {
    }
};

/* Decodes into values it owns, with the archive's context `Ctx`. */
template <typename Ctx, typename... T> class input_proc_ctx;
template <typename... C, typename... T>
class input_proc_ctx<std::tuple<C...>, T...> : public proc_object
{
  public:
    input_proc_ctx(margo_instance_id mid, std::tuple<C...> &ctx)
        : proc_object(mid), m_ctx(ctx)
    {
    }
    std::tuple<T...> &values()
    {
        return m_values;
    }

  protected:
    void run(hg_proc_t proc) override
    {
        proc_input_archive<C...> ar(proc, m_ctx, m_mid);
        detail::apply([&ar](T &...v) { load_all(ar, v...); }, m_values);
    }

  private:
    static void load_all(proc_input_archive<C...> &)
    {
    }
    template <typename U, typename... R>
    static void load_all(proc_input_archive<C...> &ar, U &u, R &...r)
    {
        ar(u);
        load_all(ar, r...);
    }
    std::tuple<C...> &m_ctx;
    std::tuple<T...> m_values;
};

template <typename... T>
class input_proc : public input_proc_ctx<std::tuple<>, T...>
{
  public:
    explicit input_proc(margo_instance_id mid)
        : input_proc_ctx<std::tuple<>, T...>(mid, no_context())
    {
    }
};

} // namespace detail
} // namespace thallium

#endif
