/*
 * tl::thread: a handle on a ULT (ABT_thread; on pthreads a ULT runs to
 * completion on the worker that took it, docs/abt.md). Handles are
 * copyable references; the managed<thread> that pool::make_thread() and
 * xstream::make_thread() return joins and frees the ULT when it goes.
 * thread::sleep(engine, ms) is defined in timed_callback.hpp.
 */
#ifndef THALLIUM_THREAD_HPP
#define THALLIUM_THREAD_HPP

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

class engine;
class pool;
class xstream;

enum class thread_state : std::int32_t {
    ready = ABT_THREAD_STATE_READY,
    running = ABT_THREAD_STATE_RUNNING,
    blocked = ABT_THREAD_STATE_BLOCKED,
    terminated = ABT_THREAD_STATE_TERMINATED
};

class thread
{
    friend class managed<thread>;
    friend class pool;
    friend class xstream;

  public:
    using native_handle_type = ABT_thread;

    /* Creation attributes (stack size and address are recorded only: a
     * ULT runs on its worker's stack). */
    class attribute
    {
      public:
        using native_handle_type = ABT_thread_attr;
        attribute()
        {
            detail::abt_ok<thread_exception>(ABT_thread_attr_create(&m_attr),
                                             "ABT_thread_attr_create");
        }
        explicit attribute(ABT_thread_attr a) noexcept : m_attr(a)
        {
        }
        attribute(const attribute &) = delete;
        attribute &operator=(const attribute &) = delete;
        attribute(attribute &&o) noexcept : m_attr(o.m_attr)
        {
            o.m_attr = ABT_THREAD_ATTR_NULL;
        }
        attribute &operator=(attribute &&o) noexcept
        {
            if (this != &o) {
                if (m_attr != ABT_THREAD_ATTR_NULL)
                    ABT_thread_attr_free(&m_attr);
                m_attr = o.m_attr;
                o.m_attr = ABT_THREAD_ATTR_NULL;
            }
            return *this;
        }
        ~attribute()
        {
            if (m_attr != ABT_THREAD_ATTR_NULL)
                ABT_thread_attr_free(&m_attr);
        }
        native_handle_type native_handle() const noexcept
        {
            return m_attr;
        }
        void set_stack(void *addr, std::size_t size)
        {
            detail::abt_ok<thread_exception>(
                ABT_thread_attr_set_stack(m_attr, addr, size),
                "ABT_thread_attr_set_stack");
        }
        void *get_stack_address() const
        {
            void *addr = nullptr;
            std::size_t size = 0;
            detail::abt_ok<thread_exception>(
                ABT_thread_attr_get_stack(m_attr, &addr, &size),
                "ABT_thread_attr_get_stack");
            return addr;
        }
        std::size_t get_stack_size() const
        {
            void *addr = nullptr;
            std::size_t size = 0;
            detail::abt_ok<thread_exception>(
                ABT_thread_attr_get_stack(m_attr, &addr, &size),
                "ABT_thread_attr_get_stack");
            return size;
        }
        void set_migratable(bool flag)
        {
            detail::abt_ok<thread_exception>(
                ABT_thread_attr_set_migratable(m_attr,
                                               flag ? ABT_TRUE : ABT_FALSE),
                "ABT_thread_attr_set_migratable");
        }

      private:
        ABT_thread_attr m_attr = ABT_THREAD_ATTR_NULL;
    };

    thread() noexcept = default;
    explicit thread(ABT_thread t) noexcept : m_thread(t)
    {
    }
    thread(const thread &) = default;
    thread &operator=(const thread &) = default;
    thread(thread &&o) noexcept : m_thread(o.m_thread)
    {
        o.m_thread = ABT_THREAD_NULL;
    }
    thread &operator=(thread &&o) noexcept
    {
        if (this != &o) {
            m_thread = o.m_thread;
            o.m_thread = ABT_THREAD_NULL;
        }
        return *this;
    }

    native_handle_type native_handle() const noexcept
    {
        return m_thread;
    }
    bool is_null() const noexcept
    {
        return m_thread == ABT_THREAD_NULL;
    }
    explicit operator bool() const noexcept
    {
        return !is_null();
    }

    /* Wait until the ULT has ended. */
    void join()
    {
        detail::abt_ok<thread_exception>(ABT_thread_join(m_thread),
                                         "ABT_thread_join");
    }
    /* A ULT still waiting in its pool ends without running. */
    void cancel()
    {
        detail::abt_ok<thread_exception>(ABT_thread_cancel(m_thread),
                                         "ABT_thread_cancel");
    }
    void resume()
    {
        detail::abt_ok<thread_exception>(ABT_thread_resume(m_thread),
                                         "ABT_thread_resume");
    }
    std::uint64_t id() const
    {
        ABT_unit_id id = 0;
        detail::abt_ok<thread_exception>(ABT_thread_get_id(m_thread, &id),
                                         "ABT_thread_get_id");
        return id;
    }
    thread_state state() const
    {
        ABT_thread_state s;
        detail::abt_ok<thread_exception>(ABT_thread_get_state(m_thread, &s),
                                         "ABT_thread_get_state");
        return (thread_state) s;
    }
    std::size_t stacksize() const
    {
        std::size_t s = 0;
        detail::abt_ok<thread_exception>(ABT_thread_get_stacksize(m_thread, &s),
                                         "ABT_thread_get_stacksize");
        return s;
    }
    attribute get_attribute() const
    {
        ABT_thread_attr a = ABT_THREAD_ATTR_NULL;
        detail::abt_ok<thread_exception>(ABT_thread_get_attr(m_thread, &a),
                                         "ABT_thread_get_attr");
        return attribute(a);
    }
    /* Migration is not supported by abt.h: set_migratable(true) and
     * migrate_to() throw, is_migratable() is false. */
    void set_migratable(bool flag)
    {
        detail::abt_ok<thread_exception>(
            ABT_thread_set_migratable(m_thread, flag ? ABT_TRUE : ABT_FALSE),
            "ABT_thread_set_migratable");
    }
    bool is_migratable() const
    {
        ABT_bool b = ABT_FALSE;
        detail::abt_ok<thread_exception>(ABT_thread_is_migratable(m_thread, &b),
                                         "ABT_thread_is_migratable");
        return b == ABT_TRUE;
    }
    void migrate_to(const pool &p);
    bool is_primary() const
    {
        ABT_bool b = ABT_FALSE;
        detail::abt_ok<thread_exception>(ABT_thread_is_primary(m_thread, &b),
                                         "ABT_thread_is_primary");
        return b == ABT_TRUE;
    }
    bool operator==(const thread &o) const
    {
        ABT_bool b = ABT_FALSE;
        detail::abt_ok<thread_exception>(
            ABT_thread_equal(m_thread, o.m_thread, &b), "ABT_thread_equal");
        return b == ABT_TRUE;
    }
    bool operator!=(const thread &o) const
    {
        return !(*this == o);
    }
    pool get_last_pool() const;
    int get_last_pool_id() const
    {
        int id = -1;
        detail::abt_ok<thread_exception>(
            ABT_thread_get_last_pool_id(m_thread, &id),
            "ABT_thread_get_last_pool_id");
        return id;
    }

    /* The calling ULT (the primary ULT on the thread that initialized
     * Argobots); thread_exception from a plain pthread. */
    static thread self()
    {
        ABT_thread t = ABT_THREAD_NULL;
        detail::abt_ok<thread_exception>(ABT_thread_self(&t),
                                         "ABT_thread_self");
        return thread(t);
    }
    static std::uint64_t self_id()
    {
        ABT_unit_id id = 0;
        detail::abt_ok<thread_exception>(ABT_thread_self_id(&id),
                                         "ABT_thread_self_id");
        return id;
    }
    static void yield()
    {
        detail::abt_ok<thread_exception>(ABT_thread_yield(),
                                         "ABT_thread_yield");
    }
    static void yield_to(const thread &other)
    {
        detail::abt_ok<thread_exception>(ABT_thread_yield_to(other.m_thread),
                                         "ABT_thread_yield_to");
    }
    /* Ends the calling ULT at once; as in Argobots its C++ frames are not
     * unwound (their destructors do not run). */
    static void exit()
    {
        detail::abt_ok<thread_exception>(ABT_thread_exit(), "ABT_thread_exit");
    }
    /* Sleep `ms` on the fabric clock (virtual on sim) while the engine
     * keeps making progress; defined in timed_callback.hpp. */
    static void sleep(const engine &e, double ms);

  private:
    void destroy()
    {
        if (m_thread != ABT_THREAD_NULL)
            ABT_thread_free(&m_thread);
        m_thread = ABT_THREAD_NULL;
    }

    template <typename F>
    static managed<thread> create_on_pool(ABT_pool p, F &&f,
                                          const attribute *attr)
    {
        ABT_thread t = ABT_THREAD_NULL;
        start(p, std::forward<F>(f), attr, &t);
        return make_managed<thread>(t);
    }
    template <typename F>
    static void create_on_pool(ABT_pool p, F &&f, const attribute *attr,
                               const anonymous &)
    {
        start(p, std::forward<F>(f), attr, nullptr);
    }
    template <typename F>
    static void start(ABT_pool p, F &&f, const attribute *attr, ABT_thread *t)
    {
        using fn_t = std::function<void()>;
        auto *fp = new fn_t(std::forward<F>(f));
        int ret = ABT_thread_create(
            p, detail::run_work_unit<fn_t>, fp,
            attr ? attr->native_handle() : ABT_THREAD_ATTR_NULL, t);
        if (ret != ABT_SUCCESS) {
            delete fp;
            throw thread_exception("ABT_thread_create", ret);
        }
    }

    ABT_thread m_thread = ABT_THREAD_NULL;
};

} // namespace thallium

#include <thallium/pool.hpp>

namespace thallium
{

inline pool
thread::get_last_pool() const
{
    ABT_pool p = ABT_POOL_NULL;
    detail::abt_ok<thread_exception>(ABT_thread_get_last_pool(m_thread, &p),
                                     "ABT_thread_get_last_pool");
    return pool(p);
}
inline void
thread::migrate_to(const pool &p)
{
    detail::abt_ok<thread_exception>(
        ABT_thread_migrate_to_pool(m_thread, p.native_handle()),
        "ABT_thread_migrate_to_pool");
}

} // namespace thallium

#endif
