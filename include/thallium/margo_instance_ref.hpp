/*
 * tl::margo_instance_ref: a counted reference to a Margo instance
 * (margo_instance_ref_incr / margo_instance_release). Copies add a
 * reference, destruction drops one; built with take_ownership, it adopts
 * a reference the caller already holds. Releasing the last reference of
 * an instance not yet finalized finalizes it (margo.h).
 *
 * Unlike Thallium's, tl::engine does not derive from this class: an
 * engine shares its state through the layer's own engine_state.
 */
#ifndef THALLIUM_MARGO_INSTANCE_REF_HPP
#define THALLIUM_MARGO_INSTANCE_REF_HPP

#include <utility>

#include <margo.h>

namespace thallium
{

class margo_instance_ref
{
  public:
    margo_instance_ref() noexcept = default;
    margo_instance_ref(margo_instance_id mid,
                       bool take_ownership = false) noexcept
        : m_mid(mid)
    {
        if (m_mid != MARGO_INSTANCE_NULL && !take_ownership)
            margo_instance_ref_incr(m_mid);
    }
    margo_instance_ref(const margo_instance_ref &other) noexcept
        : margo_instance_ref(other.m_mid)
    {
    }
    margo_instance_ref(margo_instance_ref &&other) noexcept
        : m_mid(std::exchange(other.m_mid, MARGO_INSTANCE_NULL))
    {
    }
    margo_instance_ref &operator=(margo_instance_ref other) noexcept
    {
        std::swap(m_mid, other.m_mid);
        return *this;
    }
    ~margo_instance_ref()
    {
        if (m_mid != MARGO_INSTANCE_NULL)
            margo_instance_release(m_mid);
    }

    margo_instance_id get_margo_instance() const noexcept
    {
        return m_mid;
    }
    operator margo_instance_id() const noexcept
    {
        return m_mid;
    }
    explicit operator bool() const noexcept
    {
        return m_mid != MARGO_INSTANCE_NULL;
    }
    bool operator==(const margo_instance_ref &other) const noexcept
    {
        return m_mid == other.m_mid;
    }
    bool operator!=(const margo_instance_ref &other) const noexcept
    {
        return m_mid != other.m_mid;
    }

  protected:
    margo_instance_id m_mid = MARGO_INSTANCE_NULL;
};

} // namespace thallium

#endif
