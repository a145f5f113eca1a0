/*
 * Thallium's per-class header for tl::condition_variable, which
 * Quicksilver defines in thallium/abt.hpp.
 */
#ifndef THALLIUM_CONDITION_VARIABLE_HPP
#define THALLIUM_CONDITION_VARIABLE_HPP

#include <thallium/abt.hpp>

#endif
