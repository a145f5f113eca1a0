/*
 * kv_fuzz: arbitrary bytes as the serialized input of kv_put, through the
 * service's real request path on the simulated fabric (include/qs_fuzz.h).
 */
#include <qs_fuzz.h>

#include "kv.h"

static int
kv_fuzz_register(margo_instance_id mid, void *arg)
{
    (void) arg;
    return kv_register(mid);
}
static void
kv_fuzz_reset(void *arg)
{
    (void) arg;
    kv_reset();
}
static const char *const kv_rpcs[] = {"kv_put", "kv_get", "kv_read", NULL};
static const struct qs_fuzz_service kv_service = {.margo_register =
                                                      kv_fuzz_register,
                                                  .reset = kv_fuzz_reset,
                                                  .rpc_names = kv_rpcs};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#ifdef KV_FUZZ_SEQUENCE
    return qs_fuzz_sequence(&kv_service, data, size);
#else
    return qs_fuzz_rpc(&kv_service, "kv_put", data, size);
#endif
}
