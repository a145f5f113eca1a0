/*
 * Thallium's per-class header for tl::barrier (between ULTs), which
 * Quicksilver defines in thallium/abt.hpp. tl::xstream_barrier has its own
 * header.
 */
#ifndef THALLIUM_BARRIER_HPP
#define THALLIUM_BARRIER_HPP

#include <thallium/abt.hpp>

#endif
