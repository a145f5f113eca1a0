/*
 * engine::pools() and engine::xstreams(): the pools and execution streams
 * of the engine's Margo configuration, by name or index, each with its
 * name() and index(). ref_incr / release / ref_count / remove are Margo's
 * (margo_pool_ref_incr_by_name, margo_remove_pool_by_name, ...): a
 * reference, or an RPC registered on a pool, keeps the object from being
 * removed; a release at 0, or a removal Margo refuses, throws a
 * tl::exception with Margo's code (HG_PERMISSION, HG_OTHER_ERROR).
 */
#ifndef THALLIUM_DETAIL_NAMED_OBJECTS_HPP
#define THALLIUM_DETAIL_NAMED_OBJECTS_HPP

#include <cstdint>
#include <memory>
#include <string>

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
    }

    std::size_t size() const
    {
        return Tr::count(mid());
    }
    /* Throws tl::exception (HG_NOENTRY) for an unknown name or index. */
    value_type operator[](const char *name) const
    {
        return Tr::make(find(name));
    }
    value_type operator[](const std::string &name) const
    {
        return (*this)[name.c_str()];
    }
    template <typename I, typename = typename std::enable_if<
                              std::is_integral<I>::value>::type>
    value_type operator[](I index) const
    {
        return Tr::make(find(index));
    }
    value_type operator[](const typename Tr::object &obj) const
    {
        return Tr::make(find(obj));
    }

    /* By name, index or object, like operator[]. */
    template <typename K> void ref_incr(const K &key) const
    {
        std::string n = find(key).name;
        check_op(Tr::ref_incr(mid(), n.c_str()), "ref_incr", n);
    }
    template <typename K> void release(const K &key) const
    {
        std::string n = find(key).name;
        check_op(Tr::release(mid(), n.c_str()), "release", n);
    }
    template <typename K> unsigned ref_count(const K &key) const
    {
        std::string n = find(key).name;
        unsigned c = 0;
        check_op(Tr::ref_count(mid(), n.c_str(), &c), "ref_count", n);
        return c;
    }
    template <typename K> void remove(const K &key) const
    {
        std::string n = find(key).name;
        check_op(Tr::remove(mid(), n.c_str()), "remove", n);
    }

  private:
    margo_instance_id mid() const
    {
        if (!m_state)
            throw exception("null engine", HG_INVALID_ARG);
        return m_state->checked_mid(Tr::what());
    }
    void check_op(hg_return_t ret, const char *op, const std::string &n) const
    {
        if (ret != HG_SUCCESS)
            throw exception(std::string(Tr::what()) + " \"" + n + "\": " + op +
                                " refused",
                            ret);
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
            throw exception(std::string("no ") + Tr::what() +
                                " at a negative index",
                            HG_NOENTRY);
        return check(Tr::by_index(mid(), (std::uint32_t) index, &i), i,
                     "at index " + std::to_string(index));
    }
    typename Tr::info find(const typename Tr::object &obj) const
    {
        typename Tr::info i{};
        return check(Tr::by_handle(mid(), obj.native_handle(), &i), i,
                     "with that handle");
    }

    std::shared_ptr<engine_state> m_state;
};

} // namespace detail

using pool_list = detail::object_list<detail::pool_traits>;
using xstream_list = detail::object_list<detail::xstream_traits>;

} // namespace thallium

#endif
