/*
 * The server side of the suite (rpc_server.c), for the harness and for
 * tests that register a handler on the client class.
 */
#ifndef CT_SERVER_H
#define CT_SERVER_H

#include "mercury.h"

#include <stddef.h>

/* The CT_RPC_ADD handler, registered on the client class by the tests that
 * forward to self. */
hg_return_t ct_add_handler(hg_handle_t handle);

/* Whether a CT_RPC_SHUTDOWN request reached this server class. */
int ct_server_shutdown_requested(hg_class_t *cls);

/* Non-zero (and a message) if the server class still holds requests or saw
 * a duplicate or missing bulk callback or a failed respond. */
int ct_server_problems(hg_class_t *cls, char *msg, size_t size);

/* The number of responds this server class posted (into *posted) and a
 * counter of those whose callback has run, to drive until they meet; NULL
 * for a class without server state. */
const int *ct_server_responds(hg_class_t *cls, int *posted);

/* One line about the server's state, for diagnosing a stalled run. */
void ct_server_describe(hg_class_t *cls, char *msg, size_t size);

#endif /* CT_SERVER_H */
