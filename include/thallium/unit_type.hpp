/*
 * Small names shared by Thallium's threading classes: the kind of a work
 * unit, and the tl::anonymous tag that asks make_thread() / make_task()
 * for a work unit freed by itself when it ends (nothing to join).
 */
#ifndef THALLIUM_UNIT_TYPE_HPP
#define THALLIUM_UNIT_TYPE_HPP

#include <cstdint>

#include <abt.h>

namespace thallium
{

enum class unit_type : std::uint8_t {
    thread = ABT_UNIT_TYPE_THREAD,
    task = ABT_UNIT_TYPE_TASK,
    xstream = ABT_UNIT_TYPE_XSTREAM,
    other = ABT_UNIT_TYPE_EXT
};

struct anonymous {
};

namespace detail
{
/* The body of every work unit the layer starts: a heap std::function it
 * runs once and frees. An exception cannot cross into the C runtime, so
 * one escaping the function is dropped here. */
template <typename Fn>
inline void
run_work_unit(void *arg)
{
    Fn *f = static_cast<Fn *>(arg);
    try {
        (*f)();
    } catch (...) {
    }
    delete f;
}
} // namespace detail

} // namespace thallium

#endif
