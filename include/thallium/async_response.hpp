/*
 * tl::async_response: an RPC sent with callable_remote_procedure::async().
 * wait() blocks until the response is there and returns it (throwing like
 * operator() would); received() says whether wait() would return at once.
 * A response not waited for is waited for by the destructor.
 */
#ifndef THALLIUM_ASYNC_RESPONSE_HPP
#define THALLIUM_ASYNC_RESPONSE_HPP

#include <memory>
#include <utility>

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
