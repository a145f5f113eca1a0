/*
 * The `sum` over bulk example written against the HG and bulk API directly
 * (no Margo): the client exposes ten int32 values, the server pulls them with
 * HG_Bulk_transfer() and answers with their sum.
 *
 * The server and the client are small state machines driven by whoever
 * calls HG_Progress()/HG_Trigger() on their contexts, so the same code runs
 * as two processes (hg_sum_server, hg_sum_client) or in one thread over the
 * simulated fabric (hg_sum_sim).
 */
#ifndef HG_SUM_H
#define HG_SUM_H

#include <mercury.h>
#include <mercury_macros.h>

MERCURY_GEN_PROC(hg_sum_in_t, ((int32_t) (n))((hg_bulk_t) (bulk)))
MERCURY_GEN_PROC(hg_sum_out_t, ((int32_t) (ret)))

/* The server stops after this many RPCs: four clients of four RPCs. */
#define HG_SUM_TOTAL_RPCS 16
#define HG_SUM_RPCS_PER_CLIENT 4

struct hg_sum_server {
    hg_class_t *hg_class;
    hg_context_t *context;
    hg_id_t sum_id;
    int served; /* responses sent */
};

/* Create a listening class on `info` and register "sum". 0 or -1. */
int hg_sum_server_start(struct hg_sum_server *server, const char *info);
/* Whether it has answered HG_SUM_TOTAL_RPCS RPCs. */
int hg_sum_server_done(const struct hg_sum_server *server);
/* Destroy the context and finalize the class. 0 or -1. */
int hg_sum_server_stop(struct hg_sum_server *server);

struct hg_sum_client {
    hg_class_t *hg_class;
    hg_context_t *context;
    hg_id_t sum_id;
    hg_addr_t server;
};

int hg_sum_client_start(struct hg_sum_client *client, const char *info,
                        const char *server_addr);
int hg_sum_client_stop(struct hg_sum_client *client);

/*
 * Send one "sum" RPC with the ten values and wait for the answer, calling
 * progress(progress_arg) until it is in: the caller decides which contexts
 * move. Returns 0 and the sum in *result, or -1.
 */
int hg_sum_client_call(struct hg_sum_client *client, void (*progress)(void *),
                       void *progress_arg, int32_t *result);

/* HG_Progress() then HG_Trigger() on one context. */
void hg_sum_progress_one(hg_context_t *context, unsigned int timeout_ms);

#endif /* HG_SUM_H */
