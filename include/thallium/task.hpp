/*
 * tl::task: a handle on an Argobots tasklet (ABT_task). abt.h runs a
 * tasklet like a ULT; a tasklet should still not block, as in Argobots.
 * The managed<task> that make_task() returns joins and frees it.
 */
#ifndef THALLIUM_TASK_HPP
#define THALLIUM_TASK_HPP

#include <cstdint>
#include <functional>
#include <utility>

#include <abt.h>

#include <thallium/abt_errors.hpp>
#include <thallium/managed.hpp>
#include <thallium/unit_type.hpp>

namespace thallium
{

class pool;
class xstream;

enum class task_state : std::int32_t {
    ready = ABT_TASK_STATE_READY,
    running = ABT_TASK_STATE_RUNNING,
    terminated = ABT_TASK_STATE_TERMINATED
};

class task
{
    friend class managed<task>;
    friend class pool;
    friend class xstream;

  public:
    using native_handle_type = ABT_task;

    task() noexcept = default;
    explicit task(ABT_task t) noexcept : m_task(t)
    {
    }
    task(const task &) = default;
    task &operator=(const task &) = default;
    task(task &&o) noexcept : m_task(o.m_task)
    {
        o.m_task = ABT_TASK_NULL;
    }
    task &operator=(task &&o) noexcept
    {
        if (this != &o) {
            m_task = o.m_task;
            o.m_task = ABT_TASK_NULL;
        }
        return *this;
    }

    native_handle_type native_handle() const noexcept
    {
        return m_task;
    }
    bool is_null() const noexcept
    {
        return m_task == ABT_TASK_NULL;
    }
    explicit operator bool() const noexcept
    {
        return !is_null();
    }

    void join()
    {
        detail::abt_ok<task_exception>(ABT_task_join(m_task), "ABT_task_join");
    }
    void cancel()
    {
        detail::abt_ok<task_exception>(ABT_task_cancel(m_task),
                                       "ABT_task_cancel");
    }
    std::uint64_t id() const
    {
        std::uint64_t id = 0;
        detail::abt_ok<task_exception>(ABT_task_get_id(m_task, &id),
                                       "ABT_task_get_id");
        return id;
    }
    task_state state() const
    {
        ABT_task_state s;
        detail::abt_ok<task_exception>(ABT_task_get_state(m_task, &s),
                                       "ABT_task_get_state");
        return (task_state) s;
    }
    void set_migratable(bool flag)
    {
        detail::abt_ok<task_exception>(
            ABT_task_set_migratable(m_task, flag ? ABT_TRUE : ABT_FALSE),
            "ABT_task_set_migratable");
    }
    bool is_migratable() const
    {
        ABT_bool b = ABT_FALSE;
        detail::abt_ok<task_exception>(ABT_task_is_migratable(m_task, &b),
                                       "ABT_task_is_migratable");
        return b == ABT_TRUE;
    }
    bool operator==(const task &o) const
    {
        ABT_bool b = ABT_FALSE;
        detail::abt_ok<task_exception>(ABT_task_equal(m_task, o.m_task, &b),
                                       "ABT_task_equal");
        return b == ABT_TRUE;
    }
    bool operator!=(const task &o) const
    {
        return !(*this == o);
    }
    int get_last_pool_id() const
    {
        int id = -1;
        detail::abt_ok<task_exception>(ABT_task_get_last_pool_id(m_task, &id),
                                       "ABT_task_get_last_pool_id");
        return id;
    }
    pool get_last_pool() const;
    xstream get_xstream() const;

    /* The calling tasklet; task_exception from a ULT or a plain thread. */
    static task self()
    {
        ABT_task t = ABT_TASK_NULL;
        detail::abt_ok<task_exception>(ABT_task_self(&t), "ABT_task_self");
        return task(t);
    }
    static std::uint64_t self_id()
    {
        std::uint64_t id = 0;
        detail::abt_ok<task_exception>(ABT_task_self_id(&id),
                                       "ABT_task_self_id");
        return id;
    }

  private:
    void destroy()
    {
        if (m_task != ABT_TASK_NULL)
            ABT_task_free(&m_task);
        m_task = ABT_TASK_NULL;
    }

    template <typename F> static managed<task> create_on_pool(ABT_pool p, F &&f)
    {
        ABT_task t = ABT_TASK_NULL;
        start(p, std::forward<F>(f), &t);
        return make_managed<task>(t);
    }
    template <typename F>
    static void create_on_pool(ABT_pool p, F &&f, const anonymous &)
    {
        start(p, std::forward<F>(f), nullptr);
    }
    template <typename F> static void start(ABT_pool p, F &&f, ABT_task *t)
    {
        using fn_t = std::function<void()>;
        auto *fp = new fn_t(std::forward<F>(f));
        int ret = ABT_task_create(p, detail::run_work_unit<fn_t>, fp, t);
        if (ret != ABT_SUCCESS) {
            delete fp;
            throw task_exception("ABT_task_create", ret);
        }
    }

    ABT_task m_task = ABT_TASK_NULL;
};

} // namespace thallium

#include <thallium/pool.hpp>
#include <thallium/xstream.hpp>

namespace thallium
{

inline pool
task::get_last_pool() const
{
    ABT_pool p = ABT_POOL_NULL;
    detail::abt_ok<task_exception>(ABT_task_get_last_pool(m_task, &p),
                                   "ABT_task_get_last_pool");
    return pool(p);
}
/* task::get_xstream() is defined in xstream.hpp, which includes this
 * header after class xstream is complete, whichever is included first. */

} // namespace thallium

#endif
