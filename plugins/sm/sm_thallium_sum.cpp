/*
 * The Margo sum service of sm_margo_sum.c written with Thallium, to run as
 * two processes over shared memory: na+sm, or ofi+tcp with the engine's
 * JSON configuration {"mercury": {"auto_sm": true}}.
 *
 *   sm_thallium_sum server <address> <sm|net|any> [json]
 *   sm_thallium_sum client <server address> <address> [json]
 *
 * Same protocol and output as sm_margo_sum (run by run_sm_two.sh).
 */
#include <thallium.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace tl = thallium;

namespace
{

constexpr int kSums = 6;
constexpr std::int32_t kSizes[kSums] = {1, 10, 1000, 16384, 262144, 1 << 21};

int
serve(const std::string &address, const std::string &route,
      const std::string &json)
{
    tl::engine engine(address, THALLIUM_SERVER_MODE, json);
    int served = 0, errors = 0;

    engine.define("sm_tl_sum", [&](const tl::request &req, std::int32_t n,
                                   tl::bulk &remote) {
        tl::endpoint ep = req.get_endpoint();
        std::string src = ep;
        bool sm = src.rfind("na+sm://", 0) == 0;
        std::int64_t total = -1;

        if ((route == "sm" && !sm) || (route == "net" && sm)) {
            std::fprintf(stderr, "server: request from %s, want route %s\n",
                         src.c_str(), route.c_str());
            errors++;
        }
        try {
            std::vector<std::int32_t> v(static_cast<std::size_t>(n));
            std::vector<std::pair<void *, std::size_t>> seg{
                {v.data(), v.size() * sizeof(std::int32_t)}};
            tl::bulk local = engine.expose(seg, tl::bulk_mode::write_only);
            remote.on(ep) >> local;
            total = 0;
            for (std::int32_t x : v)
                total += x;
        } catch (const std::exception &e) {
            std::fprintf(stderr, "server: %s\n", e.what());
            errors++;
        }
        req.respond(total);
        if (++served == kSums)
            engine.finalize();
    });
    std::printf("listening at %s\n",
                static_cast<std::string>(engine.self()).c_str());
    std::fflush(stdout);
    engine.wait_for_finalize();
    if (errors != 0)
        return 1;
    std::printf("server OK (%d sums, route %s)\n", served, route.c_str());
    return 0;
}

int
call(tl::engine &engine, const tl::remote_procedure &sum,
     const tl::endpoint &server, std::int32_t n)
{
    std::vector<std::int32_t> v(static_cast<std::size_t>(n));
    std::int64_t want = 0;

    for (std::int32_t i = 0; i < n; i++) {
        v[static_cast<std::size_t>(i)] = i % 1000 - 300;
        want += v[static_cast<std::size_t>(i)];
    }
    std::vector<std::pair<void *, std::size_t>> seg{
        {v.data(), v.size() * sizeof(std::int32_t)}};
    tl::bulk b = engine.expose(seg, tl::bulk_mode::read_only);
    std::int64_t got = sum.on(server)(n, b);
    if (got != want) {
        std::fprintf(stderr, "client: sum of %d values = %lld, want %lld\n",
                     (int) n, (long long) got, (long long) want);
        return 1;
    }
    std::printf("client: sum of %d values = %lld\n", (int) n, (long long) got);
    return 0;
}

int
client(const std::string &server_addr, const std::string &address,
       const std::string &json)
{
    int rc = 0;

    try {
        tl::engine engine(address, THALLIUM_CLIENT_MODE, json);
        tl::remote_procedure sum = engine.define("sm_tl_sum");
        tl::endpoint server = engine.lookup(server_addr);

        for (std::int32_t n : kSizes)
            rc |= call(engine, sum, server, n);
        engine.finalize();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "client: %s\n", e.what());
        return 1;
    }
    if (rc == 0)
        std::printf("client OK\n");
    return rc;
}

} // namespace

int
main(int argc, char **argv)
{
    std::string json = argc > 4 ? argv[4] : "";

    try {
        if (argc >= 4 && std::strcmp(argv[1], "server") == 0)
            return serve(argv[2], argv[3], json);
        if (argc >= 4 && std::strcmp(argv[1], "client") == 0)
            return client(argv[2], argv[3], json);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    std::fprintf(stderr,
                 "usage: %s server <address> <sm|net|any> [json]\n"
                 "       %s client <server address> <address> [json]\n",
                 argv[0], argv[0]);
    return 2;
}
