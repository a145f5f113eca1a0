/*
 * tl::logger: a program's own log sink for an engine (engine::set_logger)
 * or for the process (logger::set_global_logger), over Margo's struct
 * margo_logger. The logger must outlive the engines that use it.
 */
#ifndef THALLIUM_LOGGER_HPP
#define THALLIUM_LOGGER_HPP

#include <margo-logging.h>
#include <margo.h>

#include <thallium/exception.hpp>

namespace thallium
{

class logger
{
  public:
    enum class level : int {
        external = MARGO_LOG_EXTERNAL,
        trace = MARGO_LOG_TRACE,
        debug = MARGO_LOG_DEBUG,
        info = MARGO_LOG_INFO,
        warning = MARGO_LOG_WARNING,
        error = MARGO_LOG_ERROR,
        critical = MARGO_LOG_CRITICAL
    };

    virtual ~logger() = default;
    virtual void trace(const char *msg) const = 0;
    virtual void debug(const char *msg) const = 0;
    virtual void info(const char *msg) const = 0;
    virtual void warning(const char *msg) const = 0;
    virtual void error(const char *msg) const = 0;
    virtual void critical(const char *msg) const = 0;

    static void set_global_logger(logger *l)
    {
        struct margo_logger ml = to_margo(l);
        if (margo_set_global_logger(l ? &ml : nullptr) != 0)
            throw exception("cannot set the global logger");
    }
    static void set_global_log_level(level lvl)
    {
        if (margo_set_global_log_level((margo_log_level) lvl) != 0)
            throw exception("cannot set the global log level", HG_INVALID_ARG);
    }

    /* The margo_logger that forwards to `l`. */
    static struct margo_logger to_margo(logger *l)
    {
        struct margo_logger ml;
        ml.uargs = l;
        ml.trace = &log_trace;
        ml.debug = &log_debug;
        ml.info = &log_info;
        ml.warning = &log_warning;
        ml.error = &log_error;
        ml.critical = &log_critical;
        return ml;
    }

  private:
    static void log_trace(void *u, const char *m)
    {
        static_cast<const logger *>(u)->trace(m);
    }
    static void log_debug(void *u, const char *m)
    {
        static_cast<const logger *>(u)->debug(m);
    }
    static void log_info(void *u, const char *m)
    {
        static_cast<const logger *>(u)->info(m);
    }
    static void log_warning(void *u, const char *m)
    {
        static_cast<const logger *>(u)->warning(m);
    }
    static void log_error(void *u, const char *m)
    {
        static_cast<const logger *>(u)->error(m);
    }
    static void log_critical(void *u, const char *m)
    {
        static_cast<const logger *>(u)->critical(m);
    }
};

} // namespace thallium

#endif
