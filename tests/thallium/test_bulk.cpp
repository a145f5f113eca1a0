/*
 * Bulk transfers through the Thallium layer: a bulk as an RPC argument,
 * pulls and pushes with sub-ranges on both sides (the smaller size moves),
 * byte-exact, with >> and << in both spellings, async pull_to / push_from
 * (async_bulk_op), timed transfers, eager
 * (small read-only) and RMA paths, permission errors, and a bulk dropped
 * while the asynchronous call that carries it is in flight.
 */
#include "tl_test.hpp"

#include <chrono>
#include <vector>

#include <thallium/serialization/stl/vector.hpp>

static tl::engine *g_server;

static std::vector<char>
pattern(size_t n, int seed)
{
    std::vector<char> v(n);
    for (size_t i = 0; i < n; i++)
        v[i] = (char) ((i * 7 + (size_t) seed) & 0xff);
    return v;
}

void
define_server(tl::engine &server)
{
    g_server = &server;
    /* Pull b(roff, rsize) into a zeroed local buffer of lsize at loff;
     * answer the count and the whole local buffer. */
    server.define("pull", [](const tl::request &req, tl::bulk &b, size_t roff,
                             size_t rsize, size_t lsize, size_t loff,
                             int form) {
        std::vector<char> local(lsize + loff, 0);
        std::vector<std::pair<void *, std::size_t>> seg{
            {local.data(), local.size()}};
        tl::bulk lb = g_server->expose(seg, tl::bulk_mode::write_only);
        tl::endpoint ep = req.get_endpoint();
        size_t n = 0;
        switch (form) {
        case 0:
            n = b(roff, rsize).on(ep) >> lb(loff, lsize);
            break;
        case 1:
            n = lb(loff, lsize) << b(roff, rsize).on(ep);
            break;
        case 2:
            n = b.on(ep)(roff, rsize).timed(std::chrono::seconds(10)) >>
                lb(loff, lsize);
            break;
        case 3: {
            /* In flight while the handler goes on; the op keeps the bulks. */
            tl::async_bulk_op op =
                b(roff, rsize).on(ep).pull_to(lb(loff, lsize));
            n = op.wait();
            CHECK_THROWS(tl::exception, op.wait(),
                         CHECK_EQ(e.code(), HG_INVALID_ARG));
            break;
        }
        default: {
            tl::async_bulk_op op = b(roff, rsize)
                                       .on(ep)
                                       .timed(std::chrono::seconds(10))
                                       .pull_to(lb(loff, lsize));
            tl::async_bulk_op moved = std::move(op);
            n = moved.wait();
            break;
        }
        }
        req.respond(n, local);
    });
    /* Push `data` (from offset loff of it) into b(roff, rsize). */
    server.define("push", [](const tl::request &req, tl::bulk &b, size_t roff,
                             size_t rsize, std::vector<char> &data, size_t loff,
                             int form) {
        std::vector<std::pair<void *, std::size_t>> seg{
            {data.data(), data.size()}};
        tl::bulk lb = g_server->expose(seg, tl::bulk_mode::read_only);
        tl::endpoint ep = req.get_endpoint();
        size_t n = 0;
        if (form == 0)
            n = lb(loff, data.size() - loff) >> b(roff, rsize).on(ep);
        else if (form == 1)
            n = b(roff, rsize).on(ep) << lb(loff, data.size() - loff);
        else if (form == 2)
            n = b(roff, rsize)
                    .on(ep)
                    .push_from(lb(loff, data.size() - loff))
                    .wait();
        else
            n = b(roff, rsize)
                    .on(ep)
                    .timed(std::chrono::seconds(10))
                    .push_from(lb(loff, data.size() - loff))
                    .wait();
        req.respond(n);
    });
    server.define("size_of", [](const tl::request &req, tl::bulk &b) {
        req.respond(b.size(), b.is_null());
    });
}

static void
check_pull(tl::engine &client, const tl::endpoint &server,
           const std::vector<char> &src, tl::bulk &b, size_t roff, size_t rsize,
           size_t lsize, size_t loff, int form)
{
    auto r = client.define("pull")
                 .on(server)(b, roff, rsize, lsize, loff, form)
                 .as<size_t, std::vector<char>>();
    size_t want = std::min(std::min(rsize, src.size() - roff), lsize);
    CHECK_EQ(std::get<0>(r), want);
    const std::vector<char> &got = std::get<1>(r);
    CHECK_EQ(got.size(), lsize + loff);
    for (size_t i = 0; i < got.size(); i++) {
        char expect = (i >= loff && i < loff + want) ? src[roff + i - loff] : 0;
        CHECK_EQ((int) got[i], (int) expect);
    }
}

void
run_client(tl::engine &client, const tl::endpoint &server, bool sim)
{
    (void) sim;
    CHECK(tl::bulk().is_null());
    CHECK_EQ(tl::bulk().size(), 0u);

    for (size_t size : {size_t(100), size_t(64 * 1024)}) {
        for (auto mode :
             {tl::bulk_mode::read_only, tl::bulk_mode::read_write}) {
            std::vector<char> src = pattern(size, (int) size);
            std::vector<std::pair<void *, std::size_t>> seg{
                {src.data(), src.size()}};
            tl::bulk b = client.expose(seg, mode);
            CHECK_EQ(b.size(), size);
            auto sz = client.define("size_of").on(server)(b).as<size_t, bool>();
            CHECK_EQ(std::get<0>(sz), size);
            CHECK(!std::get<1>(sz));
            for (int form = 0; form < 5; form++) {
                check_pull(client, server, src, b, 0, size, size, 0, form);
                /* The smaller side wins, either way round. */
                check_pull(client, server, src, b, 3, 45, 45, 13, form);
                check_pull(client, server, src, b, 3, 45, 20, 13, form);
                check_pull(client, server, src, b, 10, 5, 60, 2, form);
                /* Past the end: clamped to what the bulk holds. */
                check_pull(client, server, src, b, size - 4, 100, 50, 0, form);
            }
        }
    }

    /* Pushes into a sub-range of our memory, byte-exact around it. */
    for (int form = 0; form < 4; form++) {
        std::vector<char> dst(200, 'z');
        std::vector<std::pair<void *, std::size_t>> seg{
            {dst.data(), dst.size()}};
        tl::bulk b = client.expose(seg, tl::bulk_mode::write_only);
        std::vector<char> data = pattern(80, 5);
        size_t n = client.define("push").on(server)(b, size_t(50), size_t(30),
                                                    data, size_t(10), form);
        CHECK_EQ(n, 30u);
        for (size_t i = 0; i < dst.size(); i++) {
            char expect = (i >= 50 && i < 80) ? data[10 + i - 50] : 'z';
            CHECK_EQ((int) dst[i], (int) expect);
        }
    }

    /* Pushing into read-only memory is refused; the handler's exception
     * comes back as the error. */
    std::vector<char> ro(64, 'r');
    std::vector<std::pair<void *, std::size_t>> seg{{ro.data(), ro.size()}};
    tl::bulk rob = client.expose(seg, tl::bulk_mode::read_only);
    CHECK_THROWS(tl::exception,
                 client.define("push").on(server)(rob, size_t(0), size_t(8),
                                                  pattern(8, 1), size_t(0), 0),
                 CHECK(e.code() != HG_SUCCESS));
    CHECK_EQ(ro[0], 'r');

    /* The bulk goes out of scope right after an asynchronous call that
     * carries it (Warabi's non-blocking read does this): the push still
     * lands, since the call keeps the registration until it completes. */
    {
        std::vector<char> dst(4096, 'z');
        std::vector<char> data = pattern(4096, 9);
        tl::async_response resp = [&]() {
            std::vector<std::pair<void *, std::size_t>> dseg{
                {dst.data(), dst.size()}};
            tl::bulk dropped = client.expose(dseg, tl::bulk_mode::write_only);
            return client.define("push").on(server).async(
                dropped, size_t(0), size_t(4096), data, size_t(0), 0);
        }();
        size_t n = resp.wait();
        CHECK_EQ(n, 4096u);
        CHECK(dst == data);
    }

    /* Copies share the handle. */
    tl::bulk copy = rob;
    CHECK_EQ(copy.size(), 64u);
    tl::bulk moved = std::move(copy);
    CHECK(copy.is_null());
    CHECK_EQ(moved.size(), 64u);
}

int
main(int argc, char **argv)
{
    return tl_test_main(argc, argv);
}
