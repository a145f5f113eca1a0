/* Serialization of std::array: cereal's support, over the layer's archives. */
#ifndef THALLIUM_SERIALIZATION_STL_ARRAY_HPP
#define THALLIUM_SERIALIZATION_STL_ARRAY_HPP
#include <thallium/serialization/archives.hpp>
#include <cereal/types/array.hpp>
#endif
