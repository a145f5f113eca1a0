/*
 * tl::xstream: a handle on an Argobots execution stream (abt.h: a worker
 * pthread running its scheduler's pools, growing a spare worker when all
 * of its workers are blocked). Handles are copyable references;
 * xstream::create() returns a managed<xstream> that joins and frees the
 * stream. xstream::check_events() is for user-defined schedulers' loops;
 * xstream::exit() is absent (abt.h cannot stop a worker pthread in the
 * middle of a ULT).
 */
#ifndef THALLIUM_XSTREAM_HPP
#define THALLIUM_XSTREAM_HPP

#include <cstdint>
#include <utility>
#include <vector>

#include <abt.h>

#include <thallium/abt_errors.hpp>
#include <thallium/managed.hpp>
#include <thallium/scheduler.hpp>
#include <thallium/unit_type.hpp>

namespace thallium
{

class pool;
class thread;
class task;

enum class xstream_state : std::int32_t {
    running = ABT_XSTREAM_STATE_RUNNING,
    terminated = ABT_XSTREAM_STATE_TERMINATED
};

class xstream
{
    friend class managed<xstream>;

  public:
    using native_handle_type = ABT_xstream;

    xstream() noexcept = default;
    explicit xstream(ABT_xstream x) noexcept : m_xstream(x)
    {
    }
    xstream(const xstream &) = default;
    xstream &operator=(const xstream &) = default;
    xstream(xstream &&o) noexcept : m_xstream(o.m_xstream)
    {
        o.m_xstream = ABT_XSTREAM_NULL;
    }
    xstream &operator=(xstream &&o) noexcept
    {
        if (this != &o) {
            m_xstream = o.m_xstream;
            o.m_xstream = ABT_XSTREAM_NULL;
        }
        return *this;
    }

    /* A stream with a default scheduler over one new pool of its own. */
    static managed<xstream> create()
    {
        ABT_xstream x = ABT_XSTREAM_NULL;
        detail::abt_ok<xstream_exception>(
            ABT_xstream_create(ABT_SCHED_NULL, &x), "ABT_xstream_create");
        return make_managed<xstream>(x);
    }
    /* A stream with a predefined scheduler over p, or over the pools of
     * [begin, end) in priority order. */
    static managed<xstream> create(scheduler::predef spd, const pool &p);
    template <typename I>
    static managed<xstream> create(scheduler::predef spd, const I &begin,
                                   const I &end);
    /* A stream on sched, which it owns from now on. */
    static managed<xstream> create(const scheduler &sched)
    {
        ABT_xstream x = ABT_XSTREAM_NULL;
        detail::abt_ok<xstream_exception>(
            ABT_xstream_create(sched.native_handle(), &x),
            "ABT_xstream_create");
        sched.given_away();
        return make_managed<xstream>(x);
    }
    static managed<xstream> create(const scheduler &sched, int rank)
    {
        ABT_xstream x = ABT_XSTREAM_NULL;
        detail::abt_ok<xstream_exception>(
            ABT_xstream_create_with_rank(sched.native_handle(), rank, &x),
            "ABT_xstream_create_with_rank");
        sched.given_away();
        return make_managed<xstream>(x);
    }

    native_handle_type native_handle() const noexcept
    {
        return m_xstream;
    }
    bool is_null() const noexcept
    {
        return m_xstream == ABT_XSTREAM_NULL;
    }
    explicit operator bool() const noexcept
    {
        return !is_null();
    }
    bool operator==(const xstream &o) const
    {
        ABT_bool b = ABT_FALSE;
        detail::abt_ok<xstream_exception>(
            ABT_xstream_equal(m_xstream, o.m_xstream, &b), "ABT_xstream_equal");
        return b == ABT_TRUE;
    }
    bool operator!=(const xstream &o) const
    {
        return !(*this == o);
    }

    /* Wait until the stream's pools are empty and its work has ended,
     * then stop it (refused for the primary stream and the caller's). */
    void join()
    {
        detail::abt_ok<xstream_exception>(ABT_xstream_join(m_xstream),
                                          "ABT_xstream_join");
    }
    int get_rank() const
    {
        int r = -1;
        detail::abt_ok<xstream_exception>(ABT_xstream_get_rank(m_xstream, &r),
                                          "ABT_xstream_get_rank");
        return r;
    }
    void set_rank(int r)
    {
        detail::abt_ok<xstream_exception>(ABT_xstream_set_rank(m_xstream, r),
                                          "ABT_xstream_set_rank");
    }
    bool is_primary() const
    {
        ABT_bool b = ABT_FALSE;
        detail::abt_ok<xstream_exception>(ABT_xstream_is_primary(m_xstream, &b),
                                          "ABT_xstream_is_primary");
        return b == ABT_TRUE;
    }
    xstream_state state() const
    {
        ABT_xstream_state s;
        detail::abt_ok<xstream_exception>(ABT_xstream_get_state(m_xstream, &s),
                                          "ABT_xstream_get_state");
        return (xstream_state) s;
    }
    int get_cpubind() const
    {
        int c = -1;
        detail::abt_ok<xstream_exception>(
            ABT_xstream_get_cpubind(m_xstream, &c), "ABT_xstream_get_cpubind");
        return c;
    }
    void set_cpubind(int cpuid)
    {
        detail::abt_ok<xstream_exception>(
            ABT_xstream_set_cpubind(m_xstream, cpuid),
            "ABT_xstream_set_cpubind");
    }
    std::vector<int> get_affinity() const
    {
        int n = 0;
        detail::abt_ok<xstream_exception>(
            ABT_xstream_get_affinity(m_xstream, 0, nullptr, &n),
            "ABT_xstream_get_affinity");
        std::vector<int> cpus((std::size_t) n);
        if (n > 0)
            detail::abt_ok<xstream_exception>(
                ABT_xstream_get_affinity(m_xstream, n, cpus.data(), &n),
                "ABT_xstream_get_affinity");
        return cpus;
    }
    template <typename I> void set_affinity(const I &begin, const I &end)
    {
        std::vector<int> cpus(begin, end);
        detail::abt_ok<xstream_exception>(
            ABT_xstream_set_affinity(m_xstream, (int) cpus.size(),
                                     cpus.empty() ? nullptr : cpus.data()),
            "ABT_xstream_set_affinity");
    }
    /* Replace the stream's scheduler (the caller's own stream or the
     * primary one). */
    void set_main_sched(const scheduler &s)
    {
        detail::abt_ok<xstream_exception>(
            ABT_xstream_set_main_sched(m_xstream, s.native_handle()),
            "ABT_xstream_set_main_sched");
        s.given_away();
    }
    template <typename I>
    void set_main_sched(scheduler::predef spd, const I &begin, const I &end);
    scheduler get_main_sched() const
    {
        ABT_sched s = ABT_SCHED_NULL;
        detail::abt_ok<xstream_exception>(
            ABT_xstream_get_main_sched(m_xstream, &s),
            "ABT_xstream_get_main_sched");
        return scheduler(s);
    }
    /* The stream's pools in priority order (at most max_pools of them
     * unless max_pools is -1). */
    std::vector<pool> get_main_pools(int max_pools = -1) const;

    template <typename F> managed<thread> make_thread(F &&f);
    template <typename F> void make_thread(F &&f, const anonymous &);
    template <typename F, typename Attr>
    managed<thread> make_thread(F &&f, const Attr &attr);
    template <typename F, typename Attr>
    void make_thread(F &&f, const Attr &attr, const anonymous &);
    template <typename F> managed<task> make_task(F &&f);
    template <typename F> void make_task(F &&f, const anonymous &);

    /* The caller's execution stream (xstream_exception from a plain
     * pthread that is not one). */
    static xstream self()
    {
        ABT_xstream x = ABT_XSTREAM_NULL;
        detail::abt_ok<xstream_exception>(ABT_xstream_self(&x),
                                          "ABT_xstream_self");
        return xstream(x);
    }
    static int self_rank()
    {
        int r = -1;
        detail::abt_ok<xstream_exception>(ABT_xstream_self_rank(&r),
                                          "ABT_xstream_self_rank");
        return r;
    }
    /* Execution streams not yet joined, the primary included. */
    static int num()
    {
        int n = 0;
        detail::abt_ok<xstream_exception>(ABT_xstream_get_num(&n),
                                          "ABT_xstream_get_num");
        return n;
    }
    /* From a user-defined scheduler's loop: lets the stream see a join
     * or a finish, and sleeps up to 1 ms while none of the scheduler's
     * pools has work. */
    static void check_events(const scheduler &s)
    {
        detail::abt_ok<xstream_exception>(
            ABT_xstream_check_events(s.native_handle()),
            "ABT_xstream_check_events");
    }

  private:
    void destroy()
    {
        if (m_xstream != ABT_XSTREAM_NULL)
            ABT_xstream_free(&m_xstream);
        m_xstream = ABT_XSTREAM_NULL;
    }
    pool first_pool() const;
    static managed<xstream> from_pools(scheduler::predef spd,
                                       std::vector<ABT_pool> &ps)
    {
        ABT_xstream x = ABT_XSTREAM_NULL;
        detail::abt_ok<xstream_exception>(
            ABT_xstream_create_basic((ABT_sched_predef) spd, (int) ps.size(),
                                     ps.data(), ABT_SCHED_CONFIG_NULL, &x),
            "ABT_xstream_create_basic");
        return make_managed<xstream>(x);
    }

    ABT_xstream m_xstream = ABT_XSTREAM_NULL;
};

} // namespace thallium

#include <thallium/pool.hpp>
#include <thallium/task.hpp>
#include <thallium/thread.hpp>

namespace thallium
{

inline xstream
task::get_xstream() const
{
    ABT_xstream x = ABT_XSTREAM_NULL;
    detail::abt_ok<task_exception>(ABT_task_get_xstream(m_task, &x),
                                   "ABT_task_get_xstream");
    return xstream(x);
}

inline managed<xstream>
xstream::create(scheduler::predef spd, const pool &p)
{
    std::vector<ABT_pool> ps(1, p.native_handle());
    return from_pools(spd, ps);
}
template <typename I>
inline managed<xstream>
xstream::create(scheduler::predef spd, const I &begin, const I &end)
{
    std::vector<ABT_pool> ps;
    for (I it = begin; it != end; ++it)
        ps.push_back(it->native_handle());
    return from_pools(spd, ps);
}
template <typename I>
inline void
xstream::set_main_sched(scheduler::predef spd, const I &begin, const I &end)
{
    std::vector<ABT_pool> ps;
    for (I it = begin; it != end; ++it)
        ps.push_back(it->native_handle());
    detail::abt_ok<xstream_exception>(
        ABT_xstream_set_main_sched_basic(m_xstream, (ABT_sched_predef) spd,
                                         (int) ps.size(), ps.data()),
        "ABT_xstream_set_main_sched_basic");
}
inline std::vector<pool>
xstream::get_main_pools(int max_pools) const
{
    ABT_sched s = get_main_sched().native_handle();
    int n = 0;
    detail::abt_ok<xstream_exception>(ABT_sched_get_num_pools(s, &n),
                                      "ABT_sched_get_num_pools");
    if (max_pools >= 0 && n > max_pools)
        n = max_pools;
    std::vector<ABT_pool> ps((std::size_t) n);
    if (n > 0)
        detail::abt_ok<xstream_exception>(
            ABT_xstream_get_main_pools(m_xstream, n, ps.data()),
            "ABT_xstream_get_main_pools");
    std::vector<pool> out;
    for (ABT_pool p : ps)
        out.emplace_back(p);
    return out;
}
inline pool
xstream::first_pool() const
{
    ABT_pool p = ABT_POOL_NULL;
    detail::abt_ok<xstream_exception>(
        ABT_xstream_get_main_pools(m_xstream, 1, &p),
        "ABT_xstream_get_main_pools");
    return pool(p);
}
template <typename F>
inline managed<thread>
xstream::make_thread(F &&f)
{
    return first_pool().make_thread(std::forward<F>(f));
}
template <typename F>
inline void
xstream::make_thread(F &&f, const anonymous &a)
{
    first_pool().make_thread(std::forward<F>(f), a);
}
template <typename F, typename Attr>
inline managed<thread>
xstream::make_thread(F &&f, const Attr &attr)
{
    return first_pool().make_thread(std::forward<F>(f), attr);
}
template <typename F, typename Attr>
inline void
xstream::make_thread(F &&f, const Attr &attr, const anonymous &a)
{
    first_pool().make_thread(std::forward<F>(f), attr, a);
}
template <typename F>
inline managed<task>
xstream::make_task(F &&f)
{
    return first_pool().make_task(std::forward<F>(f));
}
template <typename F>
inline void
xstream::make_task(F &&f, const anonymous &a)
{
    first_pool().make_task(std::forward<F>(f), a);
}

} // namespace thallium

#endif
