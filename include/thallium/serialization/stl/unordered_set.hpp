/* Serialization of std::unordered_set: cereal's support, over the layer's
 * archives. */
#ifndef THALLIUM_SERIALIZATION_STL_UNORDERED_SET_HPP
#define THALLIUM_SERIALIZATION_STL_UNORDERED_SET_HPP
#include <thallium/serialization/archives.hpp>
#include <cereal/types/unordered_set.hpp>
#endif
