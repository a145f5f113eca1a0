/* Serialization of std::multimap: cereal's support, over the layer's archives.
 */
#ifndef THALLIUM_SERIALIZATION_STL_MULTIMAP_HPP
#define THALLIUM_SERIALIZATION_STL_MULTIMAP_HPP
#include <thallium/serialization/archives.hpp>
#include <cereal/types/map.hpp>
#endif
