/*
 * Thallium's header for tl::timeout (thrown by timed calls), which
 * Quicksilver defines in thallium/exception.hpp.
 */
#ifndef THALLIUM_TIMEOUT_HPP
#define THALLIUM_TIMEOUT_HPP

#include <thallium/exception.hpp>

#endif
