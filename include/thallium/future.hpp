/*
 * tl::future<T>: ready once set() has been called as many times as it has
 * compartments, each set() handing it a T*. The optional callback runs
 * once, in the thread whose set() filled the last compartment, with the
 * pointers in the order they were set; wait() blocks (an Argobots yield
 * point) until then. Over ABT_future, with one extra first compartment
 * that carries the callback to the C callback. Failures throw
 * tl::future_exception.
 */
#ifndef THALLIUM_FUTURE_HPP
#define THALLIUM_FUTURE_HPP

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <abt.h>

#include <thallium/abt_errors.hpp>

namespace thallium
{

template <typename T> class future
{
  public:
    using native_handle_type = ABT_future;

    explicit future(std::uint32_t compartments) : future(compartments, nullptr)
    {
    }
    template <typename F>
    future(std::uint32_t compartments, F &&on_ready)
        : m_ready(new ready_fn{std::function<void(const std::vector<T *> &)>(
                                   std::forward<F>(on_ready)),
                               compartments})
    {
        init(compartments);
    }
    future(const future &) = delete;
    future &operator=(const future &) = delete;
    future(future &&other) noexcept
        : m_future(other.m_future), m_ready(std::move(other.m_ready))
    {
        other.m_future = ABT_FUTURE_NULL;
    }
    future &operator=(future &&other) noexcept
    {
        std::swap(m_future, other.m_future);
        std::swap(m_ready, other.m_ready);
        return *this;
    }
    ~future()
    {
        if (m_future != ABT_FUTURE_NULL)
            ABT_future_free(&m_future);
    }

    void set(T *value)
    {
        detail::abt_ok<future_exception>(ABT_future_set(m_future, value),
                                         "ABT_future_set");
    }
    void wait()
    {
        detail::abt_ok<future_exception>(ABT_future_wait(m_future),
                                         "ABT_future_wait");
    }
    bool test() const
    {
        ABT_bool ready = ABT_FALSE;
        detail::abt_ok<future_exception>(ABT_future_test(m_future, &ready),
                                         "ABT_future_test");
        return ready == ABT_TRUE;
    }
    explicit operator bool() const
    {
        return test();
    }
    native_handle_type native_handle() const noexcept
    {
        return m_future;
    }

  private:
    struct ready_fn {
        std::function<void(const std::vector<T *> &)> fn;
        std::uint32_t count;
    };

    future(std::uint32_t compartments, std::nullptr_t)
    {
        init(compartments);
    }
    void init(std::uint32_t compartments)
    {
        detail::abt_ok<future_exception>(
            ABT_future_create(compartments + 1, &future::call_ready, &m_future),
            "ABT_future_create");
        /* The first compartment carries the callback (or nothing). */
        ABT_future_set(m_future, m_ready.get());
    }
    static void call_ready(void **values)
    {
        ready_fn *r = static_cast<ready_fn *>(values[0]);
        if (!r || !r->fn)
            return;
        std::vector<T *> v(r->count);
        for (std::uint32_t i = 0; i < r->count; i++)
            v[i] = static_cast<T *>(values[i + 1]);
        r->fn(v);
    }

    ABT_future m_future = ABT_FUTURE_NULL;
    std::unique_ptr<ready_fn> m_ready;
};

} // namespace thallium

#endif
