/*
 * tl::scheduler: a handle on an Argobots scheduler over a list of pools,
 * predefined (create(predef, ...)) or user-defined (create<S>(...)). An
 * execution stream created on a scheduler owns it from then on and frees
 * it with itself; the managed<scheduler> that handed it over then frees
 * nothing.
 *
 * A user-defined scheduler S is constructed from the ABT_sched (S usually
 * derives from tl::scheduler) when the scheduler is created, and
 * destroyed when it is freed. It provides `void run()`, the loop the
 * execution stream runs (pop units from the pools, run_unit() them, call
 * xstream::check_events(*this) now and then, return once has_to_stop()),
 * and `pool get_migr_pool() const` (never called: there is no migration).
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

    /* A user-defined scheduler S over one pool, or over [begin, end). */
    template <typename S> static managed<scheduler> create(const pool &p);
    template <typename S, typename I>
    static managed<scheduler> create(const I &begin, const I &end);

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

    /* For a user-defined scheduler's loop: true once it must return
     * (exit(), or finish() or a join of its stream with its pools empty). */
    bool has_to_stop() const
    {
        ABT_bool stop = ABT_FALSE;
        detail::abt_ok<scheduler_exception>(
            ABT_sched_has_to_stop(m_sched, &stop), "ABT_sched_has_to_stop");
        return stop == ABT_TRUE;
    }
    /* Ask the loop to return once its pools are empty / at once. */
    void finish()
    {
        detail::abt_ok<scheduler_exception>(ABT_sched_finish(m_sched),
                                            "ABT_sched_finish");
    }
    void exit()
    {
        detail::abt_ok<scheduler_exception>(ABT_sched_exit(m_sched),
                                            "ABT_sched_exit");
    }

  private:
    template <typename S, typename Salloc = std::allocator<S>> struct user_def;
    template <typename S>
    static managed<scheduler> from_user(std::vector<ABT_pool> &ps);

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
/* The ABT_sched_def callbacks of create<S>(): the scheduler's data is its
 * S. */
template <typename S, typename Salloc> struct scheduler::user_def {
    using traits = std::allocator_traits<Salloc>;

    static S *impl(ABT_sched s)
    {
        void *data = nullptr;
        ABT_sched_get_data(s, &data);
        return static_cast<S *>(data);
    }
    static int init(ABT_sched s, ABT_sched_config)
    {
        Salloc a;
        S *x = traits::allocate(a, 1);
        try {
            traits::construct(a, x, s);
        } catch (...) {
            traits::deallocate(a, x, 1);
            return ABT_ERR_MEM;
        }
        return ABT_sched_set_data(s, x);
    }
    static void run(ABT_sched s)
    {
        impl(s)->run();
    }
    static int free(ABT_sched s)
    {
        Salloc a;
        S *x = impl(s);
        traits::destroy(a, x);
        traits::deallocate(a, x, 1);
        return ABT_SUCCESS;
    }
    static ABT_pool get_migr_pool(ABT_sched s)
    {
        return impl(s)->get_migr_pool().native_handle();
    }
};

template <typename S>
inline managed<scheduler>
scheduler::from_user(std::vector<ABT_pool> &ps)
{
    using D = user_def<S>;
    ABT_sched_def def = {ABT_SCHED_TYPE_ULT, D::init, D::run, D::free,
                         D::get_migr_pool};
    ABT_sched s = ABT_SCHED_NULL;
    detail::abt_ok<scheduler_exception>(
        ABT_sched_create(&def, (int) ps.size(), ps.data(),
                         ABT_SCHED_CONFIG_NULL, &s),
        "ABT_sched_create");
    managed<scheduler> m = make_managed<scheduler>(s);
    m->m_given = std::make_shared<std::atomic<bool>>(false);
    return m;
}
template <typename S>
inline managed<scheduler>
scheduler::create(const pool &p)
{
    std::vector<ABT_pool> ps(1, p.native_handle());
    return from_user<S>(ps);
}
template <typename S, typename I>
inline managed<scheduler>
scheduler::create(const I &begin, const I &end)
{
    std::vector<ABT_pool> ps;
    for (I it = begin; it != end; ++it)
        ps.push_back(it->native_handle());
    return from_user<S>(ps);
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
