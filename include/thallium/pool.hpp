/*
 * tl::pool: a handle on an Argobots pool (abt.h, on pthreads). Copies
 * refer to the same pool and free nothing; pool::create() returns a
 * tl::managed<pool> that frees it. Work pushed to a pool runs on the
 * execution streams whose schedulers serve it (docs/abt.md).
 *
 * A pool must outlive the execution streams that use it: freeing a pool
 * an execution stream still uses fails (ABT_ERR_POOL) and managed<pool>
 * then leaves it allocated rather than break the stream. User-defined
 * pools (pool::create<P, U>(), push/pop/remove/run_unit) are absent:
 * abt.h has no ABT_pool_def.
 */
#ifndef THALLIUM_POOL_HPP
#define THALLIUM_POOL_HPP

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>

#include <abt.h>

#include <thallium/abt_errors.hpp>
#include <thallium/managed.hpp>
#include <thallium/unit_type.hpp>

namespace thallium
{

class thread;
class task;
class scheduler;

class pool
{
    friend class managed<pool>;

  public:
    using native_handle_type = ABT_pool;

    enum class access : std::int32_t {
        priv = ABT_POOL_ACCESS_PRIV,
        spsc = ABT_POOL_ACCESS_SPSC,
        mpsc = ABT_POOL_ACCESS_MPSC,
        spmc = ABT_POOL_ACCESS_SPMC,
        mpmc = ABT_POOL_ACCESS_MPMC
    };
    enum class kind : std::int32_t {
        fifo = ABT_POOL_FIFO,
        fifo_wait = ABT_POOL_FIFO_WAIT
    };

    pool() noexcept = default;
    explicit pool(ABT_pool p) noexcept : m_pool(p)
    {
    }
    pool(const pool &) = default;
    pool &operator=(const pool &) = default;
    pool(pool &&other) noexcept : m_pool(other.m_pool)
    {
        other.m_pool = ABT_POOL_NULL;
    }
    pool &operator=(pool &&other) noexcept
    {
        if (this != &other) {
            m_pool = other.m_pool;
            other.m_pool = ABT_POOL_NULL;
        }
        return *this;
    }

    /* A new pool the returned managed<> frees. */
    static managed<pool> create(access a, kind k = kind::fifo)
    {
        ABT_pool p = ABT_POOL_NULL;
        detail::abt_ok<pool_exception>(
            ABT_pool_create_basic((ABT_pool_kind) k, (ABT_pool_access) a,
                                  ABT_FALSE, &p),
            "ABT_pool_create_basic");
        return make_managed<pool>(p);
    }

    native_handle_type native_handle() const noexcept
    {
        return m_pool;
    }
    bool is_null() const noexcept
    {
        return m_pool == ABT_POOL_NULL;
    }
    explicit operator bool() const noexcept
    {
        return !is_null();
    }
    bool operator==(const pool &o) const noexcept
    {
        return m_pool == o.m_pool;
    }
    bool operator!=(const pool &o) const noexcept
    {
        return m_pool != o.m_pool;
    }

    access get_access() const
    {
        ABT_pool_access a;
        detail::abt_ok<pool_exception>(ABT_pool_get_access(m_pool, &a),
                                       "ABT_pool_get_access");
        return (access) a;
    }
    /* Work units waiting in the pool. */
    std::size_t size() const
    {
        std::size_t s = 0;
        detail::abt_ok<pool_exception>(ABT_pool_get_size(m_pool, &s),
                                       "ABT_pool_get_size");
        return s;
    }
    /* Waiting plus running or blocked work units of the pool. */
    std::size_t total_size() const
    {
        std::size_t s = 0;
        detail::abt_ok<pool_exception>(ABT_pool_get_total_size(m_pool, &s),
                                       "ABT_pool_get_total_size");
        return s;
    }
    int id() const
    {
        int i = -1;
        detail::abt_ok<pool_exception>(ABT_pool_get_id(m_pool, &i),
                                       "ABT_pool_get_id");
        return i;
    }

    /* A ULT running f(); join it through the managed<thread>. */
    template <typename F> managed<thread> make_thread(F &&f);
    /* A ULT freed by itself when it ends. */
    template <typename F> void make_thread(F &&f, const anonymous &);
    template <typename F, typename Attr>
    managed<thread> make_thread(F &&f, const Attr &attr);
    template <typename F, typename Attr>
    void make_thread(F &&f, const Attr &attr, const anonymous &);
    /* A tasklet running f(). */
    template <typename F> managed<task> make_task(F &&f);
    template <typename F> void make_task(F &&f, const anonymous &);

  private:
    void destroy()
    {
        if (m_pool != ABT_POOL_NULL && ABT_pool_free(&m_pool) != ABT_SUCCESS)
            m_pool = ABT_POOL_NULL; /* still in use: left to the runtime */
    }

    ABT_pool m_pool = ABT_POOL_NULL;
};

} // namespace thallium

#include <thallium/task.hpp>
#include <thallium/thread.hpp>

namespace thallium
{

template <typename F>
inline managed<thread>
pool::make_thread(F &&f)
{
    return thread::create_on_pool(m_pool, std::forward<F>(f), nullptr);
}
template <typename F>
inline void
pool::make_thread(F &&f, const anonymous &a)
{
    thread::create_on_pool(m_pool, std::forward<F>(f), nullptr, a);
}
template <typename F, typename Attr>
inline managed<thread>
pool::make_thread(F &&f, const Attr &attr)
{
    return thread::create_on_pool(m_pool, std::forward<F>(f), &attr);
}
template <typename F, typename Attr>
inline void
pool::make_thread(F &&f, const Attr &attr, const anonymous &a)
{
    thread::create_on_pool(m_pool, std::forward<F>(f), &attr, a);
}
template <typename F>
inline managed<task>
pool::make_task(F &&f)
{
    return task::create_on_pool(m_pool, std::forward<F>(f));
}
template <typename F>
inline void
pool::make_task(F &&f, const anonymous &a)
{
    task::create_on_pool(m_pool, std::forward<F>(f), a);
}

} // namespace thallium

#endif
