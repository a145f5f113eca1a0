/*
 * Groups of sub-operations (hg_opgroup.h): the count, the open flag and the
 * first error, under the owner's lock.
 */
#include "core/hg_opgroup.h"

#include <assert.h>

void
hg_opgroup_init(struct hg_opgroup *group)
{
    group->running = 0;
    group->open = false;
    group->ret = HG_SUCCESS;
}

void
hg_opgroup_open(struct hg_opgroup *group)
{
    group->running = 0;
    group->open = true;
    group->ret = HG_SUCCESS;
}

void
hg_opgroup_arm(struct hg_opgroup *group, unsigned int n)
{
    assert(n > 0);
    group->running = n;
    group->open = false;
    group->ret = HG_SUCCESS;
}

void
hg_opgroup_add(struct hg_opgroup *group, unsigned int n)
{
    /* Adding to a group that ended would end it a second time. */
    assert(hg_opgroup_busy(group));
    group->running += n;
}

bool
hg_opgroup_close(struct hg_opgroup *group)
{
    assert(group->open);
    group->open = false;
    return group->running == 0;
}

bool
hg_opgroup_fail(struct hg_opgroup *group, hg_return_t ret)
{
    if (ret != HG_SUCCESS && group->ret == HG_SUCCESS) {
        group->ret = ret;
        return true;
    }
    return false;
}

enum hg_opgroup_step
hg_opgroup_end(struct hg_opgroup *group, hg_return_t ret)
{
    bool first_error = hg_opgroup_fail(group, ret);

    assert(group->running > 0);
    group->running--;
    if (group->running == 0 && !group->open)
        return HG_OPGROUP_DONE;
    return first_error ? HG_OPGROUP_FIRST_ERROR : HG_OPGROUP_RUNNING;
}
