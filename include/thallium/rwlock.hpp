/*
 * Thallium's per-class header for tl::rwlock, which Quicksilver defines in
 * thallium/abt.hpp.
 */
#ifndef THALLIUM_RWLOCK_HPP
#define THALLIUM_RWLOCK_HPP

#include <thallium/abt.hpp>

#endif
