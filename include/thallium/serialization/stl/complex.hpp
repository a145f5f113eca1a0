/* Serialization of std::complex: cereal's support, over the layer's archives.
 */
#ifndef THALLIUM_SERIALIZATION_STL_COMPLEX_HPP
#define THALLIUM_SERIALIZATION_STL_COMPLEX_HPP
#include <thallium/serialization/archives.hpp>
#include <cereal/types/complex.hpp>
#endif
