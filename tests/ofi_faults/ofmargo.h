/*
 * The kill scenarios with a Margo client (ofmargo.c): a plain
 * margo_forward to a server SIGKILLed while its handler holds the request
 * (om_kill_in_handler) or while it pulls the client's memory
 * (om_kill_in_bulk) returns HG_HOSTUNREACH within bound_ms of the kill.
 * Each fails the current cmocka test otherwise.
 */
#ifndef OF_MARGO_H
#define OF_MARGO_H

void om_kill_in_handler(const char *info, unsigned bound_ms);
void om_kill_in_bulk(const char *info, unsigned bound_ms);

/* A partition between two hosts (tests/netns): a plain margo_forward held
 * by the server's handler while `link` is down for down_ms, then up. With
 * dead_bound_ms 0 (a partition shorter than the liveness bound) the call
 * must still be pending when the link returns and then complete with the
 * server's answer within heal_bound_ms; otherwise it must end with
 * HG_HOSTUNREACH within dead_bound_ms of the link going down (its probe
 * went unanswered), exactly once, while the link is still down. */
void om_partition(const char *info, const char *link, unsigned down_ms,
                  unsigned heal_bound_ms, unsigned dead_bound_ms);

#endif /* OF_MARGO_H */
