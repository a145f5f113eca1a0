/*
 * engine::pools() and engine::xstreams(): the pools and execution streams
 * of the engine's Margo configuration, by name or index, each with its
 * name() and index(). ref_incr / release / ref_count / remove are Margo's
 * (margo_pool_ref_incr_by_name, margo_remove_pool_by_name, ...): a
 * reference, or an RPC registered on a pool, keeps the object from being
 * removed; a release at 0, or a removal Margo refuses, throws a
 * tl::exception with Margo's code (HG_PERMISSION, HG_OTHER_ERROR).
 *
 * After the engine finalized, the lists answer from what the engine kept
 * at finalize (engine_state::after_pools / after_xstreams): the same
 * names, indices and handles, and reference counts that ref_incr and
 * release keep counting, so a destructor that releases its reference
 * after finalize works, as with Thallium. Unlike Margo, which frees its
 * pools and streams only when the last reference to the instance goes,
 * Quicksilver's Margo frees them at finalize: a handle read after
 * finalize names a pool that no longer exists and must not be used.
 */
#ifndef THALLIUM_DETAIL_NAMED_OBJECTS_HPP
#define THALLIUM_DETAIL_NAMED_OBJECTS_HPP

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <margo-config.h>

#include <thallium/detail/engine_state.hpp>
#include <thallium/exception.hpp>
#include <thallium/pool.hpp>
#include <thallium/xstream.hpp>

namespace thallium
{

/* A pool or execution stream of an engine, with its configured name. */
template <typename T> class named_object : public T
{
  public:
    named_object(const T &obj, std::string name, std::uint32_t index)
        : T(obj), m_name(std::move(name)), m_index(index)
    {
    }
    const std::string &name() const noexcept
    {
        return m_name;
    }
    std::uint32_t index() const noexcept
    {
        return m_index;
    }

  private:
    std::string m_name;
    std::uint32_t m_index;
};

namespace detail
{

struct pool_traits {
    using object = pool;
    using info = struct margo_pool_info;
    using handle = ABT_pool;
    static const char *what()
    {
        return "pool";
    }
    static std::vector<engine_state::finalized_object> &after(engine_state &s)
    {
        return s.after_pools;
    }
    static hg_return_t by_name(margo_instance_id m, const char *n, info *i)
    {
        return margo_find_pool_by_name(m, n, i);
    }
    static hg_return_t by_index(margo_instance_id m, std::uint32_t x, info *i)
    {
        return margo_find_pool_by_index(m, x, i);
    }
    static hg_return_t by_handle(margo_instance_id m, handle h, info *i)
    {
        return margo_find_pool_by_handle(m, h, i);
    }
    static std::size_t count(margo_instance_id m)
    {
        return margo_get_num_pools(m);
    }
    static named_object<pool> make(const info &i)
    {
        return named_object<pool>(pool(i.pool), i.name, i.index);
    }
    static hg_return_t ref_incr(margo_instance_id m, const char *n)
    {
        return margo_pool_ref_incr_by_name(m, n);
    }
    static hg_return_t release(margo_instance_id m, const char *n)
    {
        return margo_pool_release_by_name(m, n);
    }
    static hg_return_t ref_count(margo_instance_id m, const char *n,
                                 unsigned *c)
    {
        return margo_pool_ref_count_by_name(m, n, c);
    }
    static hg_return_t remove(margo_instance_id m, const char *n)
    {
        return margo_remove_pool_by_name(m, n);
    }
};

struct xstream_traits {
    using object = xstream;
    using info = struct margo_xstream_info;
    using handle = ABT_xstream;
    static const char *what()
    {
        return "xstream";
    }
    static std::vector<engine_state::finalized_object> &after(engine_state &s)
    {
        return s.after_xstreams;
    }
    static hg_return_t by_name(margo_instance_id m, const char *n, info *i)
    {
        return margo_find_xstream_by_name(m, n, i);
    }
    static hg_return_t by_index(margo_instance_id m, std::uint32_t x, info *i)
    {
        return margo_find_xstream_by_index(m, x, i);
    }
    static hg_return_t by_handle(margo_instance_id m, handle h, info *i)
    {
        return margo_find_xstream_by_handle(m, h, i);
    }
    static std::size_t count(margo_instance_id m)
    {
        return margo_get_num_xstreams(m);
    }
    static named_object<xstream> make(const info &i)
    {
        return named_object<xstream>(xstream(i.xstream), i.name, i.index);
    }
    static hg_return_t ref_incr(margo_instance_id m, const char *n)
    {
        return margo_xstream_ref_incr_by_name(m, n);
    }
    static hg_return_t release(margo_instance_id m, const char *n)
    {
        return margo_xstream_release_by_name(m, n);
    }
    static hg_return_t ref_count(margo_instance_id m, const char *n,
                                 unsigned *c)
    {
        return margo_xstream_ref_count_by_name(m, n, c);
    }
    static hg_return_t remove(margo_instance_id m, const char *n)
    {
        return margo_remove_xstream_by_name(m, n);
    }
};

template <typename Tr> class object_list
{
  public:
    using value_type = named_object<typename Tr::object>;

    explicit object_list(std::shared_ptr<engine_state> s)
        : m_state(std::move(s))
    {
        if (!m_state)
            throw exception("null engine", HG_INVALID_ARG);
    }

    std::size_t size() const
    {
        if (finalized()) {
            std::lock_guard<std::mutex> g(m_state->after_lock);
            return Tr::after(*m_state).size();
        }
        return Tr::count(mid());
    }
    /* Throws tl::exception: HG_NOENTRY for an unknown name or handle,
     * HG_INVALID_ARG (Margo's code) for an index out of range. */
    value_type operator[](const char *name) const
    {
        return get(name);
    }
    value_type operator[](const std::string &name) const
    {
        return get(name.c_str());
    }
    template <typename I, typename = typename std::enable_if<
                              std::is_integral<I>::value>::type>
    value_type operator[](I index) const
    {
        return get(index);
    }
    value_type operator[](const typename Tr::object &obj) const
    {
        return get(obj);
    }
    /* By name, index or object, like operator[]. */
    template <typename K> void ref_incr(const K &key) const
    {
        refop(key, "ref_incr", Tr::ref_incr,
              [](unsigned &c) { return c++, HG_SUCCESS; });
    }
    template <typename K> void release(const K &key) const
    {
        refop(key, "release", Tr::release, [](unsigned &c) {
            return c == 0 ? HG_PERMISSION : (c--, HG_SUCCESS);
        });
    }
    template <typename K> unsigned ref_count(const K &key) const
    {
        if (finalized()) {
            std::lock_guard<std::mutex> g(m_state->after_lock);
            return Tr::after(*m_state)[after_find(key)].refcount;
        }
        std::string n = find(key).name;
        unsigned c = 0;
        check_op(Tr::ref_count(mid(), n.c_str(), &c), "ref_count", n);
        return c;
    }
    /* After finalize the object is already gone: a removal only takes it
     * off the list, and is refused (HG_PERMISSION) while it is referenced,
     * as Margo refuses it. */
    template <typename K> void remove(const K &key) const
    {
        if (finalized()) {
            std::lock_guard<std::mutex> g(m_state->after_lock);
            auto &v = Tr::after(*m_state);
            std::size_t i = after_find(key);
            check_op(v[i].refcount ? HG_PERMISSION : HG_SUCCESS, "remove",
                     v[i].name);
            v.erase(v.begin() + (std::ptrdiff_t) i);
            return;
        }
        std::string n = find(key).name;
        check_op(Tr::remove(mid(), n.c_str()), "remove", n);
    }

  private:
    using after_object = engine_state::finalized_object;

    bool finalized() const
    {
        return m_state->finalized.load();
    }
    margo_instance_id mid() const
    {
        return m_state->checked_mid(Tr::what());
    }
    template <typename K> value_type get(const K &key) const
    {
        if (finalized()) {
            std::lock_guard<std::mutex> g(m_state->after_lock);
            std::size_t i = after_find(key);
            const after_object &o = Tr::after(*m_state)[i];
            return value_type(
                typename Tr::object(static_cast<typename Tr::handle>(o.handle)),
                o.name, (std::uint32_t) i);
        }
        return Tr::make(find(key));
    }
    template <typename K, typename LiveOp, typename AfterOp>
    void refop(const K &key, const char *op, LiveOp live, AfterOp after) const
    {
        if (finalized()) {
            std::lock_guard<std::mutex> g(m_state->after_lock);
            after_object &o = Tr::after(*m_state)[after_find(key)];
            check_op(after(o.refcount), op, o.name);
            return;
        }
        std::string n = find(key).name;
        check_op(live(mid(), n.c_str()), op, n);
    }
    void check_op(hg_return_t ret, const char *op, const std::string &n) const
    {
        if (ret != HG_SUCCESS)
            throw exception(std::string(Tr::what()) + " \"" + n + "\": " + op +
                                " refused",
                            ret);
    }
    [[noreturn]] void not_found(const std::string &key,
                                hg_return_t ret = HG_NOENTRY) const
    {
        throw exception(std::string("no ") + Tr::what() + " " + key, ret);
    }
    typename Tr::info check(hg_return_t ret, const typename Tr::info &i,
                            const std::string &key) const
    {
        if (ret != HG_SUCCESS)
            throw exception(std::string("no ") + Tr::what() + " " + key, ret);
        return i;
    }
    typename Tr::info find(const char *name) const
    {
        typename Tr::info i{};
        return check(Tr::by_name(mid(), name, &i), i,
                     "\"" + std::string(name ? name : "") + "\"");
    }
    typename Tr::info find(const std::string &name) const
    {
        return find(name.c_str());
    }
    template <typename I>
    typename std::enable_if<std::is_integral<I>::value, typename Tr::info>::type
    find(I index) const
    {
        typename Tr::info i{};
        if (index < 0)
            not_found("at a negative index", HG_INVALID_ARG);
        return check(Tr::by_index(mid(), (std::uint32_t) index, &i), i,
                     "at index " + std::to_string(index));
    }
    typename Tr::info find(const typename Tr::object &obj) const
    {
        typename Tr::info i{};
        return check(Tr::by_handle(mid(), obj.native_handle(), &i), i,
                     "with that handle");
    }

    /* The same look-ups on the list kept at finalize (after_lock held). */
    std::size_t after_find(const char *name) const
    {
        const auto &v = Tr::after(*m_state);
        for (std::size_t i = 0; name && i < v.size(); i++)
            if (v[i].name == name)
                return i;
        not_found("\"" + std::string(name ? name : "") + "\"");
    }
    std::size_t after_find(const std::string &name) const
    {
        return after_find(name.c_str());
    }
    template <typename I>
    typename std::enable_if<std::is_integral<I>::value, std::size_t>::type
    after_find(I index) const
    {
        if (index < 0 || (std::size_t) index >= Tr::after(*m_state).size())
            not_found("at index " + std::to_string(index), HG_INVALID_ARG);
        return (std::size_t) index;
    }
    std::size_t after_find(const typename Tr::object &obj) const
    {
        const auto &v = Tr::after(*m_state);
        for (std::size_t i = 0; i < v.size(); i++)
            if (v[i].handle == (void *) obj.native_handle())
                return i;
        not_found("with that handle");
    }

    std::shared_ptr<engine_state> m_state;
};

} // namespace detail

using pool_list = detail::object_list<detail::pool_traits>;
using xstream_list = detail::object_list<detail::xstream_traits>;

} // namespace thallium

#endif
