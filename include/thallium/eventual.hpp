/*
 * Thallium's per-class header for tl::eventual<T>, which Quicksilver
 * defines in thallium/abt.hpp.
 */
#ifndef THALLIUM_EVENTUAL_HPP
#define THALLIUM_EVENTUAL_HPP

#include <thallium/abt.hpp>

#endif
