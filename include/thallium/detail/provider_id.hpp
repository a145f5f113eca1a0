/*
 * Provider ids as the C layer carries them in an RPC id.
 */
#ifndef THALLIUM_DETAIL_PROVIDER_ID_HPP
#define THALLIUM_DETAIL_PROVIDER_ID_HPP

#include <cstdint>

#include <margo.h>

namespace thallium
{
namespace detail
{

inline std::uint16_t
provider_id_of(hg_id_t id)
{
    (void) id;
    return 0;
}

/* The id a handle is created with to reach `provider_id`'s RPC. */
inline hg_id_t
rpc_id_for(hg_id_t id, std::uint16_t provider_id)
{
    (void) provider_id;
    return id;
}

} // namespace detail
} // namespace thallium

#endif
