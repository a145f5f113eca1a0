/*
 * One side of the transport-spelling matrix over the HG layer
 * (run_spelling.sh pairs every server spelling with every client one):
 *
 *   spell_hg server INFO N      listen on INFO, print "addr <address>",
 *                               answer N "spell" RPCs (x -> x + 1), exit 0
 *   spell_hg client INFO ADDR   look ADDR up from a class on INFO, forward
 *                               one RPC, check the answer, print "ok"
 *   spell_hg refuse INFO ADDR   the lookup must fail at once with
 *                               HG_PROTONOSUPPORT; print "refused"
 *
 * Exit 0 only when the side did what it says; every failure names itself.
 */
#include "mercury.h"
#include "mercury_macros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

MERCURY_GEN_PROC(spell_t, ((uint32_t) (x)))

static int served;

/* An RPC counts as served once its response is sent. */
static hg_return_t
respond_cb(const struct hg_cb_info *info)
{
    if (info->ret == HG_SUCCESS)
        served++;
    HG_Destroy(info->info.respond.handle);
    return HG_SUCCESS;
}

static hg_return_t
spell_handler(hg_handle_t handle)
{
    spell_t in, out;
    hg_return_t ret = HG_Get_input(handle, &in);

    if (ret == HG_SUCCESS) {
        out.x = in.x + 1;
        HG_Free_input(handle, &in);
        ret = HG_Respond(handle, respond_cb, NULL, &out);
    }
    if (ret != HG_SUCCESS)
        HG_Destroy(handle);
    return ret;
}

static hg_return_t
lookup_cb(const struct hg_cb_info *info)
{
    *(hg_addr_t *) info->arg = info->info.lookup.addr;
    return HG_SUCCESS;
}

struct reply {
    int done;
    hg_return_t ret;
    uint32_t x;
};

static hg_return_t
forward_cb(const struct hg_cb_info *info)
{
    struct reply *r = info->arg;
    spell_t out;

    r->ret = info->ret;
    if (r->ret == HG_SUCCESS) {
        r->ret = HG_Get_output(info->info.forward.handle, &out);
        if (r->ret == HG_SUCCESS) {
            r->x = out.x;
            HG_Free_output(info->info.forward.handle, &out);
        }
    }
    r->done = 1;
    return HG_SUCCESS;
}

static void
progress(hg_context_t *ctx)
{
    unsigned int n;

    HG_Progress(ctx, 100);
    HG_Trigger(ctx, 0, 16, &n);
}

static int
run_server(hg_class_t *cls, hg_context_t *ctx, int n)
{
    hg_addr_t self;
    char buf[256];
    hg_size_t size = sizeof(buf);

    if (HG_Addr_self(cls, &self) != HG_SUCCESS ||
        HG_Addr_to_string(cls, buf, &size, self) != HG_SUCCESS) {
        fprintf(stderr, "spell_hg: no self address\n");
        return 1;
    }
    HG_Addr_free(cls, self);
    printf("addr %s\n", buf);
    fflush(stdout);
    while (served < n)
        progress(ctx);
    printf("served %d\n", served);
    return 0;
}

static int
run_client(hg_class_t *cls, hg_context_t *ctx, hg_id_t id, const char *addr,
           int refuse)
{
    hg_addr_t peer = HG_ADDR_NULL;
    hg_handle_t h;
    struct reply r = {0, HG_SUCCESS, 0};
    spell_t in = {41};
    hg_return_t ret = HG_Addr_lookup1(ctx, lookup_cb, &peer, addr, NULL);

    if (refuse) {
        if (ret != HG_PROTONOSUPPORT) {
            fprintf(stderr,
                    "spell_hg: lookup of %s returned %s, want "
                    "HG_PROTONOSUPPORT\n",
                    addr, HG_Error_to_string(ret));
            return 1;
        }
        printf("refused\n");
        return 0;
    }
    if (ret != HG_SUCCESS) {
        fprintf(stderr, "spell_hg: lookup of %s: %s\n", addr,
                HG_Error_to_string(ret));
        return 1;
    }
    while (peer == HG_ADDR_NULL)
        progress(ctx);
    if (HG_Create(ctx, peer, id, &h) != HG_SUCCESS ||
        HG_Forward(h, forward_cb, &r, &in) != HG_SUCCESS) {
        fprintf(stderr, "spell_hg: cannot forward\n");
        return 1;
    }
    while (!r.done)
        progress(ctx);
    HG_Destroy(h);
    HG_Addr_free(cls, peer);
    if (r.ret != HG_SUCCESS || r.x != 42) {
        fprintf(stderr, "spell_hg: RPC to %s: %s, x=%u\n", addr,
                HG_Error_to_string(r.ret), (unsigned) r.x);
        return 1;
    }
    printf("ok\n");
    return 0;
}

int
main(int argc, char **argv)
{
    int server, rc;
    hg_class_t *cls;
    hg_context_t *ctx;
    hg_id_t id;

    if (argc != 4 ||
        (strcmp(argv[1], "server") != 0 && strcmp(argv[1], "client") != 0 &&
         strcmp(argv[1], "refuse") != 0)) {
        fprintf(stderr,
                "usage: %s server INFO N | client INFO ADDR | "
                "refuse INFO ADDR\n",
                argv[0]);
        return 2;
    }
    server = strcmp(argv[1], "server") == 0;
    cls = HG_Init(argv[2], server ? HG_TRUE : HG_FALSE);
    if (cls == NULL) {
        fprintf(stderr, "spell_hg: HG_Init(\"%s\") failed\n", argv[2]);
        return 1;
    }
    ctx = HG_Context_create(cls);
    id = MERCURY_REGISTER(cls, "spell", spell_t, spell_t,
                          server ? spell_handler : NULL);
    if (server)
        rc = run_server(cls, ctx, atoi(argv[3]));
    else
        rc = run_client(cls, ctx, id, argv[3], strcmp(argv[1], "refuse") == 0);
    if (HG_Context_destroy(ctx) != HG_SUCCESS ||
        HG_Finalize(cls) != HG_SUCCESS) {
        fprintf(stderr, "spell_hg: teardown failed\n");
        rc = 1;
    }
    return rc;
}
