/* Thallium's header name for the input archive (serialization/archives.hpp). */
#ifndef THALLIUM_SERIALIZATION_PROC_INPUT_ARCHIVE_HPP
#define THALLIUM_SERIALIZATION_PROC_INPUT_ARCHIVE_HPP
#include <thallium/serialization/archives.hpp>
#endif
