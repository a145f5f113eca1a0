/*
 * Thallium's per-class header for tl::mutex and tl::recursive_mutex, which
 * Quicksilver defines in thallium/abt.hpp with the other synchronisation
 * types.
 */
#ifndef THALLIUM_MUTEX_HPP
#define THALLIUM_MUTEX_HPP

#include <thallium/abt.hpp>

#endif
