/* Serialization of std::variant: cereal's support, over the layer's archives.
 */
#ifndef THALLIUM_SERIALIZATION_STL_VARIANT_HPP
#define THALLIUM_SERIALIZATION_STL_VARIANT_HPP
#include <thallium/serialization/archives.hpp>
#include <cereal/types/variant.hpp>
#endif
