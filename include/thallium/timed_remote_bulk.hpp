/*
 * Thallium's header for tl::timed_remote_bulk (remote_bulk::timed()),
 * which Quicksilver defines in thallium/bulk.hpp.
 */
#ifndef THALLIUM_TIMED_REMOTE_BULK_HPP
#define THALLIUM_TIMED_REMOTE_BULK_HPP

#include <thallium/remote_bulk.hpp>

#endif
