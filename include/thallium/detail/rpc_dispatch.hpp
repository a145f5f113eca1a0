/*
 * How a request reaches a C++ handler. Every RPC defined with a handler is
 * registered with rpc_callback as its HG callback and an rpc_entry as its
 * registered data; Margo schedules rpc_run (on the caller's context, a
 * handler thread or the progress thread, as the engine was configured),
 * which wraps the handle in a tl::request and calls the handler.
 *
 * No exception leaves rpc_run: one thrown by the handler (or by decoding
 * its arguments) answers the origin with an error code instead of a
 * response when the handler had not answered yet, so the origin's call
 * throws instead of waiting forever.
 */
#ifndef THALLIUM_DETAIL_RPC_DISPATCH_HPP
#define THALLIUM_DETAIL_RPC_DISPATCH_HPP

#include <functional>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include <thallium/detail/engine_state.hpp>
#include <thallium/detail/handle_ref.hpp>
#include <thallium/proc_object.hpp>
#include <thallium/request.hpp>

namespace thallium
{
namespace detail
{

struct rpc_entry {
    std::shared_ptr<engine_state> state;
    std::function<void(const request &)> fn;
};

inline void
free_rpc_entry(void *p)
{
    delete static_cast<rpc_entry *>(p);
}

inline void
respond_error(handle_ref &ref, hg_return_t code) noexcept
{
    if (ref.disabled_response || ref.responded.exchange(true))
        return;
    if (code == HG_SUCCESS || (unsigned) code >= HG_RETURN_MAX)
        code = HG_OTHER_ERROR;
    HG_Respond_error(ref.handle, nullptr, nullptr, code);
}

inline void
rpc_run(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    const struct hg_info *info = margo_get_info(h);
    rpc_entry *e = nullptr;
    if (mid != MARGO_INSTANCE_NULL && info != nullptr)
        e = static_cast<rpc_entry *>(margo_registered_data(mid, info->id));
    if (e == nullptr) {
        margo_destroy(h);
        return;
    }
    int disabled = 0;
    margo_registered_disabled_response(mid, info->id, &disabled);
    auto ref = std::make_shared<handle_ref>(h, e->state, disabled != 0);
    ++handler_depth();
    try {
        e->fn(request(ref));
    } catch (const exception &ex) {
        margo_error(mid, "thallium: handler threw: %s", ex.what());
        respond_error(*ref, ex.code());
    } catch (const std::exception &ex) {
        margo_error(mid, "thallium: handler threw: %s", ex.what());
        respond_error(*ref, HG_OTHER_ERROR);
    } catch (...) {
        margo_error(mid, "thallium: handler threw a non-standard exception");
        respond_error(*ref, HG_OTHER_ERROR);
    }
    --handler_depth();
}

inline hg_return_t
rpc_callback(hg_handle_t h)
{
    return margo_rpc_dispatch(h, rpc_run);
}

/* Register `name` with the layer's proc and callback, for provider_id. */
inline hg_id_t
register_rpc(margo_instance_id mid, const std::string &name,
             std::uint16_t provider_id, ABT_pool pool = ABT_POOL_NULL)
{
    hg_id_t id = margo_provider_register_name(mid, name.c_str(), proc_object_cb,
                                              proc_object_cb, rpc_callback,
                                              provider_id, pool);
    if (id == 0)
        throw margo_exception("margo_register_name", HG_OTHER_ERROR, name);
    /* A name registered before (define(name) at the origin) keeps its old
     * pool in Margo: set the one asked for now. */
    hg_return_t ret = margo_rpc_set_pool(mid, id, pool);
    if (ret != HG_SUCCESS)
        throw margo_exception("margo_rpc_set_pool", ret, name);
    return id;
}

/* Decode a request's arguments as the handler's parameter types and call
 * it: handler(req, decoded...). */
template <typename Tuple> struct invoke_with_input;
template <typename... A> struct invoke_with_input<std::tuple<A...>> {
    template <typename F, typename Post>
    static void call(F &f, const request &req, Post &&post)
    {
        input_proc<A...> in(req.get_margo_instance());
        hg_handle_t h = req.native_handle();
        hg_return_t ret = margo_get_input(h, &in);
        in.rethrow();
        MARGO_ASSERT(ret, margo_get_input);
        struct freer {
            hg_handle_t h;
            input_proc<A...> *in;
            ~freer()
            {
                margo_free_input(h, in);
            }
        } guard{h, &in};
        call_impl(f, req, in.values(), std::forward<Post>(post),
                  std::index_sequence_for<A...>{});
    }

  private:
    template <typename F, typename Post, std::size_t... I>
    static void call_impl(F &f, const request &req, std::tuple<A...> &v,
                          Post &&post, std::index_sequence<I...>)
    {
        post(req, [&]() { return f(req, std::get<I>(v)...); });
    }
};
template <> struct invoke_with_input<std::tuple<>> {
    template <typename F, typename Post>
    static void call(F &f, const request &req, Post &&post)
    {
        post(req, [&]() { return f(req); });
    }
};

/* What to do with a handler's result: engine handlers return void. */
struct discard_result {
    template <typename G> void operator()(const request &, G &&g) const
    {
        g();
    }
};

} // namespace detail
} // namespace thallium

#endif
