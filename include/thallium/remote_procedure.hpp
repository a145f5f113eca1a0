/*
 * tl::remote_procedure: an RPC registered by engine::define(). on(ep)
 * binds it to a target; disable_response() makes it one-way (set it on
 * both sides, as in Margo); deregister() removes it from the engine.
 */
#ifndef THALLIUM_REMOTE_PROCEDURE_HPP
#define THALLIUM_REMOTE_PROCEDURE_HPP

#include <cstdint>
#include <memory>

#include <thallium/callable_remote_procedure.hpp>
#include <thallium/endpoint.hpp>

namespace thallium
{

class provider_handle;

class remote_procedure
{
  public:
    remote_procedure() = default;
    remote_procedure(std::shared_ptr<detail::engine_state> state, hg_id_t id)
        : m_state(std::move(state)), m_id(id)
    {
        int disabled = 0;
        if (m_state && m_state->mid != MARGO_INSTANCE_NULL &&
            margo_registered_disabled_response(m_state->mid, m_id, &disabled) ==
                HG_SUCCESS)
            m_ignore_response = disabled != 0;
    }

    callable_remote_procedure on(const endpoint &ep) const
    {
        return callable_remote_procedure(ep, m_id, 0, m_ignore_response);
    }
    /* Defined in provider_handle.hpp. */
    callable_remote_procedure on(const provider_handle &ph) const;

    remote_procedure &disable_response()
    {
        margo_instance_id mid = state()->checked_mid("disable_response");
        hg_return_t ret = margo_registered_disable_response(mid, m_id, 1);
        MARGO_ASSERT(ret, margo_registered_disable_response);
        m_ignore_response = true;
        return *this;
    }

    void deregister()
    {
        margo_instance_id mid = state()->checked_mid("deregister");
        hg_return_t ret = margo_deregister(mid, m_id);
        MARGO_ASSERT(ret, margo_deregister);
    }

    hg_id_t id() const noexcept
    {
        return m_id;
    }

  private:
    const std::shared_ptr<detail::engine_state> &state() const
    {
        if (!m_state)
            throw exception("null remote_procedure", HG_INVALID_ARG);
        return m_state;
    }

    std::shared_ptr<detail::engine_state> m_state;
    hg_id_t m_id = 0;
    bool m_ignore_response = false;
};

} // namespace thallium

#endif
