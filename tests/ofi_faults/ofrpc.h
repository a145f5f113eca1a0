/*
 * The RPCs the ofi fault scenarios exchange, declared once so the client
 * role and the `--server` role of the same binary agree on names (hence
 * ids) and wire layouts.
 */
#ifndef OF_RPC_H
#define OF_RPC_H

#include "mercury.h"
#include "mercury_macros.h"
#include "mercury_proc_bulk.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Size of the buffer a pull moves in the bulk scenarios: large enough that
 * a kill sent after the "pull started" marker lands mid-transfer. */
#define OF_BIG_PULL ((uint64_t) 64 << 20)

/* of_echo answers value + 1; of_hold keeps its handle until of_release. */
MERCURY_GEN_PROC(of_val_t, ((uint64_t) (value)))

/* of_pull: the target pulls `size` bytes of `bulk` from the origin; with
 * cancel set it cancels its own transfer after one progress round. */
MERCURY_GEN_PROC(of_pull_in_t,
                 ((hg_bulk_t) (bulk))((uint64_t) (size))((uint32_t) (cancel)))
/* The transfer's result as the target saw it: its hg_return_t, how many
 * times its callback ran, and a hash of the bytes when it succeeded. */
MERCURY_GEN_PROC(of_pull_out_t,
                 ((int32_t) (ret))((uint32_t) (calls))((uint64_t) (hash)))

/* HG_Init, or with QS_OFI_FAULTS_AUTO_SM=1 HG_Init_opt with
 * hg_init_info.auto_sm: the scenarios on a network class whose same-node
 * peers are reached over shared memory. Every role of a run reads the
 * same environment. */
static inline hg_class_t *
of_hg_init(const char *info, hg_bool_t listen)
{
    const char *auto_sm = getenv("QS_OFI_FAULTS_AUTO_SM");
    struct hg_init_info ii = HG_INIT_INFO_INITIALIZER;

    if (auto_sm == NULL || strcmp(auto_sm, "1") != 0)
        return HG_Init(info, listen);
    ii.auto_sm = HG_TRUE;
    return HG_Init_opt(info, listen, &ii);
}

struct of_ids {
    hg_id_t echo, hold, release, pull, shutdown;
};

/* Register every RPC on a class; the handlers are given only by the
 * server role (NULL on the client side). */
static inline void
of_register(hg_class_t *cls, struct of_ids *ids, hg_rpc_cb_t echo,
            hg_rpc_cb_t hold, hg_rpc_cb_t release, hg_rpc_cb_t pull,
            hg_rpc_cb_t shutdown)
{
    ids->echo = HG_Register_name(cls, "of_echo", hg_proc_of_val_t,
                                 hg_proc_of_val_t, echo);
    ids->hold = HG_Register_name(cls, "of_hold", hg_proc_of_val_t,
                                 hg_proc_of_val_t, hold);
    ids->release = HG_Register_name(cls, "of_release", hg_proc_of_val_t,
                                    hg_proc_of_val_t, release);
    ids->pull = HG_Register_name(cls, "of_pull", hg_proc_of_pull_in_t,
                                 hg_proc_of_pull_out_t, pull);
    ids->shutdown = HG_Register_name(cls, "of_shutdown", hg_proc_of_val_t,
                                     hg_proc_of_val_t, shutdown);
}

/* The byte pattern origins expose, and the hash both sides compute over
 * it (FNV-1a), so a pull that claims success is checked byte for byte. */
static inline uint8_t
of_pattern(uint64_t i)
{
    return (uint8_t) ((i * 131u) ^ (i >> 12));
}

static inline uint64_t
of_hash(const uint8_t *p, uint64_t n)
{
    uint64_t h = 1469598103934665603ull;

    for (uint64_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

#endif /* OF_RPC_H */
