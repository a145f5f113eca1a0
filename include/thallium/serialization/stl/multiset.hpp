/* Serialization of std::multiset: cereal's support, over the layer's archives.
 */
#ifndef THALLIUM_SERIALIZATION_STL_MULTISET_HPP
#define THALLIUM_SERIALIZATION_STL_MULTISET_HPP
#include <thallium/serialization/archives.hpp>
#include <cereal/types/set.hpp>
#endif
