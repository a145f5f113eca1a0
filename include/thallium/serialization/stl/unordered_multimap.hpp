/* Serialization of std::unordered_multimap: cereal's support, over the layer's
 * archives. */
#ifndef THALLIUM_SERIALIZATION_STL_UNORDERED_MULTIMAP_HPP
#define THALLIUM_SERIALIZATION_STL_UNORDERED_MULTIMAP_HPP
#include <thallium/serialization/archives.hpp>
#include <cereal/types/unordered_map.hpp>
#endif
