/*
 * The two archives every RPC argument and response goes through. They are
 * cereal archives (so cereal's support for STL types and users' own
 * serialize / load / save functions work as they do with Thallium) that
 * read and write an hg_proc_t directly, so the bytes on the wire are the
 * plain binary encoding a Margo program with hg_proc_* would use.
 *
 * Decoding treats the bytes as hostile: every read is bounds-checked by
 * hg_proc_memcpy(), and a length prefix (cereal's size tags: the element
 * count of a string, vector, map...) larger than the bytes left in the
 * message is refused before anything is allocated. A bad message throws
 * tl::exception, which the layer turns into an error, never a crash.
 */
#ifndef THALLIUM_SERIALIZATION_ARCHIVES_HPP
#define THALLIUM_SERIALIZATION_ARCHIVES_HPP

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>

#include <cereal/cereal.hpp>
#include <cereal/types/common.hpp>
#include <margo.h>
#include <mercury_proc.h>

#include <thallium/exception.hpp>

namespace thallium
{

class engine;

/* hg_proc_save_ptr() for the archives: NULL (no room, or past the end of
 * a received message) throws. */
inline void *
detail_save_ptr(hg_proc_t proc, std::size_t size, const char *what)
{
    void *p = hg_proc_save_ptr(proc, (hg_size_t) size);
    if (p == nullptr && size > 0)
        throw exception(std::string(what) + " failed: save_ptr(" +
                            std::to_string(size) + ") out of bounds",
                        HG_PROTOCOL_ERROR);
    return p;
}

template <typename... CtxArg>
class proc_output_archive
    : public cereal::OutputArchive<proc_output_archive<CtxArg...>,
                                   cereal::AllowEmptyClassElision>
{
    using base = cereal::OutputArchive<proc_output_archive<CtxArg...>,
                                       cereal::AllowEmptyClassElision>;

  public:
    proc_output_archive(hg_proc_t proc, std::tuple<CtxArg...> &context,
                        margo_instance_id mid = MARGO_INSTANCE_NULL)
        : base(this), m_proc(proc), m_context(context), m_mid(mid)
    {
    }

    void write(const void *data, std::size_t size)
    {
        hg_return_t ret =
            hg_proc_memcpy(m_proc, const_cast<void *>(data), (hg_size_t) size);
        if (ret != HG_SUCCESS)
            throw exception(std::string("serialization failed: ") +
                                HG_Error_to_string(ret),
                            ret);
    }

    /* Reserve `size` bytes of the message and return where to write them
     * (hg_proc_save_ptr()); restore_ptr() once they are written. */
    void *save_ptr(std::size_t size)
    {
        return detail_save_ptr(m_proc, size, "serialization");
    }
    void restore_ptr(void *ptr, std::size_t size)
    {
        hg_proc_restore_ptr(m_proc, ptr, (hg_size_t) size);
    }
    hg_proc_t get_proc() const
    {
        return m_proc;
    }
    std::tuple<CtxArg...> &get_context()
    {
        return m_context;
    }
    margo_instance_id get_margo_instance() const
    {
        return m_mid;
    }
    /* Defined in engine.hpp. */
    engine get_engine() const;

  private:
    hg_proc_t m_proc;
    std::tuple<CtxArg...> &m_context;
    margo_instance_id m_mid;
};

template <typename... CtxArg>
class proc_input_archive
    : public cereal::InputArchive<proc_input_archive<CtxArg...>,
                                  cereal::AllowEmptyClassElision>
{
    using base = cereal::InputArchive<proc_input_archive<CtxArg...>,
                                      cereal::AllowEmptyClassElision>;

  public:
    proc_input_archive(hg_proc_t proc, std::tuple<CtxArg...> &context,
                       margo_instance_id mid = MARGO_INSTANCE_NULL)
        : base(this), m_proc(proc), m_context(context), m_mid(mid)
    {
    }

    void read(void *data, std::size_t size)
    {
        hg_return_t ret = hg_proc_memcpy(m_proc, data, (hg_size_t) size);
        if (ret != HG_SUCCESS)
            throw exception(std::string("deserialization failed: ") +
                                HG_Error_to_string(ret),
                            ret == HG_OVERFLOW ? HG_PROTOCOL_ERROR : ret);
    }

    /* Bytes not yet read: a bound for any count read from the message. */
    std::size_t bytes_left() const
    {
        return (std::size_t) hg_proc_get_size_left(m_proc);
    }

    /* The next `size` bytes of the message, in place (hg_proc_save_ptr());
     * fewer than `size` bytes left throws. restore_ptr() when done. */
    void *save_ptr(std::size_t size)
    {
        return detail_save_ptr(m_proc, size, "deserialization");
    }
    void restore_ptr(void *ptr, std::size_t size)
    {
        hg_proc_restore_ptr(m_proc, ptr, (hg_size_t) size);
    }
    hg_proc_t get_proc() const
    {
        return m_proc;
    }
    std::tuple<CtxArg...> &get_context()
    {
        return m_context;
    }
    margo_instance_id get_margo_instance() const
    {
        return m_mid;
    }
    engine get_engine() const;

  private:
    hg_proc_t m_proc;
    std::tuple<CtxArg...> &m_context;
    margo_instance_id m_mid;
};

/* Arithmetic types travel as their bytes, like hg_proc_memcpy() does. */
template <class T, class... C>
inline typename std::enable_if<std::is_arithmetic<T>::value, void>::type
CEREAL_SAVE_FUNCTION_NAME(proc_output_archive<C...> &ar, const T &t)
{
    ar.write(std::addressof(t), sizeof(t));
}

template <class T, class... C>
inline typename std::enable_if<std::is_arithmetic<T>::value, void>::type
CEREAL_LOAD_FUNCTION_NAME(proc_input_archive<C...> &ar, T &t)
{
    ar.read(std::addressof(t), sizeof(t));
}

template <class T, class... C>
inline void
CEREAL_SERIALIZE_FUNCTION_NAME(proc_output_archive<C...> &ar,
                               cereal::NameValuePair<T> &t)
{
    ar(t.value);
}

template <class T, class... C>
inline void
CEREAL_SERIALIZE_FUNCTION_NAME(proc_input_archive<C...> &ar,
                               cereal::NameValuePair<T> &t)
{
    ar(t.value);
}

/* Counts travel as 64-bit values whatever their C++ type. */
template <class T, class... C>
inline void
CEREAL_SAVE_FUNCTION_NAME(proc_output_archive<C...> &ar,
                          const cereal::SizeTag<T> &t)
{
    std::uint64_t n = (std::uint64_t) t.size;
    ar.write(&n, sizeof(n));
}

/* Every element takes at least one byte on the wire (types that encode to
 * nothing are the one exception, and are refused in counts larger than
 * the message), so a count above the bytes left is a lie: refuse it before
 * the container allocates. */
template <class T, class... C>
inline void
CEREAL_LOAD_FUNCTION_NAME(proc_input_archive<C...> &ar, cereal::SizeTag<T> &t)
{
    std::uint64_t n = 0;
    ar.read(&n, sizeof(n));
    if (n > (std::uint64_t) ar.bytes_left())
        throw exception("deserialization failed: a count of " +
                            std::to_string(n) + " exceeds the " +
                            std::to_string(ar.bytes_left()) + " bytes left",
                        HG_PROTOCOL_ERROR);
    t.size = static_cast<typename std::remove_reference<T>::type>(n);
}

template <class T, class... C>
inline void
CEREAL_SAVE_FUNCTION_NAME(proc_output_archive<C...> &ar,
                          const cereal::BinaryData<T> &bd)
{
    ar.write(bd.data, (std::size_t) bd.size);
}

template <class T, class... C>
inline void
CEREAL_LOAD_FUNCTION_NAME(proc_input_archive<C...> &ar,
                          cereal::BinaryData<T> &bd)
{
    ar.read(bd.data, (std::size_t) bd.size);
}

} // namespace thallium

CEREAL_REGISTER_ARCHIVE(thallium::proc_output_archive<>)
CEREAL_REGISTER_ARCHIVE(thallium::proc_input_archive<>)
/* The input / output pairing cereal's traits look up, for every context
 * (CEREAL_SETUP_ARCHIVE_TRAITS for a family of archives). */
namespace cereal
{
namespace traits
{
namespace detail
{
template <class... C>
struct get_output_from_input<thallium::proc_input_archive<C...>> {
    using type = thallium::proc_output_archive<C...>;
};
template <class... C>
struct get_input_from_output<thallium::proc_output_archive<C...>> {
    using type = thallium::proc_input_archive<C...>;
};
} // namespace detail
} // namespace traits
} // namespace cereal

#endif
