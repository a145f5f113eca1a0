/*
 * Thallium's header for tl::remote_bulk (a remote bulk region with the
 * endpoint that exposed it), which Quicksilver defines in
 * thallium/bulk.hpp; the engine comes with it, as its operators need it.
 */
#ifndef THALLIUM_REMOTE_BULK_HPP
#define THALLIUM_REMOTE_BULK_HPP

#include <thallium/bulk.hpp>
#include <thallium/engine.hpp>

#endif
