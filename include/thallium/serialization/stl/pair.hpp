/* Serialization of std::pair: cereal's support, over the layer's archives. */
#ifndef THALLIUM_SERIALIZATION_STL_PAIR_HPP
#define THALLIUM_SERIALIZATION_STL_PAIR_HPP
#include <thallium/serialization/archives.hpp>
#include <cereal/types/utility.hpp>
#endif
