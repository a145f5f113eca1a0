/*
 * tl::unwrap_decay_t<T>: std::decay_t<T>, except that a
 * std::reference_wrapper<U> becomes U& (the rule std::make_tuple follows),
 * for code that stores arguments and wants std::ref to stay a reference.
 */
#ifndef THALLIUM_REFERENCE_UTIL_HPP
#define THALLIUM_REFERENCE_UTIL_HPP

#include <functional>
#include <type_traits>

namespace thallium
{

template <class T> struct unwrap_refwrapper {
    using type = T;
};
template <class U> struct unwrap_refwrapper<std::reference_wrapper<U>> {
    using type = U &;
};
template <class T>
using unwrap_decay_t =
    typename unwrap_refwrapper<typename std::decay<T>::type>::type;

} // namespace thallium

#endif
