/*
 * The RPCs the compat programs share, declared as Mercury's tutorials
 * declare theirs: "sum" adds two integers, "quit" stops the server.
 */
#ifndef COMPAT_RPC_H
#define COMPAT_RPC_H

#include <mercury.h>
#include <mercury_macros.h>

MERCURY_GEN_PROC(sum_in_t, ((int32_t) (x))((int32_t) (y)))
MERCURY_GEN_PROC(sum_out_t, ((int32_t) (ret)))

/* Over sim, client and server share one process: a client linked with
 * compat_server.c starts the server on a thread before main() when
 * QS_COMPAT_SIM_SERVER names its address. */
void compat_server_register(hg_class_t *hg_class);

#endif /* COMPAT_RPC_H */
