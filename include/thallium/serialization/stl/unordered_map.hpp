/* Serialization of std::unordered_map: cereal's support, over the layer's
 * archives. */
#ifndef THALLIUM_SERIALIZATION_STL_UNORDERED_MAP_HPP
#define THALLIUM_SERIALIZATION_STL_UNORDERED_MAP_HPP
#include <thallium/serialization/archives.hpp>
#include <cereal/types/unordered_map.hpp>
#endif
