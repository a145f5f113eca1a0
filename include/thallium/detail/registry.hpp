/*
 * Which engine_state belongs to a Margo instance: the archives only know
 * the instance (a bulk decoded from a message must find its engine), and
 * tl::engine(margo_instance_id) must share the state of an engine already
 * built on that instance.
 */
#ifndef THALLIUM_DETAIL_REGISTRY_HPP
#define THALLIUM_DETAIL_REGISTRY_HPP

#include <map>
#include <memory>
#include <mutex>

#include <thallium/detail/engine_state.hpp>

namespace thallium
{
namespace detail
{

struct registry {
    std::mutex lock;
    std::map<margo_instance_id, std::weak_ptr<engine_state>> states;

    static registry &get()
    {
        static registry r;
        return r;
    }
};

/* Forget a finalized instance: Margo may reuse its address for a new one. */
inline void
forget_state(margo_instance_id mid)
{
    registry &r = registry::get();
    std::lock_guard<std::mutex> g(r.lock);
    r.states.erase(mid);
}

inline void
mark_finalized(engine_state &s)
{
    if (!s.finalized.exchange(true))
        forget_state(s.mid);
}

/* Margo's finalize callback that tells the layer the instance is gone. It
 * is pushed first, so it runs after every callback pushed later (those
 * still see a working engine). */
inline void
on_margo_finalize(void *arg)
{
    auto *w = static_cast<std::weak_ptr<engine_state> *>(arg);
    if (auto s = w->lock()) {
        if (!s->finalized.load())
            s->snapshot_objects();
        mark_finalized(*s);
    }
    delete w;
}

/* The state of `mid`, created (not owning the instance) when the layer has
 * none yet. */
inline std::shared_ptr<engine_state>
state_of(margo_instance_id mid)
{
    if (mid == MARGO_INSTANCE_NULL)
        return nullptr;
    registry &r = registry::get();
    std::lock_guard<std::mutex> g(r.lock);
    auto it = r.states.find(mid);
    if (it != r.states.end()) {
        if (auto s = it->second.lock())
            return s;
    }
    auto s =
        std::shared_ptr<engine_state>(new engine_state, [](engine_state *p) {
            registry &reg = registry::get();
            {
                std::lock_guard<std::mutex> g2(reg.lock);
                auto i = reg.states.find(p->mid);
                if (i != reg.states.end() && i->second.expired())
                    reg.states.erase(i);
            }
            delete p;
        });
    s->mid = mid;
    r.states[mid] = s;
    margo_push_finalize_callback(mid, on_margo_finalize,
                                 new std::weak_ptr<engine_state>(s));
    return s;
}

} // namespace detail
} // namespace thallium

#endif
