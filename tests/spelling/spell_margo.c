/*
 * spell_hg.c's matrix side over the Margo layer: the same three modes
 * (server INFO N, client INFO ADDR, refuse INFO ADDR), the same "spell"
 * RPC (x -> x + 1), with margo_init, margo_addr_lookup and margo_forward.
 */
#include "margo.h"
#include "mercury_macros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

MERCURY_GEN_PROC(spell_t, ((uint32_t) (x)))

static int served, wanted;

static void
spell_handler(hg_handle_t handle)
{
    margo_instance_id mid = margo_hg_handle_get_instance(handle);
    spell_t in, out;

    if (margo_get_input(handle, &in) == HG_SUCCESS) {
        out.x = in.x + 1;
        margo_free_input(handle, &in);
        margo_respond(handle, &out);
    }
    margo_destroy(handle);
    if (++served == wanted)
        margo_finalize(mid);
}
DEFINE_MARGO_RPC_HANDLER(spell_handler)

static int
run_client(margo_instance_id mid, hg_id_t id, const char *addr, int refuse)
{
    hg_addr_t peer = HG_ADDR_NULL;
    hg_handle_t h;
    spell_t in = {41}, out;
    hg_return_t ret = margo_addr_lookup(mid, addr, &peer);

    if (refuse) {
        if (ret != HG_PROTONOSUPPORT) {
            fprintf(stderr,
                    "spell_margo: lookup of %s returned %d, want "
                    "HG_PROTONOSUPPORT\n",
                    addr, (int) ret);
            return 1;
        }
        printf("refused\n");
        return 0;
    }
    if (ret != HG_SUCCESS) {
        fprintf(stderr, "spell_margo: lookup of %s: %d\n", addr, (int) ret);
        return 1;
    }
    if (margo_create(mid, peer, id, &h) != HG_SUCCESS)
        return 1;
    ret = margo_forward(h, &in);
    if (ret == HG_SUCCESS)
        ret = margo_get_output(h, &out);
    if (ret != HG_SUCCESS || out.x != 42) {
        fprintf(stderr, "spell_margo: RPC to %s: %d\n", addr, (int) ret);
        return 1;
    }
    margo_free_output(h, &out);
    margo_destroy(h);
    margo_addr_free(mid, peer);
    printf("ok\n");
    return 0;
}

int
main(int argc, char **argv)
{
    margo_instance_id mid;
    hg_id_t id;
    int server, rc = 0;

    if (argc != 4) {
        fprintf(stderr,
                "usage: %s server INFO N | client INFO ADDR | "
                "refuse INFO ADDR\n",
                argv[0]);
        return 2;
    }
    server = strcmp(argv[1], "server") == 0;
    mid = margo_init(argv[2], server ? MARGO_SERVER_MODE : MARGO_CLIENT_MODE, 0,
                     -1);
    if (mid == MARGO_INSTANCE_NULL) {
        fprintf(stderr, "spell_margo: margo_init(\"%s\") failed\n", argv[2]);
        return 1;
    }
    if (server) {
        hg_addr_t self;
        char buf[256];
        hg_size_t size = sizeof(buf);

        wanted = atoi(argv[3]);
        MARGO_REGISTER(mid, "spell", spell_t, spell_t, spell_handler);
        margo_addr_self(mid, &self);
        margo_addr_to_string(mid, buf, &size, self);
        margo_addr_free(mid, self);
        printf("addr %s\n", buf);
        fflush(stdout);
        margo_wait_for_finalize(mid);
        printf("served %d\n", served);
        return served == wanted ? 0 : 1;
    }
    id = MARGO_REGISTER(mid, "spell", spell_t, spell_t, NULL);
    rc = run_client(mid, id, argv[3], strcmp(argv[1], "refuse") == 0);
    margo_finalize(mid);
    return rc;
}
