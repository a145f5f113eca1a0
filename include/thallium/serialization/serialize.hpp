/* Serialization entry point: cereal's core and the layer's archives. */
#ifndef THALLIUM_SERIALIZATION_SERIALIZE_HPP
#define THALLIUM_SERIALIZATION_SERIALIZE_HPP
#include <thallium/serialization/archives.hpp>
#endif
