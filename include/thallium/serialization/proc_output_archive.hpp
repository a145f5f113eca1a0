/* Thallium's header name for the output archive (serialization/archives.hpp).
 */
#ifndef THALLIUM_SERIALIZATION_PROC_OUTPUT_ARCHIVE_HPP
#define THALLIUM_SERIALIZATION_PROC_OUTPUT_ARCHIVE_HPP
#include <thallium/serialization/archives.hpp>
#endif
