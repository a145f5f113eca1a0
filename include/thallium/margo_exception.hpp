/*
 * Thallium's header for tl::margo_exception and MARGO_ASSERT, which
 * Quicksilver defines in thallium/exception.hpp.
 */
#ifndef THALLIUM_MARGO_EXCEPTION_HPP
#define THALLIUM_MARGO_EXCEPTION_HPP

#include <thallium/exception.hpp>

#endif
