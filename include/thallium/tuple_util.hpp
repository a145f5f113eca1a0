/*
 * tl::apply_function_to_tuple(f, t): calls f with the elements of the
 * tuple t as its arguments (lvalues of t's elements) and returns what f
 * returns; f is a std::function or a plain function pointer. C++14's
 * index sequences do the unpacking.
 */
#ifndef THALLIUM_TUPLE_UTIL_HPP
#define THALLIUM_TUPLE_UTIL_HPP

#include <cstddef>
#include <functional>
#include <tuple>
#include <utility>

namespace thallium
{

namespace detail
{
template <typename R, typename F, typename Tuple, std::size_t... I>
R
apply_tuple(const F &f, Tuple &t, std::index_sequence<I...>)
{
    return f(std::get<I>(t)...);
}
} // namespace detail

template <typename R, typename... ArgsF, typename... ArgsT>
R
apply_function_to_tuple(const std::function<R(ArgsF...)> &f,
                        std::tuple<ArgsT...> &t)
{
    return detail::apply_tuple<R>(f, t, std::index_sequence_for<ArgsT...>{});
}

template <typename R, typename... ArgsF, typename... ArgsT>
R
apply_function_to_tuple(R (*f)(ArgsF...), std::tuple<ArgsT...> &t)
{
    return detail::apply_tuple<R>(f, t, std::index_sequence_for<ArgsT...>{});
}

} // namespace thallium

#endif
