/*
 * tl::timed_callback (engine::create_timed_callback): a callable run once,
 * timeout_ms after start(), on the fabric clock (virtual time on sim), by
 * Margo's timers. Move-only; destroying it cancels it.
 */
#ifndef THALLIUM_TIMED_CALLBACK_HPP
#define THALLIUM_TIMED_CALLBACK_HPP

#include <chrono>
#include <functional>
#include <memory>
#include <utility>

#include <margo-timer.h>

#include <thallium/abt.hpp>
#include <thallium/engine.hpp>

namespace thallium
{

class timed_callback
{
  public:
    timed_callback(std::shared_ptr<detail::engine_state> state,
                   std::function<void()> fn)
        : m_state(std::move(state)),
          m_fn(new std::function<void()>(std::move(fn)))
    {
        if (margo_timer_create(m_state->checked_mid("create_timed_callback"),
                               &call, m_fn.get(), &m_timer) != 0)
            throw margo_exception("margo_timer_create", HG_OTHER_ERROR);
    }
    timed_callback(const timed_callback &) = delete;
    timed_callback &operator=(const timed_callback &) = delete;
    timed_callback(timed_callback &&other) noexcept
        : m_state(std::move(other.m_state)), m_fn(std::move(other.m_fn)),
          m_timer(std::exchange(other.m_timer, MARGO_TIMER_NULL))
    {
    }
    ~timed_callback()
    {
        if (m_timer != MARGO_TIMER_NULL) /* valid after finalize too */
            margo_timer_destroy(m_timer);
    }

    void start(double timeout_ms)
    {
        if (m_timer == MARGO_TIMER_NULL ||
            margo_timer_start(m_timer, timeout_ms) != 0)
            throw margo_exception("margo_timer_start", HG_OTHER_ERROR,
                                  "timer missing or already started");
    }
    template <typename R, typename P>
    void start(const std::chrono::duration<R, P> &d)
    {
        start(std::chrono::duration_cast<
                  std::chrono::duration<double, std::milli>>(d)
                  .count());
    }
    void cancel()
    {
        if (m_timer != MARGO_TIMER_NULL)
            margo_timer_cancel(m_timer);
    }

  private:
    static void call(void *arg)
    {
        try {
            (*static_cast<std::function<void()> *>(arg))();
        } catch (...) {
        }
    }

    std::shared_ptr<detail::engine_state> m_state;
    std::unique_ptr<std::function<void()>> m_fn;
    margo_timer_t m_timer = MARGO_TIMER_NULL;
};

template <typename F>
inline timed_callback
engine::create_timed_callback(F &&cb) const
{
    mid("create_timed_callback");
    return timed_callback(m_state, std::function<void()>(std::forward<F>(cb)));
}

inline void
engine::set_logger(logger *l)
{
    struct margo_logger ml = logger::to_margo(l);
    if (margo_set_logger(mid("set_logger"), l ? &ml : nullptr) != 0)
        throw exception("cannot set the engine's logger");
}
inline void
engine::set_log_level(logger::level lvl)
{
    if (margo_set_log_level(mid("set_log_level"), (margo_log_level) lvl) != 0)
        throw exception("cannot set the log level", HG_INVALID_ARG);
}

inline void
thread::sleep(const engine &e, double ms)
{
    margo_thread_sleep(e.get_margo_instance(), ms);
}

} // namespace thallium

#endif
