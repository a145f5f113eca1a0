/*
 * tl::managed<T>: sole owner of an Argobots object held by a Thallium
 * handle (tl::pool, tl::scheduler, tl::xstream, tl::thread, tl::task).
 * Those handles are plain copyable references that never free anything;
 * the managed<> returned by their create()/make_thread() calls frees the
 * object (T::destroy()) when it goes, is reset or is moved onto. It can be
 * moved, not copied, and gives the handle through * and ->.
 */
#ifndef THALLIUM_MANAGED_HPP
#define THALLIUM_MANAGED_HPP

#include <utility>

namespace thallium
{

template <class T> class managed;

template <class T, typename... Args> managed<T> make_managed(Args &&...args);

template <class T> class managed
{
    template <class X, typename... Args>
    friend managed<X> make_managed(Args &&...args);

  public:
    managed() = default;
    managed(const managed &) = delete;
    managed &operator=(const managed &) = delete;
    managed(managed &&other) noexcept : m_obj(std::move(other.m_obj))
    {
    }
    managed &operator=(managed &&other) noexcept
    {
        if (this != &other) {
            release();
            m_obj = std::move(other.m_obj);
        }
        return *this;
    }
    ~managed()
    {
        release();
    }

    /* Free the object now; the handle becomes null. */
    void release()
    {
        m_obj.destroy();
    }

    T &operator*() noexcept
    {
        return m_obj;
    }
    const T &operator*() const noexcept
    {
        return m_obj;
    }
    T *operator->() noexcept
    {
        return &m_obj;
    }
    const T *operator->() const noexcept
    {
        return &m_obj;
    }

  private:
    explicit managed(T &&obj) : m_obj(std::move(obj))
    {
    }
    T m_obj;
};

template <class T, typename... Args>
inline managed<T>
make_managed(Args &&...args)
{
    return managed<T>(T(std::forward<Args>(args)...));
}

} // namespace thallium

#endif
