/*
 * tl::xstream_barrier: a barrier between execution streams
 * (ABT_xstream_barrier): wait() returns once num_waiters callers have
 * reached it, each blocking its stream meanwhile. Failures throw
 * tl::xstream_barrier_exception.
 */
#ifndef THALLIUM_XSTREAM_BARRIER_HPP
#define THALLIUM_XSTREAM_BARRIER_HPP

#include <cstdint>
#include <utility>

#include <abt.h>

#include <thallium/abt_errors.hpp>

namespace thallium
{

class xstream_barrier
{
  public:
    using native_handle_type = ABT_xstream_barrier;

    explicit xstream_barrier(std::uint32_t num_waiters)
    {
        detail::abt_ok<xstream_barrier_exception>(
            ABT_xstream_barrier_create(num_waiters, &m_barrier),
            "ABT_xstream_barrier_create");
    }
    xstream_barrier(const xstream_barrier &) = delete;
    xstream_barrier &operator=(const xstream_barrier &) = delete;
    xstream_barrier(xstream_barrier &&other) noexcept
        : m_barrier(other.m_barrier)
    {
        other.m_barrier = ABT_XSTREAM_BARRIER_NULL;
    }
    xstream_barrier &operator=(xstream_barrier &&other) noexcept
    {
        std::swap(m_barrier, other.m_barrier);
        return *this;
    }
    ~xstream_barrier()
    {
        if (m_barrier != ABT_XSTREAM_BARRIER_NULL)
            ABT_xstream_barrier_free(&m_barrier);
    }

    void wait()
    {
        detail::abt_ok<xstream_barrier_exception>(
            ABT_xstream_barrier_wait(m_barrier), "ABT_xstream_barrier_wait");
    }
    native_handle_type native_handle() const noexcept
    {
        return m_barrier;
    }

  private:
    ABT_xstream_barrier m_barrier = ABT_XSTREAM_BARRIER_NULL;
};

} // namespace thallium

#endif
