/*
 * tl::remote_procedure: an RPC name defined on an engine (for one
 * provider). on(ep) binds it to a target, on(provider_handle) to a
 * provider of a target; disable_response() makes it one-way (set it on
 * both sides, as in Margo); deregister() removes the registration.
 */
#ifndef THALLIUM_REMOTE_PROCEDURE_HPP
#define THALLIUM_REMOTE_PROCEDURE_HPP

#include <cstdint>
#include <memory>
#include <string>

#include <thallium/callable_remote_procedure.hpp>
#include <thallium/detail/provider_id.hpp>
#include <thallium/endpoint.hpp>

namespace thallium
{

class provider_handle;

class remote_procedure
{
  public:
    remote_procedure() = default;
    remote_procedure(std::shared_ptr<detail::engine_state> state,
                     const std::string &name, std::uint16_t provider_id)
        : m_state(std::move(state)), m_name(name), m_provider_id(provider_id)
    {
        int disabled = 0;
        if (margo_registered_disabled_response(m_state->mid, id(), &disabled) ==
            HG_SUCCESS)
            m_ignore_response = disabled != 0;
    }

    callable_remote_procedure on(const endpoint &ep) const
    {
        return callable_remote_procedure(ep, m_name, 0, m_ignore_response);
    }
    /* Defined in provider_handle.hpp. */
    callable_remote_procedure on(const provider_handle &ph) const;

    remote_procedure &disable_response() &
    {
        margo_instance_id mid = state()->checked_mid("disable_response");
        hg_return_t ret = margo_registered_disable_response(mid, id(), 1);
        MARGO_ASSERT(ret, margo_registered_disable_response);
        m_ignore_response = true;
        return *this;
    }
    /* On a temporary (define(...).disable_response()): keeps it movable,
     * so it can initialize an auto_remote_procedure. */
    remote_procedure &&disable_response() &&
    {
        return std::move(disable_response());
    }

    void deregister()
    {
        margo_instance_id mid = state()->checked_mid("deregister");
        hg_return_t ret = margo_deregister(mid, id());
        MARGO_ASSERT(ret, margo_deregister);
    }

    /* The Margo RPC id of this name for this provider here. */
    hg_id_t id() const
    {
        hg_id_t i = 0;
        hg_bool_t flag = HG_FALSE;
        margo_provider_registered_name(state()->mid, m_name.c_str(),
                                       m_provider_id, &i, &flag);
        return i;
    }
    const std::string &name() const noexcept
    {
        return m_name;
    }

  protected:
    const std::shared_ptr<detail::engine_state> &state() const
    {
        if (!m_state)
            throw exception("null remote_procedure", HG_INVALID_ARG);
        return m_state;
    }

  private:
    std::shared_ptr<detail::engine_state> m_state;
    std::string m_name;
    std::uint16_t m_provider_id = 0;
    bool m_ignore_response = false;
};

/* A remote_procedure that deregisters its RPC when it goes (a provider's
 * members, typically). A deregistration that fails (the engine already
 * finalized, or the RPC deregistered by other means) is ignored. */
class auto_remote_procedure : public remote_procedure
{
  public:
    auto_remote_procedure() = default;
    auto_remote_procedure(remote_procedure &&rpc)
        : remote_procedure(std::move(rpc))
    {
    }
    auto_remote_procedure(const auto_remote_procedure &) = delete;
    auto_remote_procedure &operator=(const auto_remote_procedure &) = delete;
    auto_remote_procedure(auto_remote_procedure &&) = default;
    auto_remote_procedure &operator=(auto_remote_procedure &&) = default;
    ~auto_remote_procedure()
    {
        if (name().empty())
            return;
        try {
            deregister();
        } catch (const exception &) {
        }
    }
};

} // namespace thallium

#endif
