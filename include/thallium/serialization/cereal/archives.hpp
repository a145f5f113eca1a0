/*
 * Thallium's cereal archives header. Quicksilver's archives
 * (thallium/serialization/archives.hpp) read and write through hg_proc and
 * accept the serialize / load / save functions Thallium's cereal archives
 * accept, so this header only brings them in.
 */
#ifndef THALLIUM_SERIALIZATION_CEREAL_ARCHIVES_HPP
#define THALLIUM_SERIALIZATION_CEREAL_ARCHIVES_HPP

#include <thallium/serialization/serialize.hpp>

#endif
