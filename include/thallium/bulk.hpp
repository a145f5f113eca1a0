/*
 * tl::bulk: memory exposed for remote access (engine::expose), or, once
 * received as an RPC argument, a descriptor of a peer's memory. Transfers
 * pair a local segment with a remote one resolved to an endpoint:
 *
 *     remote.on(ep) >> local;           pull: peer memory into ours
 *     local >> remote.on(ep);           push: our memory into the peer's
 *     remote(3, 45).on(ep) >> local(13, 45);
 *
 * and `<<` the other way round. Each side may be a sub-range
 * (bulk(offset, size)); the smaller of the two sizes moves, and the
 * operators return the number of bytes moved.
 *
 * A bulk is copyable: copies share one HG bulk handle (reference counted).
 */
#ifndef THALLIUM_BULK_HPP
#define THALLIUM_BULK_HPP

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <cereal/cereal.hpp>
#include <margo.h>
#include <mercury_bulk.h>
#include <mercury_proc_bulk.h>

#include <thallium/bulk_mode.hpp>
#include <thallium/detail/registry.hpp>
#include <thallium/endpoint.hpp>
#include <thallium/exception.hpp>

namespace thallium
{

class bulk;
class bulk_segment;
class remote_bulk;
class timed_remote_bulk;

class bulk
{
  public:
    bulk() = default;
    bulk(std::shared_ptr<detail::engine_state> state, hg_bulk_t handle,
         bool is_local)
        : m_state(std::move(state)), m_bulk(handle), m_is_local(is_local)
    {
    }
    bulk(const bulk &other)
        : m_state(other.m_state), m_bulk(other.m_bulk),
          m_is_local(other.m_is_local)
    {
        if (m_bulk != HG_BULK_NULL)
            HG_Bulk_ref_incr(m_bulk);
    }
    bulk(bulk &&other) noexcept
        : m_state(std::move(other.m_state)),
          m_bulk(std::exchange(other.m_bulk, HG_BULK_NULL)),
          m_is_local(other.m_is_local)
    {
    }
    bulk &operator=(const bulk &other)
    {
        if (this != &other) {
            bulk copy(other);
            swap(copy);
        }
        return *this;
    }
    bulk &operator=(bulk &&other) noexcept
    {
        if (this != &other) {
            release();
            m_state = std::move(other.m_state);
            m_bulk = std::exchange(other.m_bulk, HG_BULK_NULL);
            m_is_local = other.m_is_local;
        }
        return *this;
    }
    ~bulk()
    {
        release();
    }

    void swap(bulk &other) noexcept
    {
        std::swap(m_state, other.m_state);
        std::swap(m_bulk, other.m_bulk);
        std::swap(m_is_local, other.m_is_local);
    }

    std::size_t size() const noexcept
    {
        return m_bulk == HG_BULK_NULL ? 0
                                      : (std::size_t) HG_Bulk_get_size(m_bulk);
    }
    bool is_null() const noexcept
    {
        return m_bulk == HG_BULK_NULL;
    }
    bool is_local() const noexcept
    {
        return m_is_local;
    }
    hg_bulk_t get_bulk(bool copy = false) const
    {
        if (copy && m_bulk != HG_BULK_NULL)
            HG_Bulk_ref_incr(m_bulk);
        return m_bulk;
    }

    bulk_segment select(std::size_t offset, std::size_t size) const;
    bulk_segment operator()(std::size_t offset, std::size_t size) const;
    remote_bulk on(const endpoint &ep) const;
    std::size_t operator>>(const remote_bulk &dest) const;
    std::size_t operator<<(const remote_bulk &src) const;

    /* The descriptor: eager for small read-only memory (the data travels
     * with it, so a peer can pull it even after this process is gone). */
    template <typename A> void save(A &ar) const
    {
        save_to(ar, 0);
    }
    template <typename A> void load(A &ar)
    {
        std::uint64_t n = 0;
        ar(cereal::make_size_tag(n));
        release();
        m_is_local = false;
        if (n == 0)
            return;
        std::vector<char> buf((std::size_t) n);
        ar(cereal::binary_data(buf.data(), buf.size()));
        m_state = detail::state_of(ar.get_margo_instance());
        if (!m_state)
            throw exception("a bulk can only be decoded by an engine",
                            HG_INVALID_ARG);
        hg_bulk_t h = HG_BULK_NULL;
        hg_return_t ret = HG_Bulk_deserialize(margo_get_class(m_state->mid), &h,
                                              buf.data(), n);
        MARGO_ASSERT(ret, HG_Bulk_deserialize);
        m_bulk = h;
    }

  private:
    /* Into an RPC's arguments: as hg_proc_hg_bulk_t encodes it (the same
     * bytes), which also keeps the handle registered until that RPC
     * completes, should the program drop this bulk first. */
    template <typename A>
    auto save_to(A &ar, int) const -> decltype(ar.get_proc(), void())
    {
        hg_bulk_t b = m_bulk;
        hg_return_t ret = hg_proc_hg_bulk_t(ar.get_proc(), &b);
        MARGO_ASSERT(ret, hg_proc_hg_bulk_t);
    }
    /* Any other archive: a size tag, then the descriptor's bytes. */
    template <typename A> void save_to(A &ar, long) const
    {
        if (m_bulk == HG_BULK_NULL) {
            ar(cereal::make_size_tag(std::uint64_t(0)));
            return;
        }
        hg_size_t n = HG_Bulk_get_serialize_size(m_bulk, HG_TRUE);
        std::vector<char> buf((std::size_t) n);
        hg_return_t ret = HG_Bulk_serialize(buf.data(), n, HG_TRUE, m_bulk);
        MARGO_ASSERT(ret, HG_Bulk_serialize);
        ar(cereal::make_size_tag(std::uint64_t(n)));
        ar(cereal::binary_data(buf.data(), buf.size()));
    }

  public:
    const std::shared_ptr<detail::engine_state> &state() const noexcept
    {
        return m_state;
    }

  private:
    void release() noexcept
    {
        if (m_bulk != HG_BULK_NULL && m_state && !m_state->finalized.load())
            HG_Bulk_free(m_bulk);
        m_bulk = HG_BULK_NULL;
    }

    std::shared_ptr<detail::engine_state> m_state;
    hg_bulk_t m_bulk = HG_BULK_NULL;
    bool m_is_local = false;
};

/* A range of a bulk. Sizes are clamped to what the bulk holds. */
class bulk_segment
{
  public:
    bulk_segment(const bulk &b) : m_bulk(b), m_offset(0), m_size(b.size())
    {
    }
    bulk_segment(const bulk &b, std::size_t offset, std::size_t size)
        : m_bulk(b), m_offset(std::min(offset, b.size())),
          m_size(std::min(size, b.size() - std::min(offset, b.size())))
    {
    }
    bulk_segment select(std::size_t offset, std::size_t size) const
    {
        std::size_t off = std::min(offset, m_size);
        return bulk_segment(m_bulk, m_offset + off,
                            std::min(size, m_size - off));
    }
    bulk_segment operator()(std::size_t offset, std::size_t size) const
    {
        return select(offset, size);
    }
    remote_bulk on(const endpoint &ep) const;
    std::size_t operator>>(const remote_bulk &dest) const;
    std::size_t operator<<(const remote_bulk &src) const;

    const bulk &get_bulk() const noexcept
    {
        return m_bulk;
    }
    std::size_t offset() const noexcept
    {
        return m_offset;
    }
    std::size_t size() const noexcept
    {
        return m_size;
    }

  private:
    bulk m_bulk;
    std::size_t m_offset;
    std::size_t m_size;
};

/* A bulk transfer in flight (remote_bulk::pull_to / push_from, and their
 * timed forms). wait() returns the bytes moved or throws (tl::timeout
 * past a deadline); test() says whether wait() would return at once. The
 * bulks involved stay alive until it completes; a transfer not waited for
 * is waited for by the destructor (its error then dropped). */
class async_bulk_op
{
    friend class remote_bulk;

  public:
    async_bulk_op(const async_bulk_op &) = delete;
    async_bulk_op &operator=(const async_bulk_op &) = delete;
    async_bulk_op(async_bulk_op &&o) noexcept
        : m_size(o.m_size),
          m_request(std::exchange(o.m_request, MARGO_REQUEST_NULL)),
          m_local(std::move(o.m_local)), m_remote(std::move(o.m_remote))
    {
    }
    async_bulk_op &operator=(async_bulk_op &&o) noexcept
    {
        if (this != &o) {
            finish();
            m_size = o.m_size;
            m_request = std::exchange(o.m_request, MARGO_REQUEST_NULL);
            m_local = std::move(o.m_local);
            m_remote = std::move(o.m_remote);
        }
        return *this;
    }
    ~async_bulk_op()
    {
        finish();
    }

    bool test() const
    {
        if (m_request == MARGO_REQUEST_NULL)
            throw exception("async_bulk_op::test on a finished transfer",
                            HG_INVALID_ARG);
        int flag = 0;
        hg_return_t ret = margo_test(m_request, &flag);
        MARGO_ASSERT(ret, margo_test);
        return flag != 0;
    }
    std::size_t wait()
    {
        if (m_request == MARGO_REQUEST_NULL)
            throw exception("async_bulk_op::wait on a finished transfer",
                            HG_INVALID_ARG);
        hg_return_t ret =
            margo_wait(std::exchange(m_request, MARGO_REQUEST_NULL));
        MARGO_ASSERT(ret, margo_bulk_itransfer);
        return m_size;
    }

  private:
    async_bulk_op(std::size_t size, margo_request req, const bulk &local,
                  const bulk &remote)
        : m_size(size), m_request(req), m_local(local), m_remote(remote)
    {
    }
    void finish() noexcept
    {
        if (m_request != MARGO_REQUEST_NULL && m_local.state() &&
            !m_local.state()->finalized.load())
            margo_wait(m_request);
        m_request = MARGO_REQUEST_NULL;
    }

    std::size_t m_size = 0;
    margo_request m_request = MARGO_REQUEST_NULL;
    bulk m_local;
    bulk m_remote;
};

/* A peer's bulk (or a range of it) with the endpoint where it lives. */
class remote_bulk
{
  public:
    remote_bulk(const bulk_segment &seg, const endpoint &ep)
        : m_segment(seg), m_endpoint(ep)
    {
    }
    /* Pull into dest, push from src; return the bytes moved. */
    std::size_t operator>>(const bulk_segment &dest) const
    {
        return transfer(HG_BULK_PULL, dest, 0);
    }
    std::size_t operator<<(const bulk_segment &src) const
    {
        return transfer(HG_BULK_PUSH, src, 0);
    }
    remote_bulk select(std::size_t offset, std::size_t size) const
    {
        return remote_bulk(m_segment.select(offset, size), m_endpoint);
    }
    remote_bulk operator()(std::size_t offset, std::size_t size) const
    {
        return select(offset, size);
    }
    /* The same transfers with a deadline on the fabric clock: past it they
     * throw tl::timeout. */
    timed_remote_bulk timed(double timeout_ms) const;
    template <typename Rep, typename Period>
    timed_remote_bulk timed(const std::chrono::duration<Rep, Period> &d) const;

    /* The same transfers, started and returned in flight. */
    async_bulk_op pull_to(const bulk_segment &dest) const
    {
        return itransfer(HG_BULK_PULL, dest, 0);
    }
    async_bulk_op push_from(const bulk_segment &src) const
    {
        return itransfer(HG_BULK_PUSH, src, 0);
    }

    async_bulk_op itransfer(hg_bulk_op_t op, const bulk_segment &local,
                            double timeout_ms) const
    {
        const bulk &lb = local.get_bulk();
        const bulk &rb = m_segment.get_bulk();
        if (lb.is_null() || rb.is_null() || m_endpoint.is_null())
            throw exception("bulk transfer on a null bulk or endpoint",
                            HG_INVALID_ARG);
        margo_instance_id mid = lb.state()->checked_mid("bulk transfer");
        std::size_t n = std::min(local.size(), m_segment.size());
        margo_request req = MARGO_REQUEST_NULL;
        hg_return_t ret = margo_bulk_itransfer_timed(
            mid, op, m_endpoint.get_addr(), rb.get_bulk(), m_segment.offset(),
            lb.get_bulk(), local.offset(), n, timeout_ms, &req);
        MARGO_ASSERT(ret, margo_bulk_itransfer);
        return async_bulk_op(n, req, lb, rb);
    }

    std::size_t transfer(hg_bulk_op_t op, const bulk_segment &local,
                         double timeout_ms) const
    {
        const bulk &lb = local.get_bulk();
        const bulk &rb = m_segment.get_bulk();
        if (lb.is_null() || rb.is_null() || m_endpoint.is_null())
            throw exception("bulk transfer on a null bulk or endpoint",
                            HG_INVALID_ARG);
        margo_instance_id mid = lb.state()->checked_mid("bulk transfer");
        std::size_t n = std::min(local.size(), m_segment.size());
        if (n == 0)
            return 0;
        hg_return_t ret = margo_bulk_transfer_timed(
            mid, op, m_endpoint.get_addr(), rb.get_bulk(), m_segment.offset(),
            lb.get_bulk(), local.offset(), n, timeout_ms);
        MARGO_ASSERT(ret, margo_bulk_transfer);
        return n;
    }

  private:
    bulk_segment m_segment;
    endpoint m_endpoint;
};

class timed_remote_bulk
{
  public:
    timed_remote_bulk(const remote_bulk &rb, double timeout_ms)
        : m_remote(rb), m_timeout_ms(timeout_ms)
    {
    }
    std::size_t operator>>(const bulk_segment &dest) const
    {
        return m_remote.transfer(HG_BULK_PULL, dest, m_timeout_ms);
    }
    std::size_t operator<<(const bulk_segment &src) const
    {
        return m_remote.transfer(HG_BULK_PUSH, src, m_timeout_ms);
    }
    /* Started and returned in flight; wait() throws tl::timeout past the
     * deadline. */
    async_bulk_op pull_to(const bulk_segment &dest) const
    {
        return m_remote.itransfer(HG_BULK_PULL, dest, m_timeout_ms);
    }
    async_bulk_op push_from(const bulk_segment &src) const
    {
        return m_remote.itransfer(HG_BULK_PUSH, src, m_timeout_ms);
    }

  private:
    remote_bulk m_remote;
    double m_timeout_ms;
};

inline bulk_segment
bulk::select(std::size_t offset, std::size_t size) const
{
    return bulk_segment(*this, offset, size);
}
inline bulk_segment
bulk::operator()(std::size_t offset, std::size_t size) const
{
    return select(offset, size);
}
inline remote_bulk
bulk::on(const endpoint &ep) const
{
    return remote_bulk(bulk_segment(*this), ep);
}
inline std::size_t
bulk::operator>>(const remote_bulk &dest) const
{
    return dest << bulk_segment(*this);
}
inline std::size_t
bulk::operator<<(const remote_bulk &src) const
{
    return src >> bulk_segment(*this);
}
inline remote_bulk
bulk_segment::on(const endpoint &ep) const
{
    return remote_bulk(*this, ep);
}
inline std::size_t
bulk_segment::operator>>(const remote_bulk &dest) const
{
    return dest << *this;
}
inline std::size_t
bulk_segment::operator<<(const remote_bulk &src) const
{
    return src >> *this;
}
inline timed_remote_bulk
remote_bulk::timed(double timeout_ms) const
{
    return timed_remote_bulk(*this, timeout_ms);
}
template <typename Rep, typename Period>
inline timed_remote_bulk
remote_bulk::timed(const std::chrono::duration<Rep, Period> &d) const
{
    return timed(
        std::chrono::duration_cast<std::chrono::duration<double, std::milli>>(d)
            .count());
}

} // namespace thallium

#endif
