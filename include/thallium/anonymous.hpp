/*
 * Thallium's header for the tl::anonymous tag (make_thread / make_task
 * without a handle to join), which Quicksilver defines in
 * thallium/unit_type.hpp.
 */
#ifndef THALLIUM_ANONYMOUS_HPP
#define THALLIUM_ANONYMOUS_HPP

#include <thallium/unit_type.hpp>

#endif
