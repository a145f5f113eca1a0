/*
 * tl::async_response: an RPC sent with callable_remote_procedure::async().
 * wait() blocks until the response is there and returns it (throwing like
 * operator() would); received() says whether wait() would return at once.
 * A response not waited for is waited for by the destructor.
 * async_response::wait_any(begin, end, completed) waits for the first of
 * several (margo_wait_any()).
 */
#ifndef THALLIUM_ASYNC_RESPONSE_HPP
#define THALLIUM_ASYNC_RESPONSE_HPP

#include <cstddef>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include <thallium/detail/handle_ref.hpp>
#include <thallium/packed_data.hpp>

namespace thallium
{

class async_response
{
  public:
    async_response(margo_request req, std::shared_ptr<detail::handle_ref> ref)
        : m_request(req), m_ref(std::move(ref))
    {
    }
    async_response(const async_response &) = delete;
    async_response &operator=(const async_response &) = delete;
    async_response(async_response &&other) noexcept
        : m_request(std::exchange(other.m_request, MARGO_REQUEST_NULL)),
          m_ref(std::move(other.m_ref)), m_waited(other.m_waited)
    {
    }
    async_response &operator=(async_response &&other) noexcept
    {
        if (this != &other) {
            finish();
            m_request = std::exchange(other.m_request, MARGO_REQUEST_NULL);
            m_ref = std::move(other.m_ref);
            m_waited = other.m_waited;
        }
        return *this;
    }
    ~async_response()
    {
        finish();
    }

    packed_data<> wait()
    {
        if (m_waited || m_request == MARGO_REQUEST_NULL)
            throw exception("async_response waited for twice", HG_INVALID_ARG);
        m_waited = true;
        hg_return_t ret =
            margo_wait(std::exchange(m_request, MARGO_REQUEST_NULL));
        MARGO_ASSERT(ret, margo_wait);
        if (m_ref->disabled_response)
            return packed_data<>();
        return packed_data<>(m_ref, false);
    }

    /* Wait for the first of [begin, end) to complete (responses already
     * waited for are skipped): `completed` points at it, and its result is
     * returned (or thrown) as wait() would. All of them must belong to
     * one engine. */
    template <typename Iterator>
    static packed_data<> wait_any(const Iterator &begin, const Iterator &end,
                                  Iterator &completed)
    {
        std::vector<margo_request> reqs;
        bool any = false;
        for (Iterator it = begin; it != end; ++it) {
            reqs.push_back(it->m_request);
            any = any || it->m_request != MARGO_REQUEST_NULL;
        }
        completed = end;
        if (!any)
            throw exception("async_response::wait_any: nothing to wait for",
                            HG_INVALID_ARG);
        std::size_t index = 0;
        hg_return_t ret = margo_wait_any(reqs.size(), reqs.data(), &index);
        completed = begin;
        std::advance(completed, index);
        async_response &r = *completed;
        r.m_request = MARGO_REQUEST_NULL;
        r.m_waited = true;
        MARGO_ASSERT(ret, margo_wait_any);
        if (r.m_ref->disabled_response)
            return packed_data<>();
        return packed_data<>(r.m_ref, false);
    }

    bool received() const
    {
        if (m_request == MARGO_REQUEST_NULL)
            return m_waited;
        int flag = 0;
        hg_return_t ret = margo_test(m_request, &flag);
        MARGO_ASSERT(ret, margo_test);
        return flag != 0;
    }

  private:
    void finish() noexcept
    {
        if (m_request != MARGO_REQUEST_NULL && m_ref &&
            !m_ref->state->finalized.load())
            margo_wait(m_request);
        m_request = MARGO_REQUEST_NULL;
    }

    margo_request m_request = MARGO_REQUEST_NULL;
    std::shared_ptr<detail::handle_ref> m_ref;
    bool m_waited = false;
};

} // namespace thallium

#endif
