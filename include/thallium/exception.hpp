/*
 * Errors of the C++ layer. Every failing call of the layer throws a
 * tl::exception (or a subclass) that carries the HG return code behind it
 * and a message naming the call; tl::timeout is thrown when a timed
 * operation's deadline passes (HG_TIMEOUT).
 */
#ifndef THALLIUM_EXCEPTION_HPP
#define THALLIUM_EXCEPTION_HPP

#include <exception>
#include <string>

#include <mercury.h>

namespace thallium
{

class exception : public std::exception
{
  public:
    exception() = default;
    explicit exception(const std::string &msg,
                       hg_return_t code = HG_OTHER_ERROR)
        : m_msg(msg), m_code(code)
    {
    }
    const char *what() const noexcept override
    {
        return m_msg.c_str();
    }
    /* The HG code behind the error (HG_OTHER_ERROR when there is none). */
    hg_return_t code() const noexcept
    {
        return m_code;
    }

  private:
    std::string m_msg;
    hg_return_t m_code = HG_OTHER_ERROR;
};

/* A Margo or HG call failed: which call, and its return code. */
class margo_exception : public exception
{
  public:
    margo_exception(const std::string &function, hg_return_t ret,
                    const std::string &msg = std::string())
        : exception(function + " returned " + HG_Error_to_string(ret) +
                        (msg.empty() ? std::string() : ": " + msg),
                    ret),
          m_function(function)
    {
    }
    const std::string &function() const noexcept
    {
        return m_function;
    }
    hg_return_t error() const noexcept
    {
        return code();
    }

  private:
    std::string m_function;
};

/* A timed RPC or transfer ran out of time. */
class timeout : public exception
{
  public:
    timeout() : exception("operation timed out", HG_TIMEOUT)
    {
    }
};

namespace detail
{
/* Throw for a failed call: tl::timeout for HG_TIMEOUT, margo_exception
 * for anything else. */
[[noreturn]] inline void
throw_hg(const char *function, hg_return_t ret,
         const std::string &msg = std::string())
{
    if (ret == HG_TIMEOUT)
        throw timeout();
    throw margo_exception(function, ret, msg);
}
} // namespace detail

} // namespace thallium

/* Thallium's helpers, for code that uses them directly. */
#define MARGO_THROW(__fun__, __ret__, __msg__)                                 \
    throw ::thallium::margo_exception(#__fun__, __ret__, __msg__)
#define MARGO_ASSERT(__ret__, __fun__)                                         \
    do {                                                                       \
        hg_return_t __r = (__ret__);                                           \
        if (__r != HG_SUCCESS)                                                 \
            ::thallium::detail::throw_hg(#__fun__, __r);                       \
    } while (0)

#endif
