/*
 * tl::endpoint: an address of a process, copyable (each copy holds its
 * own duplicate of the HG address), printable and comparable.
 */
#ifndef THALLIUM_ENDPOINT_HPP
#define THALLIUM_ENDPOINT_HPP

#include <memory>
#include <ostream>
#include <string>
#include <utility>

#include <margo.h>

#include <thallium/detail/engine_state.hpp>
#include <thallium/exception.hpp>

namespace thallium
{

class engine;

class endpoint
{
  public:
    endpoint() = default;
    /* Wraps addr; with take_ownership the endpoint frees it, otherwise it
     * keeps a duplicate. */
    endpoint(const engine &e, hg_addr_t addr, bool take_ownership = true);

    endpoint(std::shared_ptr<detail::engine_state> state, hg_addr_t addr,
             bool take_ownership)
        : m_state(std::move(state)), m_addr(addr)
    {
        if (!take_ownership && addr != HG_ADDR_NULL)
            m_addr = dup(addr);
    }

    endpoint(const endpoint &other) : m_state(other.m_state)
    {
        if (other.m_addr != HG_ADDR_NULL)
            m_addr = dup(other.m_addr);
    }
    endpoint(endpoint &&other) noexcept
        : m_state(std::move(other.m_state)),
          m_addr(std::exchange(other.m_addr, HG_ADDR_NULL))
    {
    }
    endpoint &operator=(const endpoint &other)
    {
        if (this != &other) {
            endpoint copy(other);
            swap(copy);
        }
        return *this;
    }
    endpoint &operator=(endpoint &&other) noexcept
    {
        if (this != &other) {
            release_addr();
            m_state = std::move(other.m_state);
            m_addr = std::exchange(other.m_addr, HG_ADDR_NULL);
        }
        return *this;
    }
    ~endpoint()
    {
        release_addr();
    }

    void swap(endpoint &other) noexcept
    {
        std::swap(m_state, other.m_state);
        std::swap(m_addr, other.m_addr);
    }

    /* The address as a string a peer can pass to engine::lookup(); empty
     * for a null endpoint. */
    operator std::string() const
    {
        if (m_addr == HG_ADDR_NULL || !m_state)
            return std::string();
        margo_instance_id mid = m_state->checked_mid("endpoint");
        hg_size_t size = 0;
        hg_return_t ret = margo_addr_to_string(mid, nullptr, &size, m_addr);
        MARGO_ASSERT(ret, margo_addr_to_string);
        std::string s(size, '\0');
        ret = margo_addr_to_string(mid, &s[0], &size, m_addr);
        MARGO_ASSERT(ret, margo_addr_to_string);
        s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
        return s;
    }

    bool is_null() const noexcept
    {
        return m_addr == HG_ADDR_NULL;
    }
    hg_addr_t get_addr(bool copy = false) const
    {
        return copy && m_addr != HG_ADDR_NULL ? dup(m_addr) : m_addr;
    }
    /* Give up ownership of the HG address and return it. */
    hg_addr_t release() noexcept
    {
        return std::exchange(m_addr, HG_ADDR_NULL);
    }
    engine get_engine() const;

    bool operator==(const endpoint &other) const
    {
        if (m_addr == HG_ADDR_NULL || other.m_addr == HG_ADDR_NULL)
            return m_addr == other.m_addr;
        if (m_state != other.m_state)
            return std::string(*this) == std::string(other);
        return margo_addr_cmp(m_state->checked_mid("endpoint"), m_addr,
                              other.m_addr) == HG_TRUE;
    }
    bool operator!=(const endpoint &other) const
    {
        return !(*this == other);
    }

    const std::shared_ptr<detail::engine_state> &state() const noexcept
    {
        return m_state;
    }

  private:
    hg_addr_t dup(hg_addr_t addr) const
    {
        hg_addr_t out = HG_ADDR_NULL;
        hg_return_t ret =
            margo_addr_dup(m_state->checked_mid("endpoint"), addr, &out);
        MARGO_ASSERT(ret, margo_addr_dup);
        return out;
    }
    void release_addr() noexcept
    {
        /* After finalize, Margo has released every address already. */
        if (m_addr != HG_ADDR_NULL && m_state && !m_state->finalized.load())
            margo_addr_free(m_state->mid, m_addr);
        m_addr = HG_ADDR_NULL;
    }

    std::shared_ptr<detail::engine_state> m_state;
    hg_addr_t m_addr = HG_ADDR_NULL;
};

inline std::ostream &
operator<<(std::ostream &os, const endpoint &ep)
{
    return os << static_cast<std::string>(ep);
}

} // namespace thallium

#endif
