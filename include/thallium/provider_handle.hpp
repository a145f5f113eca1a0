/*
 * tl::provider_handle: an endpoint and a provider id, the target of
 * remote_procedure::on(provider_handle).
 */
#ifndef THALLIUM_PROVIDER_HANDLE_HPP
#define THALLIUM_PROVIDER_HANDLE_HPP

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <thallium/endpoint.hpp>
#include <thallium/remote_procedure.hpp>

namespace thallium
{

class provider_handle : public endpoint
{
  public:
    provider_handle() = default;
    provider_handle(const endpoint &ep, std::uint16_t provider_id = 0)
        : endpoint(ep), m_provider_id(provider_id)
    {
    }
    provider_handle(const engine &e, hg_addr_t addr,
                    std::uint16_t provider_id = 0, bool take_ownership = true)
        : endpoint(e, addr, take_ownership), m_provider_id(provider_id)
    {
    }
    std::uint16_t provider_id() const noexcept
    {
        return m_provider_id;
    }
    std::uint16_t get_provider_id() const noexcept
    {
        return m_provider_id;
    }
    /* Ask the target for the identity of this provider (an RPC;
     * margo_provider_get_identity()). A provider without one throws
     * (HG_NOENTRY). */
    std::string get_identity() const
    {
        std::vector<char> buf(64);
        for (;;) {
            std::size_t size = buf.size();
            if (!state())
                throw exception("get_identity: null endpoint", HG_INVALID_ARG);
            hg_return_t ret = margo_provider_get_identity(
                state()->checked_mid("get_identity"), get_addr(), m_provider_id,
                buf.data(), &size);
            if (ret == HG_NOMEM && size > buf.size()) {
                buf.resize(size);
                continue;
            }
            if (ret == HG_NOMEM)
                buf.resize(buf.size() * 2);
            else {
                MARGO_ASSERT(ret, margo_provider_get_identity);
                return std::string(buf.data(), strnlen(buf.data(), buf.size()));
            }
        }
    }

  private:
    std::uint16_t m_provider_id = 0;
};

inline callable_remote_procedure
remote_procedure::on(const provider_handle &ph) const
{
    return callable_remote_procedure(ph, m_name, ph.provider_id(),
                                     m_ignore_response);
}

} // namespace thallium

#endif
