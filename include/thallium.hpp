/*
 * Quicksilver's Thallium: the C++ layer over Margo, with Thallium's names
 * (namespace thallium; programs write `namespace tl = thallium;`).
 * Header-only; docs/thallium.md lists every name and how it maps onto
 * Margo and HG.
 */
#ifndef THALLIUM_HPP
#define THALLIUM_HPP

#include <thallium/config.hpp>
#include <thallium/exception.hpp>
#include <thallium/serialization/serialize.hpp>
#include <thallium/endpoint.hpp>
#include <thallium/bulk_mode.hpp>
#include <thallium/bulk.hpp>
#include <thallium/packed_data.hpp>
#include <thallium/request.hpp>
#include <thallium/async_response.hpp>
#include <thallium/callable_remote_procedure.hpp>
#include <thallium/remote_procedure.hpp>
#include <thallium/engine.hpp>
#include <thallium/provider_handle.hpp>
#include <thallium/provider.hpp>
#include <thallium/logger.hpp>
#include <thallium/timed_callback.hpp>
#include <thallium/abt.hpp>
#include <thallium/future.hpp>
#include <thallium/margo_instance_ref.hpp>
#include <thallium/reference_util.hpp>
#include <thallium/self.hpp>
#include <thallium/timer.hpp>
#include <thallium/tuple_util.hpp>
#include <thallium/xstream_barrier.hpp>

#endif
