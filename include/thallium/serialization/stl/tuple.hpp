/* Serialization of std::tuple: cereal's support, over the layer's archives. */
#ifndef THALLIUM_SERIALIZATION_STL_TUPLE_HPP
#define THALLIUM_SERIALIZATION_STL_TUPLE_HPP
#include <thallium/serialization/archives.hpp>
#include <cereal/types/tuple.hpp>
#endif
