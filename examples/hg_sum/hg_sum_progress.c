/*
 * Progress shared by the server, the client and the single-process runner.
 */
#include "hg_sum.h"

void
hg_sum_progress_one(hg_context_t *context, unsigned int timeout_ms)
{
    unsigned int count;

    HG_Progress(context, timeout_ms);
    HG_Trigger(context, 0, 64, &count);
}
