/* How a process may access memory it exposes. */
#ifndef THALLIUM_BULK_MODE_HPP
#define THALLIUM_BULK_MODE_HPP

#include <cstdint>

#include <mercury_types.h>

namespace thallium
{

enum class bulk_mode : std::uint8_t {
    read_only = HG_BULK_READ_ONLY,
    write_only = HG_BULK_WRITE_ONLY,
    read_write = HG_BULK_READWRITE
};

} // namespace thallium

#endif
