// Both HG_Addr_lookup forms, and HG_VERSION(), compile as C++.
#include <mercury.h>
#include <mercury_request.h>

static hg_return_t
on_lookup(const struct hg_cb_info *info)
{
    return info->ret;
}

hg_return_t
both_forms(hg_class_t *hg_class, hg_context_t *context)
{
    hg_addr_t addr = HG_ADDR_NULL;
    hg_return_t ret = HG_Addr_lookup(hg_class, "sim://x", &addr);
    static_assert(HG_VERSION(2, 4) == 0x20004, "HG_VERSION(2, 4)");
    static_assert(NA_VERSION(5, 0) == 0x50000, "NA_VERSION(5, 0)");

    if (ret != HG_SUCCESS)
        return ret;
    HG_Addr_free(hg_class, addr);
    return HG_Addr_lookup(context, on_lookup, nullptr, "sim://x",
                          HG_OP_ID_IGNORE);
}
