/*
 * Provider ids. As in Thallium, every RPC of the layer belongs to a
 * provider: engine::define() without an id and remote_procedure::on(ep)
 * use provider 0, tl::provider<T> and provider_handle their own. Margo
 * carries the id inside the RPC id (margo_provider_register_name()).
 */
#ifndef THALLIUM_DETAIL_PROVIDER_ID_HPP
#define THALLIUM_DETAIL_PROVIDER_ID_HPP

#include <cstdint>
#include <string>

#include <margo.h>

#include <thallium/exception.hpp>
#include <thallium/proc_object.hpp>

namespace thallium
{
namespace detail
{

/* The provider id inside an RPC id, as margo.h documents the encoding:
 * provider_id + 1 in the high half, 0 there for Margo's default provider. */
inline std::uint16_t
provider_id_of(hg_id_t id)
{
    hg_id_t high = id >> 32;
    return high == 0 ? (std::uint16_t) MARGO_DEFAULT_PROVIDER_ID
                     : (std::uint16_t)(high - 1);
}

/* The id to send `name` to `provider_id` with, registered here (without a
 * handler) if it is not yet, and one-way if `one_way`. */
inline hg_id_t
origin_rpc_id(margo_instance_id mid, const std::string &name,
              std::uint16_t provider_id, bool one_way)
{
    hg_id_t id = 0;
    hg_bool_t flag = HG_FALSE;
    hg_return_t ret = margo_provider_registered_name(mid, name.c_str(),
                                                     provider_id, &id, &flag);
    if (ret != HG_SUCCESS || flag != HG_TRUE) {
        id = margo_provider_register_name(mid, name.c_str(), proc_object_cb,
                                          proc_object_cb, nullptr, provider_id,
                                          ABT_POOL_NULL);
        if (id == 0)
            throw margo_exception("margo_provider_register_name",
                                  HG_OTHER_ERROR, name);
    }
    if (one_way) {
        ret = margo_registered_disable_response(mid, id, 1);
        MARGO_ASSERT(ret, margo_registered_disable_response);
    }
    return id;
}

} // namespace detail
} // namespace thallium

#endif
