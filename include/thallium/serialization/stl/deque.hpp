/* Serialization of std::deque: cereal's support, over the layer's archives. */
#ifndef THALLIUM_SERIALIZATION_STL_DEQUE_HPP
#define THALLIUM_SERIALIZATION_STL_DEQUE_HPP
#include <thallium/serialization/archives.hpp>
#include <cereal/types/deque.hpp>
#endif
