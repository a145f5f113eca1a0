/*
 * One reference to an HG handle held by the C++ layer (requests, packed
 * responses, async responses share it), released when the last holder goes.
 */
#ifndef THALLIUM_DETAIL_HANDLE_REF_HPP
#define THALLIUM_DETAIL_HANDLE_REF_HPP

#include <atomic>
#include <memory>

#include <margo.h>

#include <thallium/detail/engine_state.hpp>

namespace thallium
{
namespace detail
{

struct handle_ref {
    handle_ref(hg_handle_t h, std::shared_ptr<engine_state> s, bool no_response)
        : handle(h), state(std::move(s)), disabled_response(no_response)
    {
    }
    handle_ref(const handle_ref &) = delete;
    handle_ref &operator=(const handle_ref &) = delete;
    ~handle_ref()
    {
        if (handle != HG_HANDLE_NULL && !state->finalized.load())
            margo_destroy(handle);
    }

    hg_handle_t handle;
    std::shared_ptr<engine_state> state;
    bool disabled_response;
    /* A target answered (respond or error response): a second answer is
     * refused, and an exception after it sends nothing more. */
    std::atomic<bool> responded{false};
};

} // namespace detail
} // namespace thallium

#endif
