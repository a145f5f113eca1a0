// spell_hg.c's matrix side over the Thallium layer: the same three modes
// (server INFO N, client INFO ADDR, refuse INFO ADDR) and the same "spell"
// RPC (x -> x + 1), with tl::engine, lookup and remote_procedure.
#include <thallium.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tl = thallium;

int
main(int argc, char **argv)
{
    if (argc != 4) {
        std::fprintf(stderr,
                     "usage: %s server INFO N | client INFO ADDR | "
                     "refuse INFO ADDR\n",
                     argv[0]);
        return 2;
    }
    std::string mode = argv[1];
    if (mode == "server") {
        int wanted = std::atoi(argv[3]), served = 0;
        tl::engine engine(argv[2], THALLIUM_SERVER_MODE);
        engine.define("spell", [&](const tl::request &req, uint32_t x) {
            req.respond(x + 1);
            if (++served == wanted)
                engine.finalize();
        });
        std::printf("addr %s\n",
                    static_cast<std::string>(engine.self()).c_str());
        std::fflush(stdout);
        engine.wait_for_finalize();
        std::printf("served %d\n", served);
        return served == wanted ? 0 : 1;
    }
    tl::engine engine(argv[2], THALLIUM_CLIENT_MODE);
    tl::remote_procedure spell = engine.define("spell");
    int rc = 1;
    try {
        tl::endpoint ep = engine.lookup(argv[3]);
        if (mode == "refuse") {
            std::fprintf(stderr, "spell_tl: lookup of %s succeeded\n", argv[3]);
        } else {
            uint32_t x = spell.on(ep)(uint32_t(41));
            if (x == 42) {
                std::printf("ok\n");
                rc = 0;
            } else {
                std::fprintf(stderr, "spell_tl: got %u\n", (unsigned) x);
            }
        }
    } catch (const tl::margo_exception &e) {
        if (mode == "refuse" && e.error() == HG_PROTONOSUPPORT) {
            std::printf("refused\n");
            rc = 0;
        } else {
            std::fprintf(stderr, "spell_tl: %s\n", e.what());
        }
    } catch (const tl::exception &e) {
        std::fprintf(stderr, "spell_tl: %s\n", e.what());
    }
    engine.finalize();
    return rc;
}
