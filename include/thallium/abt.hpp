/*
 * Thallium's synchronisation names over the Argobots layer (abt.h, which
 * Quicksilver provides on pthreads): tl::abt, tl::mutex,
 * tl::recursive_mutex, tl::condition_variable, tl::rwlock,
 * tl::eventual<T>, tl::barrier; it also brings tl::pool, tl::scheduler,
 * tl::xstream, tl::thread and tl::task (their own headers). As with abt.h,
 * a thread blocked here blocks its pthread (docs/abt.md).
 */
#ifndef THALLIUM_ABT_HPP
#define THALLIUM_ABT_HPP

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include <abt.h>

#include <thallium/exception.hpp>
#include <thallium/managed.hpp>
#include <thallium/pool.hpp>
#include <thallium/scheduler.hpp>
#include <thallium/task.hpp>
#include <thallium/thread.hpp>
#include <thallium/xstream.hpp>

namespace thallium
{

class engine;

namespace detail
{
inline void
abt_check(int ret, const char *fn)
{
    if (ret != ABT_SUCCESS)
        throw exception(std::string(fn) + " returned " + std::to_string(ret));
}
} // namespace detail

/* Initializes Argobots for its lifetime if nothing else did. */
class abt
{
  public:
    abt()
    {
        if (ABT_initialized() != ABT_SUCCESS) {
            detail::abt_check(ABT_init(0, nullptr), "ABT_init");
            m_owner = true;
        }
    }
    abt(const abt &) = delete;
    abt &operator=(const abt &) = delete;
    ~abt()
    {
        if (m_owner)
            ABT_finalize();
    }
    static bool initialized()
    {
        return ABT_initialized() == ABT_SUCCESS;
    }

  private:
    bool m_owner = false;
};

class mutex
{
  public:
    mutex()
    {
        detail::abt_check(ABT_mutex_create(&m_mutex), "ABT_mutex_create");
    }
    mutex(const mutex &) = delete;
    mutex &operator=(const mutex &) = delete;
    ~mutex()
    {
        ABT_mutex_free(&m_mutex);
    }
    void lock()
    {
        detail::abt_check(ABT_mutex_lock(m_mutex), "ABT_mutex_lock");
    }
    bool try_lock()
    {
        return ABT_mutex_trylock(m_mutex) == ABT_SUCCESS;
    }
    void unlock()
    {
        detail::abt_check(ABT_mutex_unlock(m_mutex), "ABT_mutex_unlock");
    }
    ABT_mutex native_handle() const noexcept
    {
        return m_mutex;
    }

  protected:
    explicit mutex(bool recursive)
    {
        ABT_mutex_attr attr;
        detail::abt_check(ABT_mutex_attr_create(&attr),
                          "ABT_mutex_attr_create");
        ABT_mutex_attr_set_recursive(attr, recursive ? ABT_TRUE : ABT_FALSE);
        int ret = ABT_mutex_create_with_attr(attr, &m_mutex);
        ABT_mutex_attr_free(&attr);
        detail::abt_check(ret, "ABT_mutex_create_with_attr");
    }

  private:
    ABT_mutex m_mutex = ABT_MUTEX_NULL;
};

class recursive_mutex : public mutex
{
  public:
    recursive_mutex() : mutex(true)
    {
    }
};

class condition_variable
{
  public:
    condition_variable()
    {
        detail::abt_check(ABT_cond_create(&m_cond), "ABT_cond_create");
    }
    condition_variable(const condition_variable &) = delete;
    condition_variable &operator=(const condition_variable &) = delete;
    ~condition_variable()
    {
        ABT_cond_free(&m_cond);
    }
    void wait(std::unique_lock<mutex> &lock)
    {
        detail::abt_check(ABT_cond_wait(m_cond, lock.mutex()->native_handle()),
                          "ABT_cond_wait");
    }
    template <typename Pred> void wait(std::unique_lock<mutex> &lock, Pred pred)
    {
        while (!pred())
            wait(lock);
    }
    void notify_one()
    {
        ABT_cond_signal(m_cond);
    }
    void notify_all()
    {
        ABT_cond_broadcast(m_cond);
    }

  private:
    ABT_cond m_cond = ABT_COND_NULL;
};

class rwlock
{
  public:
    rwlock()
    {
        detail::abt_check(ABT_rwlock_create(&m_lock), "ABT_rwlock_create");
    }
    rwlock(const rwlock &) = delete;
    rwlock &operator=(const rwlock &) = delete;
    ~rwlock()
    {
        ABT_rwlock_free(&m_lock);
    }
    void rdlock()
    {
        detail::abt_check(ABT_rwlock_rdlock(m_lock), "ABT_rwlock_rdlock");
    }
    void wrlock()
    {
        detail::abt_check(ABT_rwlock_wrlock(m_lock), "ABT_rwlock_wrlock");
    }
    void unlock()
    {
        detail::abt_check(ABT_rwlock_unlock(m_lock), "ABT_rwlock_unlock");
    }

  private:
    ABT_rwlock m_lock = ABT_RWLOCK_NULL;
};

/* A value set once and waited for. The value lives in the C++ object; the
 * ABT eventual carries only the signal (and its ordering). */
template <typename T> class eventual
{
  public:
    eventual()
    {
        detail::abt_check(ABT_eventual_create(0, &m_ev), "ABT_eventual_create");
    }
    eventual(const eventual &) = delete;
    eventual &operator=(const eventual &) = delete;
    ~eventual()
    {
        ABT_eventual_free(&m_ev);
    }
    void set_value(const T &v)
    {
        m_value.reset(new T(v));
        detail::abt_check(ABT_eventual_set(m_ev, nullptr, 0),
                          "ABT_eventual_set");
    }
    void set_value(T &&v)
    {
        m_value.reset(new T(std::move(v)));
        detail::abt_check(ABT_eventual_set(m_ev, nullptr, 0),
                          "ABT_eventual_set");
    }
    T &wait()
    {
        detail::abt_check(ABT_eventual_wait(m_ev, nullptr),
                          "ABT_eventual_wait");
        return *m_value;
    }
    bool test() const
    {
        ABT_bool ready = ABT_FALSE;
        ABT_eventual_test(m_ev, nullptr, &ready);
        return ready == ABT_TRUE;
    }
    void reset()
    {
        ABT_eventual_reset(m_ev);
        m_value.reset();
    }

  private:
    ABT_eventual m_ev = ABT_EVENTUAL_NULL;
    std::unique_ptr<T> m_value;
};

template <> class eventual<void>
{
  public:
    eventual()
    {
        detail::abt_check(ABT_eventual_create(0, &m_ev), "ABT_eventual_create");
    }
    eventual(const eventual &) = delete;
    eventual &operator=(const eventual &) = delete;
    ~eventual()
    {
        ABT_eventual_free(&m_ev);
    }
    void set_value()
    {
        detail::abt_check(ABT_eventual_set(m_ev, nullptr, 0),
                          "ABT_eventual_set");
    }
    void wait()
    {
        detail::abt_check(ABT_eventual_wait(m_ev, nullptr),
                          "ABT_eventual_wait");
    }
    bool test() const
    {
        ABT_bool ready = ABT_FALSE;
        ABT_eventual_test(m_ev, nullptr, &ready);
        return ready == ABT_TRUE;
    }
    void reset()
    {
        ABT_eventual_reset(m_ev);
    }

  private:
    ABT_eventual m_ev = ABT_EVENTUAL_NULL;
};

class barrier
{
  public:
    explicit barrier(std::uint32_t num_waiters)
    {
        detail::abt_check(ABT_barrier_create(num_waiters, &m_barrier),
                          "ABT_barrier_create");
    }
    barrier(const barrier &) = delete;
    barrier &operator=(const barrier &) = delete;
    ~barrier()
    {
        ABT_barrier_free(&m_barrier);
    }
    void wait()
    {
        detail::abt_check(ABT_barrier_wait(m_barrier), "ABT_barrier_wait");
    }
    void reinit(std::uint32_t n)
    {
        ABT_barrier_reinit(m_barrier, n);
    }
    std::uint32_t get_num_waiters() const
    {
        std::uint32_t n = 0;
        ABT_barrier_get_num_waiters(m_barrier, &n);
        return n;
    }

  private:
    ABT_barrier m_barrier = ABT_BARRIER_NULL;
};

} // namespace thallium

#endif
