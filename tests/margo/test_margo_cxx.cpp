/*
 * margo.h from C++: the headers compile warning-free under -Wall -Wextra
 * (this file is built with -Werror and -Wmissing-field-initializers), and
 * MARGO_INIT_INFO_INITIALIZER gives an all-null margo_init_info that
 * margo_init_ext() accepts. A plain program without a test framework:
 * exit status 0 on success.
 */
#include <margo.h>
#include <margo-timer.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,        \
                         __LINE__, #cond);                                     \
            std::exit(1);                                                      \
        }                                                                      \
    } while (0)

int
main()
{
    struct margo_init_info info = MARGO_INIT_INFO_INITIALIZER;
    const char *env = std::getenv("QS_TEST_INFO");
    const char *addr = env != nullptr ? env : "sim://cxx-server";

    CHECK(info.json_config == nullptr);
    CHECK(info.progress_pool == ABT_POOL_NULL);
    CHECK(info.rpc_pool == ABT_POOL_NULL);
    CHECK(info.hg_class == nullptr);
    CHECK(info.hg_context == nullptr);
    CHECK(info.hg_init_info == nullptr);
    CHECK(info.logger == nullptr);
    CHECK(info.monitor == nullptr);
    CHECK(info.parent_mid == MARGO_INSTANCE_NULL);

    info.json_config = "{\"use_progress_thread\":true}";
    margo_instance_id mid = margo_init_ext(addr, MARGO_SERVER_MODE, &info);
    CHECK(mid != MARGO_INSTANCE_NULL);
    char *config = margo_get_config(mid);
    CHECK(config != nullptr);
    /* A progress pool of its own, named as Margo names it. */
    CHECK(std::strstr(config, "\"name\":\"__pool_1__\"") != nullptr);
    std::free(config);
    CHECK(margo_rpc_id_get_provider_id(0) == MARGO_DEFAULT_PROVIDER_ID);
    margo_finalize(mid);
    std::puts("test_margo_cxx: ok");
    return 0;
}
