/* Serialization of std::list: cereal's support, over the layer's archives. */
#ifndef THALLIUM_SERIALIZATION_STL_LIST_HPP
#define THALLIUM_SERIALIZATION_STL_LIST_HPP
#include <thallium/serialization/archives.hpp>
#include <cereal/types/list.hpp>
#endif
