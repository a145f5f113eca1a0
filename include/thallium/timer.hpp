/*
 * tl::timer: a stopwatch over ABT_timer, reading ABT_get_wtime() (seconds,
 * monotonic). start() and stop() mark the interval, read() gives its length
 * in seconds; wtime() is the clock itself and overhead() the mean cost of
 * one start/stop/read. Failures throw tl::timer_exception.
 */
#ifndef THALLIUM_TIMER_HPP
#define THALLIUM_TIMER_HPP

#include <utility>

#include <abt.h>

#include <thallium/abt_errors.hpp>

namespace thallium
{

class timer
{
  public:
    using native_handle_type = ABT_timer;

    timer()
    {
        detail::abt_ok<timer_exception>(ABT_timer_create(&m_timer),
                                        "ABT_timer_create");
    }
    /* A copy starts with the other's start and stop times. */
    timer(const timer &other)
    {
        if (other.m_timer != ABT_TIMER_NULL)
            detail::abt_ok<timer_exception>(
                ABT_timer_dup(other.m_timer, &m_timer), "ABT_timer_dup");
    }
    timer(timer &&other) noexcept : m_timer(other.m_timer)
    {
        other.m_timer = ABT_TIMER_NULL;
    }
    timer &operator=(const timer &other)
    {
        if (this != &other) {
            timer copy(other);
            std::swap(m_timer, copy.m_timer);
        }
        return *this;
    }
    timer &operator=(timer &&other) noexcept
    {
        std::swap(m_timer, other.m_timer);
        return *this;
    }
    ~timer()
    {
        if (m_timer != ABT_TIMER_NULL)
            ABT_timer_free(&m_timer);
    }

    /* Seconds on the clock every timer reads. */
    static double wtime()
    {
        return ABT_get_wtime();
    }
    /* The mean length of an empty start/stop interval, over many. */
    static double overhead()
    {
        const int rounds = 1000;
        double total = 0.0;
        timer t;
        for (int i = 0; i < rounds; i++) {
            t.start();
            t.stop();
            total += t.read();
        }
        return total / rounds;
    }

    void start()
    {
        detail::abt_ok<timer_exception>(ABT_timer_start(m_timer),
                                        "ABT_timer_start");
    }
    void stop()
    {
        detail::abt_ok<timer_exception>(ABT_timer_stop(m_timer),
                                        "ABT_timer_stop");
    }
    /* Seconds between the last start() and stop(). */
    double read() const
    {
        double secs = 0.0;
        detail::abt_ok<timer_exception>(ABT_timer_read(m_timer, &secs),
                                        "ABT_timer_read");
        return secs;
    }
    explicit operator double() const
    {
        return read();
    }
    native_handle_type native_handle() const noexcept
    {
        return m_timer;
    }

  private:
    ABT_timer m_timer = ABT_TIMER_NULL;
};

} // namespace thallium

#endif
