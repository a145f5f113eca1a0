/* Serialization of std::optional: cereal's support, over the layer's archives.
 */
#ifndef THALLIUM_SERIALIZATION_STL_OPTIONAL_HPP
#define THALLIUM_SERIALIZATION_STL_OPTIONAL_HPP
#include <thallium/serialization/archives.hpp>
#include <cereal/types/optional.hpp>
#endif
