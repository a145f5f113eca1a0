/* Serialization of std::vector: cereal's support, over the layer's archives. */
#ifndef THALLIUM_SERIALIZATION_STL_VECTOR_HPP
#define THALLIUM_SERIALIZATION_STL_VECTOR_HPP
#include <thallium/serialization/archives.hpp>
#include <cereal/types/vector.hpp>
#endif
