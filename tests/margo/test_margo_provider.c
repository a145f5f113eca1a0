/*
 * Providers: two providers of the same RPC names in one server instance,
 * selected by the provider id that travels with each request; unknown
 * provider ids; registered names; provider identities.
 */
#include "tm.h"

#include <string.h>

MERCURY_GEN_PROC(tp_who_out_t,
                 ((int32_t) (provider))((int32_t) (name_ok))((uint16_t) (pid)))
MERCURY_GEN_PROC(tp_note_in_t, ((int32_t) (value)))

/* Answers with the provider's number (its registered data) and whether
 * margo_handle_get_name() gave the RPC's name. */
static void
tp_who(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    const struct hg_info *info = margo_get_info(h);
    int *number = margo_registered_data(mid, info->id);
    const char *name = margo_handle_get_name(h);
    tp_who_out_t out = {number ? *number : -1,
                        name != NULL && strcmp(name, "tp_who") == 0,
                        margo_rpc_id_get_provider_id(info->id)};

    margo_respond(h, &out);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tp_who)

struct tp_env {
    margo_instance_id server, client;
    hg_addr_t addr;
    hg_id_t client_id;
};

static int tp_numbers[3] = {101, 202, 303};

static void
tp_start(struct tp_env *env)
{
    char saddr[64], caddr[64];
    hg_id_t id1, id2;

    tm_addr_for(saddr, sizeof(saddr), "prov-server");
    tm_addr_for(caddr, sizeof(caddr), "prov-client");
    env->server = margo_init(saddr, MARGO_SERVER_MODE, 0, 0);
    env->client = margo_init(caddr, MARGO_CLIENT_MODE, 0, 0);
    assert_non_null(env->server);
    assert_non_null(env->client);
    id1 = MARGO_REGISTER_PROVIDER(env->server, "tp_who", void, tp_who_out_t,
                                  tp_who, 1, ABT_POOL_NULL);
    id2 = margo_provider_register_name(env->server, "tp_who", hg_proc_void,
                                       hg_proc_tp_who_out_t, tp_who_handler, 2,
                                       ABT_POOL_NULL);
    assert_int_not_equal(id1, 0);
    assert_int_not_equal(id2, 0);
    assert_int_not_equal(id1, id2);
    assert_hg_ok(margo_register_data(env->server, id1, &tp_numbers[1], NULL));
    assert_hg_ok(margo_register_data(env->server, id2, &tp_numbers[2], NULL));
    env->client_id =
        MARGO_REGISTER(env->client, "tp_who", void, tp_who_out_t, NULL);
    assert_int_not_equal(env->client_id, 0);
    env->addr = tm_lookup_self(env->client, env->server);
}

static void
tp_stop(struct tp_env *env)
{
    assert_hg_ok(margo_addr_free(env->client, env->addr));
    margo_finalize(env->client);
    margo_finalize(env->server);
}

/* Call provider `pid` the way `how` says; return the answer (or fail). */
static int32_t
tp_call(struct tp_env *env, uint16_t pid, int how, hg_return_t *ret_out)
{
    tp_who_out_t out;
    margo_request req;
    hg_handle_t h;
    hg_return_t ret;
    int32_t got = -1;

    assert_hg_ok(margo_create(env->client, env->addr, env->client_id, &h));
    switch (how) {
    case 0:
        ret = margo_provider_forward(pid, h, NULL);
        break;
    case 1:
        ret = margo_provider_forward_timed(pid, h, NULL, 5000);
        break;
    case 2:
        ret = margo_provider_iforward(pid, h, NULL, &req);
        if (ret == HG_SUCCESS)
            ret = margo_wait(req);
        break;
    default:
        ret = margo_provider_iforward_timed(pid, h, NULL, 5000, &req);
        if (ret == HG_SUCCESS)
            ret = margo_wait(req);
        break;
    }
    if (ret == HG_SUCCESS) {
        assert_hg_ok(margo_get_output(h, &out));
        assert_int_equal(out.name_ok, 1);
        assert_int_equal(out.pid, pid);
        got = out.provider;
        assert_hg_ok(margo_free_output(h, &out));
    }
    assert_hg_ok(margo_destroy(h));
    if (ret_out)
        *ret_out = ret;
    else
        assert_hg_ok(ret);
    return got;
}

static void
test_provider_selects_handler(void **state)
{
    struct tp_env env;
    hg_return_t ret;

    (void) state;
    tp_start(&env);
    for (int how = 0; how < 4; how++) {
        assert_int_equal(tp_call(&env, 1, how, NULL), 202);
        assert_int_equal(tp_call(&env, 2, how, NULL), 303);
    }
    /* A provider the server does not have, and the default provider,
     * which nobody registered there: HG_NOENTRY at the origin. */
    tp_call(&env, 7, 0, &ret);
    assert_hg_ret(ret, HG_NOENTRY);
    tp_call(&env, 0, 2, &ret);
    assert_hg_ret(ret, HG_NOENTRY);
    tp_call(&env, MARGO_DEFAULT_PROVIDER_ID, 0, &ret);
    assert_hg_ret(ret, HG_NOENTRY);
    /* The server still serves afterwards. */
    assert_int_equal(tp_call(&env, 2, 0, NULL), 303);
    tp_stop(&env);
}

static void
test_provider_handle_reuse(void **state)
{
    struct tp_env env;
    tp_who_out_t out;
    hg_handle_t h;

    (void) state;
    tp_start(&env);
    /* One handle, forwarded to one provider then another. */
    assert_hg_ok(margo_create(env.client, env.addr, env.client_id, &h));
    for (int i = 0; i < 4; i++) {
        assert_hg_ok(margo_provider_forward(1 + i % 2, h, NULL));
        assert_hg_ok(margo_get_output(h, &out));
        assert_int_equal(out.provider, tp_numbers[1 + i % 2]);
        assert_hg_ok(margo_free_output(h, &out));
    }
    /* margo_forward() goes to the default provider. */
    assert_hg_ret(margo_forward(h, NULL), HG_NOENTRY);
    assert_hg_ok(margo_destroy(h));
    tp_stop(&env);
}

static void
test_provider_registered_names(void **state)
{
    struct tp_env env;
    hg_id_t id1, id5, base;
    hg_bool_t flag;

    (void) state;
    tp_start(&env);
    assert_hg_ok(
        margo_provider_registered_name(env.server, "tp_who", 1, &id1, &flag));
    assert_true(flag);
    assert_hg_ok(
        margo_provider_registered_name(env.server, "tp_who", 5, &id5, &flag));
    assert_false(flag);
    assert_int_not_equal(id1, id5);
    assert_int_equal(margo_rpc_id_get_provider_id(id1), 1);
    assert_int_equal(margo_rpc_id_get_provider_id(id5), 5);
    assert_hg_ok(margo_registered_name(env.server, "tp_who", &base, &flag));
    assert_false(flag);
    assert_hg_ok(margo_registered_name(env.client, "tp_who", &base, &flag));
    assert_true(flag);
    assert_int_equal(base, env.client_id);
    assert_int_equal(margo_rpc_id_get_provider_id(base),
                     MARGO_DEFAULT_PROVIDER_ID);
    assert_int_equal(margo_rpc_id_get_provider_id(margo_provider_register_name(
                         env.client, "tp_other", hg_proc_void, hg_proc_void,
                         NULL, 0, ABT_POOL_NULL)),
                     0);
    assert_hg_ret(
        margo_provider_registered_name(env.server, "tp_who", 1, NULL, NULL),
        HG_INVALID_ARG);
    assert_string_equal(margo_rpc_get_name(env.server, id1), "tp_who");
    assert_string_equal(margo_rpc_get_name(env.client, base), "tp_who");
    assert_null(margo_rpc_get_name(env.server, id5));
    assert_null(margo_handle_get_name(HG_HANDLE_NULL));
    /* Deregistering one provider leaves the other. */
    assert_hg_ok(margo_deregister(env.server, id1));
    assert_null(margo_rpc_get_name(env.server, id1));
    hg_return_t ret;
    tp_call(&env, 1, 0, &ret);
    assert_hg_ret(ret, HG_NOENTRY);
    assert_int_equal(tp_call(&env, 2, 0, NULL), 303);
    tp_stop(&env);
}

static void
test_provider_identity(void **state)
{
    struct tp_env env;
    char buf[64];
    size_t size;

    (void) state;
    tp_start(&env);
    assert_null(margo_provider_registered_identity(env.server, 1));
    assert_hg_ok(margo_provider_register_identity(env.server, 1, "tp-kv"));
    assert_hg_ret(margo_provider_register_identity(env.server, 1, "other"),
                  HG_EXIST);
    assert_string_equal(margo_provider_registered_identity(env.server, 1),
                        "tp-kv");

    size = sizeof(buf);
    assert_hg_ok(
        margo_provider_get_identity(env.client, env.addr, 1, buf, &size));
    assert_string_equal(buf, "tp-kv");
    assert_int_equal(size, 6);
    size = 3;
    assert_hg_ret(
        margo_provider_get_identity(env.client, env.addr, 1, buf, &size),
        HG_NOMEM);
    assert_int_equal(size, 6);
    size = sizeof(buf);
    assert_hg_ret(
        margo_provider_get_identity(env.client, env.addr, 2, buf, &size),
        HG_NOENTRY);

    assert_hg_ok(margo_provider_deregister_identity(env.server, 1));
    assert_hg_ret(margo_provider_deregister_identity(env.server, 1),
                  HG_NOENTRY);
    size = sizeof(buf);
    assert_hg_ret(
        margo_provider_get_identity(env.client, env.addr, 1, buf, &size),
        HG_NOENTRY);
    tp_stop(&env);
}

/* The one-way RPC: records its value, never responds. */
static atomic_int tp_note_value;

static void
tp_note(hg_handle_t h)
{
    tp_note_in_t in;

    if (margo_get_input(h, &in) == HG_SUCCESS) {
        atomic_store(&tp_note_value, in.value);
        margo_free_input(h, &in);
    }
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tp_note)

/* An origin that made its RPC one-way, then forwards to a provider: the id
 * registered on the fly for that provider must be one-way too, or the
 * forward waits for a response that never comes. */
static void
test_provider_one_way_on_the_fly(void **state)
{
    struct tp_env env;
    tp_note_in_t in = {42};
    hg_id_t sid, cid, muxed;
    hg_bool_t flag;
    hg_handle_t h;
    int disabled = 0;

    (void) state;
    tp_start(&env);
    atomic_store(&tp_note_value, 0);
    sid = MARGO_REGISTER_PROVIDER(env.server, "tp_note", tp_note_in_t, void,
                                  tp_note, 3, ABT_POOL_NULL);
    assert_int_not_equal(sid, 0);
    assert_hg_ok(margo_registered_disable_response(env.server, sid, 1));
    cid = MARGO_REGISTER(env.client, "tp_note", tp_note_in_t, void, NULL);
    assert_hg_ok(margo_registered_disable_response(env.client, cid, 1));

    assert_hg_ok(margo_create(env.client, env.addr, cid, &h));
    /* Timed, so that a lost flag fails with HG_TIMEOUT instead of hanging
     * (virtual time on the simulator). */
    assert_hg_ok(margo_provider_forward_timed(3, h, &in, 2000));
    assert_hg_ok(margo_destroy(h));
    assert_hg_ok(margo_provider_registered_name(env.client, "tp_note", 3,
                                                &muxed, &flag));
    assert_true(flag);
    assert_hg_ok(
        margo_registered_disabled_response(env.client, muxed, &disabled));
    assert_int_equal(disabled, 1);
    /* The request did reach provider 3. */
    for (int i = 0; i < 10000 && atomic_load(&tp_note_value) == 0; i++)
        margo_thread_sleep(env.client, 1);
    assert_int_equal(atomic_load(&tp_note_value), 42);
    tp_stop(&env);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_provider_selects_handler),
        cmocka_unit_test(test_provider_handle_reuse),
        cmocka_unit_test(test_provider_registered_names),
        cmocka_unit_test(test_provider_identity),
        cmocka_unit_test(test_provider_one_way_on_the_fly),
    };

    return tm_main("margo_provider", tests, sizeof(tests) / sizeof(tests[0]));
}
