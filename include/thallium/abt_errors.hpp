/*
 * Errors of Thallium's threading classes: each class throws its own
 * exception type (all tl::exception), carrying the failing abt.h call and
 * its ABT_ERR_* code.
 */
#ifndef THALLIUM_ABT_ERRORS_HPP
#define THALLIUM_ABT_ERRORS_HPP

#include <string>

#include <abt.h>

#include <thallium/exception.hpp>

namespace thallium
{

class abt_exception : public exception
{
  public:
    abt_exception(const std::string &fn, int abt_code)
        : exception(fn + " returned " + error_name(abt_code)),
          m_abt_code(abt_code)
    {
    }
    /* The ABT_ERR_* code. */
    int abt_code() const noexcept
    {
        return m_abt_code;
    }
    static std::string error_name(int code)
    {
        char buf[128] = "";
        size_t len = 0;
        if (ABT_error_get_str(code, nullptr, &len) == ABT_SUCCESS &&
            len < sizeof(buf) && ABT_error_get_str(code, buf, &len) == 0)
            return std::string(buf) + " (" + std::to_string(code) + ")";
        return "ABT error " + std::to_string(code);
    }

  private:
    int m_abt_code;
};

#define THALLIUM_ABT_EXCEPTION(name)                                           \
    class name : public abt_exception                                          \
    {                                                                          \
      public:                                                                  \
        using abt_exception::abt_exception;                                    \
    };
THALLIUM_ABT_EXCEPTION(pool_exception)
THALLIUM_ABT_EXCEPTION(scheduler_exception)
THALLIUM_ABT_EXCEPTION(xstream_exception)
THALLIUM_ABT_EXCEPTION(thread_exception)
THALLIUM_ABT_EXCEPTION(task_exception)
THALLIUM_ABT_EXCEPTION(self_exception)
THALLIUM_ABT_EXCEPTION(timer_exception)
THALLIUM_ABT_EXCEPTION(future_exception)
THALLIUM_ABT_EXCEPTION(xstream_barrier_exception)
#undef THALLIUM_ABT_EXCEPTION

namespace detail
{
template <typename E>
inline void
abt_ok(int ret, const char *fn)
{
    if (ret != ABT_SUCCESS)
        throw E(fn, ret);
}
} // namespace detail

} // namespace thallium

#endif
