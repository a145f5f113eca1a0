/* Serialization of std::string: cereal's support, over the layer's archives. */
#ifndef THALLIUM_SERIALIZATION_STL_STRING_HPP
#define THALLIUM_SERIALIZATION_STL_STRING_HPP
#include <thallium/serialization/archives.hpp>
#include <cereal/types/string.hpp>
#endif
