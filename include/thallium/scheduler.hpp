/*
 * tl::scheduler: a handle on an Argobots scheduler over a list of pools
 * (predefined schedulers only: abt.h has no ABT_sched_def, so Thallium's
 * user-defined schedulers, scheduler::create<S>(), are absent). An
 * execution stream created on a scheduler owns it from then on and frees
 * it with itself; the managed<scheduler> that handed it over then frees
 * nothing.
 */
#ifndef THALLIUM_SCHEDULER_HPP
#define THALLIUM_SCHEDULER_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <abt.h>

#include <thallium/abt_errors.hpp>
#include <thallium/managed.hpp>

namespace thallium
{

class pool;
class xstream;

class scheduler
{
    friend class managed<scheduler>;
    friend class xstream;

  public:
    using native_handle_type = ABT_sched;

    enum class predef : std::int32_t {
        deflt = ABT_SCHED_DEFAULT,
        basic = ABT_SCHED_BASIC,
        prio = ABT_SCHED_PRIO,
        randws = ABT_SCHED_RANDWS,
        basic_wait = ABT_SCHED_BASIC_WAIT
    };
    enum class type : std::int32_t {
        ult = ABT_SCHED_TYPE_ULT,
        task = ABT_SCHED_TYPE_TASK
    };

    scheduler() noexcept = default;
    explicit scheduler(ABT_sched s) noexcept : m_sched(s)
    {
    }
    scheduler(const scheduler &) = default;
    scheduler &operator=(const scheduler &) = default;
    scheduler(scheduler &&o) noexcept
        : m_sched(o.m_sched), m_given(std::move(o.m_given))
    {
        o.m_sched = ABT_SCHED_NULL;
    }
    scheduler &operator=(scheduler &&o) noexcept
    {
        if (this != &o) {
            m_sched = o.m_sched;
            m_given = std::move(o.m_given);
            o.m_sched = ABT_SCHED_NULL;
        }
        return *this;
    }

    /* A predefined scheduler over one pool, or over [begin, end) (an
     * iterator range of tl::pool, in priority order). */
    static managed<scheduler> create(predef spd, const pool &p);
    template <typename I>
    static managed<scheduler> create(predef spd, const I &begin, const I &end);

    native_handle_type native_handle() const noexcept
    {
        return m_sched;
    }
    bool is_null() const noexcept
    {
        return m_sched == ABT_SCHED_NULL;
    }
    explicit operator bool() const noexcept
    {
        return !is_null();
    }
    bool operator==(const scheduler &o) const noexcept
    {
        return m_sched == o.m_sched;
    }
    bool operator!=(const scheduler &o) const noexcept
    {
        return m_sched != o.m_sched;
    }

    std::size_t num_pools() const
    {
        int n = 0;
        detail::abt_ok<scheduler_exception>(
            ABT_sched_get_num_pools(m_sched, &n), "ABT_sched_get_num_pools");
        return (std::size_t) n;
    }
    pool get_pool(int index) const;
    /* Work units waiting in the scheduler's pools / also running ones. */
    std::size_t size() const
    {
        std::size_t s = 0;
        detail::abt_ok<scheduler_exception>(ABT_sched_get_size(m_sched, &s),
                                            "ABT_sched_get_size");
        return s;
    }
    std::size_t total_size() const
    {
        std::size_t s = 0;
        detail::abt_ok<scheduler_exception>(
            ABT_sched_get_total_size(m_sched, &s), "ABT_sched_get_total_size");
        return s;
    }

  private:
    static managed<scheduler> from_pools(predef spd, std::vector<ABT_pool> &ps)
    {
        ABT_sched s = ABT_SCHED_NULL;
        detail::abt_ok<scheduler_exception>(
            ABT_sched_create_basic((ABT_sched_predef) spd, (int) ps.size(),
                                   ps.data(), ABT_SCHED_CONFIG_NULL, &s),
            "ABT_sched_create_basic");
        managed<scheduler> m = make_managed<scheduler>(s);
        m->m_given = std::make_shared<std::atomic<bool>>(false);
        return m;
    }
    /* An execution stream took the scheduler over. */
    void given_away() const
    {
        if (m_given)
            m_given->store(true);
    }
    void destroy()
    {
        if (m_sched != ABT_SCHED_NULL && !(m_given && m_given->load()))
            ABT_sched_free(&m_sched);
        m_sched = ABT_SCHED_NULL;
        m_given.reset();
    }

    ABT_sched m_sched = ABT_SCHED_NULL;
    /* Shared by the copies of a scheduler the layer created. */
    std::shared_ptr<std::atomic<bool>> m_given;
};

} // namespace thallium

#include <thallium/pool.hpp>

namespace thallium
{

inline managed<scheduler>
scheduler::create(predef spd, const pool &p)
{
    std::vector<ABT_pool> ps(1, p.native_handle());
    return from_pools(spd, ps);
}
template <typename I>
inline managed<scheduler>
scheduler::create(predef spd, const I &begin, const I &end)
{
    std::vector<ABT_pool> ps;
    for (I it = begin; it != end; ++it)
        ps.push_back(it->native_handle());
    return from_pools(spd, ps);
}
inline pool
scheduler::get_pool(int index) const
{
    ABT_pool p = ABT_POOL_NULL;
    detail::abt_ok<scheduler_exception>(
        ABT_sched_get_pools(m_sched, 1, index, &p), "ABT_sched_get_pools");
    return pool(p);
}

} // namespace thallium

#endif
