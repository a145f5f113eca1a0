/*
 * Shared by the simulated fabric's tests (test_sim*.c): two nodes with a
 * context each, a completion recorder and ways to drive progress.
 */
#ifndef TEST_SIM_H
#define TEST_SIM_H

#include "na.h"
#include "na_sim.h"

#include "conformance/na_peer.h"

/* Two nodes, "alpha" and "beta", one context each, and each one's address
 * of the other. */
struct pair {
    na_class_t *a, *b;
    na_context_t *ca, *cb;
    na_addr_t a_to_b, b_to_a;
};

void pair_open_opt(struct pair *p, const struct na_init_info *info);
void pair_open(struct pair *p);
/* Free the addresses, destroy the contexts, finalize both classes, and
 * check that the world is gone. */
void pair_close(struct pair *p);
/* Drive the pair the way HG does from one thread until *calls reaches
 * want (or a generous virtual-time budget runs out). */
void pair_drive(struct pair *p, const int *calls, int want);
/* Run the world dry and trigger everything, on both contexts. */
void pair_settle(struct pair *p);
/* An unexpected send from a to b on context id 0. */
void send_unexpected(struct pair *p, na_op_id_t *op, struct na_result *r,
                     const void *buf, size_t size, na_tag_t tag);
/* Create and register a handle for len bytes at buf. */
na_mem_handle_t registered(na_class_t *na_class, void *buf, size_t len,
                           unsigned long flags);
/* Serialize one of b's handles and deserialize it on a. */
na_mem_handle_t ship_handle(struct pair *p, na_mem_handle_t h);

/* The trace hash of dumped trace lines (comment lines skipped), computed
 * from the definition in docs/sim.md; *lines counts the lines. */
uint64_t trace_rehash(const char *dump, size_t len, uint64_t *lines);

/* Tests in test_sim_rma.c. */
void test_rma_wrong_node(void **state);
void test_wire_layout(void **state);

#endif /* TEST_SIM_H */
