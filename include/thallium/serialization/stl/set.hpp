/* Serialization of std::set: cereal's support, over the layer's archives. */
#ifndef THALLIUM_SERIALIZATION_STL_SET_HPP
#define THALLIUM_SERIALIZATION_STL_SET_HPP
#include <thallium/serialization/archives.hpp>
#include <cereal/types/set.hpp>
#endif
