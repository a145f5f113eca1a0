/*
 * tl::self: questions about the calling work unit (static functions only):
 * its kind, whether it is the primary ULT or runs on the primary stream,
 * the id of the pool it last ran from (the main thread: the primary
 * stream's first pool), and suspend(). Failures, e.g. from a thread that
 * is no work unit, throw tl::self_exception.
 */
#ifndef THALLIUM_SELF_HPP
#define THALLIUM_SELF_HPP

#include <abt.h>

#include <thallium/abt_errors.hpp>
#include <thallium/unit_type.hpp>

namespace thallium
{

class self
{
  public:
    self() = delete;
    ~self() = delete;

    static unit_type get_unit_type()
    {
        ABT_unit_type t = ABT_UNIT_TYPE_EXT;
        detail::abt_ok<self_exception>(ABT_self_get_type(&t),
                                       "ABT_self_get_type");
        return static_cast<unit_type>(t);
    }
    static bool is_primary()
    {
        ABT_bool b = ABT_FALSE;
        detail::abt_ok<self_exception>(ABT_self_is_primary(&b),
                                       "ABT_self_is_primary");
        return b == ABT_TRUE;
    }
    static bool on_primary_xstream()
    {
        ABT_bool b = ABT_FALSE;
        detail::abt_ok<self_exception>(ABT_self_on_primary_xstream(&b),
                                       "ABT_self_on_primary_xstream");
        return b == ABT_TRUE;
    }
    static int get_last_pool_id()
    {
        int id = -1;
        detail::abt_ok<self_exception>(ABT_self_get_last_pool_id(&id),
                                       "ABT_self_get_last_pool_id");
        return id;
    }
    static void suspend()
    {
        detail::abt_ok<self_exception>(ABT_self_suspend(), "ABT_self_suspend");
    }
};

} // namespace thallium

#endif
