/*
 * HG helpers shared by hg_rate and hg_bw; see bench_hg.h.
 */
#include "bench_hg.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_names[BH_MODE_COUNT] = {"busy", "noblock",
                                                      "wait"};

const char *
bh_mode_name(enum bh_mode mode)
{
    return mode < BH_MODE_COUNT ? mode_names[mode] : "?";
}

bool
bh_mode_parse_list(const char *s, unsigned *mask)
{
    char buf[128], *tok, *save = NULL;
    unsigned m = 0;

    if (s == NULL || strlen(s) >= sizeof(buf))
        return false;
    if (strcmp(s, "all") == 0) {
        *mask = (1u << BH_MODE_COUNT) - 1;
        return true;
    }
    strcpy(buf, s);
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < BH_MODE_COUNT; i++)
            if (strcmp(tok, mode_names[i]) == 0)
                found = i;
        if (found < 0)
            return false;
        m |= 1u << found;
    }
    if (m == 0)
        return false;
    *mask = m;
    return true;
}

bool
bh_info_is_sim(const char *info)
{
    return strncmp(info, "sim", 3) == 0 &&
           (info[3] == '\0' || info[3] == ':' || info[3] == '+');
}

int
bh_opts_parse(struct bh_opts *o, const char *a, const char *v, bool *used_value)
{
    *used_value = true;
    if (strcmp(a, "--server") == 0) {
        o->role = BH_ROLE_SERVER;
        *used_value = false;
    } else if (strcmp(a, "--no-shutdown") == 0) {
        o->shutdown = false;
        *used_value = false;
    } else if (strcmp(a, "--client") == 0 && v != NULL) {
        o->role = BH_ROLE_CLIENT;
        o->server_addr = v;
    } else if (strcmp(a, "--addr-file") == 0 && v != NULL) {
        o->addr_file = v;
    } else if (strcmp(a, "--mode") == 0 && v != NULL) {
        o->mode = v;
    } else if (strcmp(a, "--server-seconds") == 0 && v != NULL) {
        if (!bu_parse_double(v, &o->server_seconds))
            return -1;
    } else if (strcmp(a, "--driver") == 0 && v != NULL) {
        o->driver = v;
        if (strcmp(v, "thread") != 0 && strcmp(v, "inline") != 0)
            return -1;
    } else if (a[0] != '-' && o->info == NULL) {
        o->info = a;
        *used_value = false;
    } else {
        return 0;
    }
    return 1;
}

int
bh_opts_finish(struct bh_opts *o, const char *tool)
{
    if (o->info == NULL)
        o->info = getenv("QS_BENCH_INFO");
    if (o->info == NULL || o->info[0] == '\0')
        o->info = "sim";
    if (bh_info_is_sim(o->info) && o->role != BH_ROLE_SELF) {
        fprintf(stderr,
                "%s: the simulated fabric lives inside one process; "
                "--server/--client need a real fabric\n",
                tool);
        return -1;
    }
    o->inline_driver = o->driver != NULL ? strcmp(o->driver, "inline") == 0
                                         : bh_info_is_sim(o->info);
    return 0;
}

int
bh_side_init(struct bh_side *side, const char *info, bool listen,
             enum bh_mode mode, const char *sim_name)
{
    struct hg_init_info ii = HG_INIT_INFO_INITIALIZER;
    const char *name = info;

    memset(side, 0, sizeof(*side));
    side->mode = mode;
    side->is_sim = bh_info_is_sim(info);
    if (mode == BH_MODE_NOBLOCK)
        ii.na_init_info.progress_mode = NA_NO_BLOCK;
    /* A bare "sim" gives an automatic node name, which is right for a
     * client; a server gets a fixed name so its address is predictable. */
    if (bh_info_is_sim(info) && listen && strstr(info, "://") == NULL)
        name = sim_name;
    side->cls = HG_Init_opt2(name, listen, HG_VERSION(2, 4), &ii);
    if (side->cls == NULL) {
        fprintf(stderr,
                "bench: HG_Init_opt2(\"%s\", listen=%d, mode=%s) "
                "failed\n",
                name, (int) listen, bh_mode_name(mode));
        return -1;
    }
    side->ctx = HG_Context_create(side->cls);
    if (side->ctx == NULL) {
        fprintf(stderr, "bench: HG_Context_create failed\n");
        HG_Finalize(side->cls);
        side->cls = NULL;
        return -1;
    }
    return 0;
}

int
bh_side_fini(struct bh_side *side)
{
    hg_return_t ret = HG_SUCCESS;

    if (side->ctx != NULL) {
        /* Responses and their completions may still be on their way out:
         * progress a little before destroying, and again if the context
         * says it is still busy. On the simulated fabric what is due has
         * happened in virtual time already, so a few passes suffice and
         * no real time is spent. */
        for (int attempt = 0; attempt < 5; attempt++) {
            if (side->is_sim) {
                for (int i = 0; i < 64; i++)
                    bh_progress(side->ctx, BH_MODE_BUSY);
            } else {
                double until = bu_now_s() + (attempt == 0 ? 0.02 : 0.5);
                while (bu_now_s() < until)
                    bh_progress(side->ctx, BH_MODE_BUSY);
            }
            ret = HG_Context_destroy(side->ctx);
            if (ret != HG_BUSY)
                break;
        }
        if (ret != HG_SUCCESS) {
            fprintf(stderr, "bench: HG_Context_destroy: %s\n",
                    HG_Error_to_string(ret));
            return -1;
        }
        side->ctx = NULL;
    }
    if (side->cls != NULL) {
        ret = HG_Finalize(side->cls);
        if (ret != HG_SUCCESS) {
            fprintf(stderr, "bench: HG_Finalize: %s\n",
                    HG_Error_to_string(ret));
            return -1;
        }
        side->cls = NULL;
    }
    return 0;
}

int
bh_self_string(const struct bh_side *side, char *buf, size_t size)
{
    hg_addr_t self = HG_ADDR_NULL;
    hg_size_t len = size;
    hg_return_t ret;

    ret = HG_Addr_self(side->cls, &self);
    if (ret == HG_SUCCESS)
        ret = HG_Addr_to_string(side->cls, buf, &len, self);
    if (self != HG_ADDR_NULL)
        HG_Addr_free(side->cls, self);
    if (ret != HG_SUCCESS) {
        fprintf(stderr, "bench: self address: %s\n", HG_Error_to_string(ret));
        return -1;
    }
    return 0;
}

unsigned
bh_progress(hg_context_t *ctx, enum bh_mode mode)
{
    unsigned int count = 0;
    hg_return_t ret;

    ret = HG_Progress(ctx, mode == BH_MODE_BUSY ? 0 : BH_PROGRESS_TIMEOUT_MS);
    if (ret != HG_SUCCESS && ret != HG_TIMEOUT) {
        /* Not fatal for a benchmark loop, but it must not go unnoticed. */
        static atomic_int reported;
        if (atomic_fetch_add(&reported, 1) < 5)
            fprintf(stderr, "bench: HG_Progress: %s\n",
                    HG_Error_to_string(ret));
    }
    /* Run everything queued: a zero trigger timeout never waits. */
    if (HG_Trigger(ctx, 0, 1024, &count) != HG_SUCCESS)
        count = 0;
    return count;
}

unsigned
bh_pump(const struct bh_pump *pump)
{
    unsigned n = bh_progress(pump->client->ctx, pump->client->mode);

    /* The inline server never waits: the client's progress already moved
     * virtual time (on sim) or spun (on a real fabric). */
    if (pump->inline_server != NULL)
        n += bh_progress(pump->inline_server->ctx, BH_MODE_BUSY);
    return n;
}

int
bh_pump_until(const struct bh_pump *pump, const volatile int *counter,
              int target, double max_seconds)
{
    double deadline = bu_now_s() + max_seconds;

    while (*counter < target) {
        if (bu_now_s() > deadline)
            return -1;
        bh_pump(pump);
    }
    return 0;
}

static void *
driver_main(void *arg)
{
    struct bh_driver *d = arg;

    while (!atomic_load_explicit(&d->stop, memory_order_relaxed))
        bh_progress(d->side->ctx, d->side->mode);
    return NULL;
}

int
bh_driver_start(struct bh_driver *d, struct bh_side *side)
{
    d->side = side;
    atomic_store(&d->stop, 0);
    if (pthread_create(&d->tid, NULL, driver_main, d) != 0) {
        fprintf(stderr, "bench: pthread_create failed\n");
        d->started = false;
        return -1;
    }
    d->started = true;
    return 0;
}

void
bh_driver_stop(struct bh_driver *d)
{
    if (!d->started)
        return;
    atomic_store(&d->stop, 1);
    pthread_join(d->tid, NULL);
    d->started = false;
}

/* ---- shutdown RPC ------------------------------------------------------- */

static hg_return_t
shutdown_responded(const struct hg_cb_info *info)
{
    atomic_int *state = info->arg;

    atomic_store(state, 2);
    return HG_SUCCESS;
}

static hg_return_t
shutdown_handler(hg_handle_t handle)
{
    const struct hg_info *hi = HG_Get_info(handle);
    atomic_int *state = HG_Registered_data(hi->hg_class, hi->id);
    hg_return_t ret;

    atomic_store(state, 1);
    ret = HG_Respond(handle, shutdown_responded, state, NULL);
    if (ret != HG_SUCCESS) {
        /* Nobody will hear back; the server stops anyway. */
        atomic_store(state, 2);
    }
    HG_Destroy(handle);
    return HG_SUCCESS;
}

hg_id_t
bh_register_shutdown(hg_class_t *cls, bool serve, atomic_int *state)
{
    hg_id_t id = HG_Register_name(cls, "qs_bench_shutdown", NULL, NULL,
                                  serve ? shutdown_handler : NULL);

    if (id != 0 && serve)
        HG_Register_data(cls, id, state, NULL);
    return id;
}

struct shutdown_wait {
    int done;
    hg_return_t ret;
};

static hg_return_t
shutdown_forwarded(const struct hg_cb_info *info)
{
    struct shutdown_wait *w = info->arg;

    w->ret = info->ret;
    w->done = 1;
    return HG_SUCCESS;
}

int
bh_send_shutdown(const struct bh_pump *pump, hg_addr_t server, hg_id_t id,
                 double max_seconds)
{
    struct shutdown_wait w = {0, HG_SUCCESS};
    hg_handle_t h;
    hg_return_t ret;

    ret = HG_Create(pump->client->ctx, server, id, &h);
    if (ret != HG_SUCCESS) {
        fprintf(stderr, "bench: HG_Create(shutdown): %s\n",
                HG_Error_to_string(ret));
        return -1;
    }
    ret = HG_Forward(h, shutdown_forwarded, &w, NULL);
    if (ret == HG_SUCCESS &&
        bh_pump_until(pump, &w.done, 1, max_seconds) != 0) {
        fprintf(stderr,
                "bench: the server did not answer the shutdown RPC "
                "within %.0f s\n",
                max_seconds);
        HG_Cancel(h);
        bh_pump_until(pump, &w.done, 1, 2.0);
    }
    if (ret == HG_SUCCESS && w.done)
        ret = w.ret;
    HG_Destroy(h);
    if (ret != HG_SUCCESS) {
        fprintf(stderr, "bench: shutdown RPC: %s\n", HG_Error_to_string(ret));
        return -1;
    }
    return 0;
}

int
bh_serve(struct bh_side *side, atomic_int *shutdown_state, double max_seconds)
{
    double deadline = bu_now_s() + max_seconds;
    double asked_at = 0.0;
    unsigned passes = 0;

    for (;;) {
        int st = atomic_load(shutdown_state);
        double now;

        if (st == 2)
            return 0;
        /* A busy pass is short, and a clock read is not free on a VM: the
         * bounds are checked on one pass in 64. */
        if (side->mode == BH_MODE_BUSY && st == 0 && ++passes % 64 != 0) {
            bh_progress(side->ctx, side->mode);
            continue;
        }
        now = bu_now_s();
        /* The response to the shutdown RPC gets a second to leave. */
        if (st == 1 && asked_at == 0.0)
            asked_at = now;
        if (st == 1 && now > asked_at + 1.0)
            return 0;
        if (now > deadline) {
            fprintf(stderr,
                    "bench: server stops after its %.0f s bound "
                    "without a shutdown RPC\n",
                    max_seconds);
            return 1;
        }
        bh_progress(side->ctx, side->mode);
    }
}

int
bh_publish_address(const char *tool, const struct bh_side *side,
                   const char *path)
{
    char addr[256];

    if (bh_self_string(side, addr, sizeof(addr)) != 0)
        return -1;
    printf("%s: server (%s mode) listening at %s\n", tool,
           bh_mode_name(side->mode), addr);
    fflush(stdout);
    if (path != NULL && bu_write_line_file(path, addr) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

int
bh_lookup(struct bh_side *client, const char *addr_string, hg_addr_t *addr)
{
    /* The three-argument lookup by its Mercury 2.x name, which both
     * libraries have (bench/compare_mercury.sh). */
    hg_return_t ret = HG_Addr_lookup2(client->cls, addr_string, addr);

    if (ret != HG_SUCCESS) {
        fprintf(stderr, "bench: HG_Addr_lookup2(\"%s\"): %s\n", addr_string,
                HG_Error_to_string(ret));
        return -1;
    }
    return 0;
}
