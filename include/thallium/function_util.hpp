/*
 * Signature deduction for handlers: engine::define() accepts free
 * functions, std::function and lambdas taking (const tl::request&, args...)
 * and needs the argument types to decode.
 */
#ifndef THALLIUM_FUNCTION_UTIL_HPP
#define THALLIUM_FUNCTION_UTIL_HPP

#include <functional>
#include <type_traits>

namespace thallium
{
namespace detail
{

template <typename F>
struct function_traits
    : function_traits<decltype(&std::decay<F>::type::operator())> {
};

template <typename R, typename... A> struct function_traits<R(A...)> {
    using result_type = R;
    using args = std::tuple<A...>;
    static constexpr std::size_t arity = sizeof...(A);
};
template <typename R, typename... A>
struct function_traits<R (*)(A...)> : function_traits<R(A...)> {
};
template <typename R, typename... A>
struct function_traits<R (&)(A...)> : function_traits<R(A...)> {
};
template <typename C, typename R, typename... A>
struct function_traits<R (C::*)(A...)> : function_traits<R(A...)> {
};
template <typename C, typename R, typename... A>
struct function_traits<R (C::*)(A...) const> : function_traits<R(A...)> {
};
template <typename R, typename... A>
struct function_traits<std::function<R(A...)>> : function_traits<R(A...)> {
};

template <typename T> struct decayed_tuple;
template <typename... A> struct decayed_tuple<std::tuple<A...>> {
    using type = std::tuple<typename std::decay<A>::type...>;
};

/* The argument types after the leading request, decayed. */
template <typename Tuple> struct tail_args;
template <typename First, typename... Rest>
struct tail_args<std::tuple<First, Rest...>> {
    using first = First;
    using type = std::tuple<typename std::decay<Rest>::type...>;
};
template <> struct tail_args<std::tuple<>> {
    using first = void;
    using type = std::tuple<>;
};

} // namespace detail
} // namespace thallium

#endif
