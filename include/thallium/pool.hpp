/*
 * tl::pool: a handle on an Argobots pool (abt.h, on pthreads). Copies
 * refer to the same pool and free nothing; pool::create() returns a
 * tl::managed<pool> that frees it. Work pushed to a pool runs on the
 * execution streams whose schedulers serve it (docs/abt.md).
 *
 * A pool must outlive the execution streams that use it: freeing a pool
 * an execution stream still uses fails (ABT_ERR_POOL) and managed<pool>
 * then leaves it allocated rather than break the stream.
 *
 * User-defined pools: pool::create<P, U>() makes a pool whose queue is a P
 * (default-constructed, freed with the pool) holding units U, built from
 * a tl::thread or a tl::task when a work unit is pushed. P provides
 * `static const pool::access access_type`, `std::size_t get_size()`,
 * `void push(U *)`, `U *pop()` (nullptr when empty) and `void remove(U *)`;
 * U provides `unit_type get_type()`, `get_thread()`, `get_task()` and
 * `bool is_in_pool()`. A user-defined scheduler moves units with pop<U>(),
 * push<U>(), remove<U>() and run_unit<U>() (abt.h's ABT_pool_def).
 */
#ifndef THALLIUM_POOL_HPP
#define THALLIUM_POOL_HPP

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
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

    /* A user-defined pool of P holding units U (see the top of this
     * file); the allocators make and free the P and the units. */
    template <typename P, typename U, typename Palloc = std::allocator<P>,
              typename Ualloc = std::allocator<U>>
    static managed<pool> create();

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

    /* The next waiting unit of a user-defined pool of U (nullptr when
     * empty); give it to run_unit() or back with push(). */
    template <typename U> U *pop()
    {
        ABT_unit u = ABT_UNIT_NULL;
        detail::abt_ok<pool_exception>(ABT_pool_pop(m_pool, &u),
                                       "ABT_pool_pop");
        return reinterpret_cast<U *>(u);
    }
    template <typename U> void push(U *unit)
    {
        detail::abt_ok<pool_exception>(
            ABT_pool_push(m_pool, reinterpret_cast<ABT_unit>(unit)),
            "ABT_pool_push");
    }
    template <typename U> void remove(U *unit)
    {
        detail::abt_ok<pool_exception>(
            ABT_pool_remove(m_pool, reinterpret_cast<ABT_unit>(unit)),
            "ABT_pool_remove");
    }
    /* Runs a popped unit to its end on the calling execution stream (from
     * a user-defined scheduler's run()). */
    template <typename U> void run_unit(U *unit)
    {
        detail::abt_ok<pool_exception>(
            ABT_xstream_run_unit(reinterpret_cast<ABT_unit>(unit), m_pool),
            "ABT_xstream_run_unit");
    }
    /* Stacked schedulers: abt.h refuses them (throws, ABT_ERR_FEATURE_NA). */
    void add_sched(const scheduler &sched);

  private:
    template <typename P, typename U, typename Palloc, typename Ualloc>
    struct user_def;

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
#include <thallium/scheduler.hpp>

namespace thallium
{

/* The ABT_pool_def callbacks of pool::create<P, U>(): the pool's data is
 * its P, a unit is a U*. */
template <typename P, typename U, typename Palloc, typename Ualloc>
struct pool::user_def {
    using ptraits = std::allocator_traits<Palloc>;
    using utraits = std::allocator_traits<Ualloc>;

    static P *impl(ABT_pool p)
    {
        void *data = nullptr;
        ABT_pool_get_data(p, &data);
        return static_cast<P *>(data);
    }
    static U *unit(ABT_unit u)
    {
        return reinterpret_cast<U *>(u);
    }
    template <typename W> static ABT_unit make_unit(W &&w)
    {
        Ualloc a;
        U *u = utraits::allocate(a, 1);
        try {
            utraits::construct(a, u, std::forward<W>(w));
        } catch (...) {
            utraits::deallocate(a, u, 1);
            return ABT_UNIT_NULL;
        }
        return reinterpret_cast<ABT_unit>(u);
    }

    static ABT_unit_type u_get_type(ABT_unit u)
    {
        return (ABT_unit_type) unit(u)->get_type();
    }
    static ABT_thread u_get_thread(ABT_unit u)
    {
        return unit(u)->get_thread().native_handle();
    }
    static ABT_task u_get_task(ABT_unit u)
    {
        return unit(u)->get_task().native_handle();
    }
    static ABT_bool u_is_in_pool(ABT_unit u)
    {
        return unit(u)->is_in_pool() ? ABT_TRUE : ABT_FALSE;
    }
    static ABT_unit u_create_from_thread(ABT_thread t)
    {
        return make_unit(thread(t));
    }
    static ABT_unit u_create_from_task(ABT_task t)
    {
        return make_unit(task(t));
    }
    static void u_free(ABT_unit *u)
    {
        Ualloc a;
        U *uu = unit(*u);
        utraits::destroy(a, uu);
        utraits::deallocate(a, uu, 1);
        *u = ABT_UNIT_NULL;
    }
    static int p_init(ABT_pool p, ABT_pool_config)
    {
        Palloc a;
        P *q = ptraits::allocate(a, 1);
        try {
            ptraits::construct(a, q);
        } catch (...) {
            ptraits::deallocate(a, q, 1);
            return ABT_ERR_MEM;
        }
        return ABT_pool_set_data(p, q);
    }
    static std::size_t p_get_size(ABT_pool p)
    {
        return impl(p)->get_size();
    }
    static void p_push(ABT_pool p, ABT_unit u)
    {
        impl(p)->push(unit(u));
    }
    static ABT_unit p_pop(ABT_pool p)
    {
        return reinterpret_cast<ABT_unit>(impl(p)->pop());
    }
    static int p_remove(ABT_pool p, ABT_unit u)
    {
        impl(p)->remove(unit(u));
        return ABT_SUCCESS;
    }
    static int p_free(ABT_pool p)
    {
        Palloc a;
        P *q = impl(p);
        ptraits::destroy(a, q);
        ptraits::deallocate(a, q, 1);
        return ABT_SUCCESS;
    }
};

template <typename P, typename U, typename Palloc, typename Ualloc>
inline managed<pool>
pool::create()
{
    using D = user_def<P, U, Palloc, Ualloc>;
    ABT_pool_def def = {};
    def.access = (ABT_pool_access) P::access_type;
    def.u_get_type = D::u_get_type;
    def.u_get_thread = D::u_get_thread;
    def.u_get_task = D::u_get_task;
    def.u_is_in_pool = D::u_is_in_pool;
    def.u_create_from_thread = D::u_create_from_thread;
    def.u_create_from_task = D::u_create_from_task;
    def.u_free = D::u_free;
    def.p_init = D::p_init;
    def.p_get_size = D::p_get_size;
    def.p_push = D::p_push;
    def.p_pop = D::p_pop;
    def.p_remove = D::p_remove;
    def.p_free = D::p_free;
    ABT_pool p = ABT_POOL_NULL;
    detail::abt_ok<pool_exception>(
        ABT_pool_create(&def, ABT_POOL_CONFIG_NULL, &p), "ABT_pool_create");
    return make_managed<pool>(p);
}

inline void
pool::add_sched(const scheduler &sched)
{
    detail::abt_ok<pool_exception>(
        ABT_pool_add_sched(m_pool, sched.native_handle()),
        "ABT_pool_add_sched");
}

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
