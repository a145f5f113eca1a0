/*
 * libfabric, opened on first use (na_ofi_dl.h says why). The five
 * functions the plugin calls are resolved once; if the library cannot be
 * opened, each fails the way libfabric reports a missing provider and
 * the reason is logged once.
 */
#include "na_ofi_internal.h"

#include <dlfcn.h>
#include <pthread.h>

static struct {
    pthread_once_t once;
    bool ok;
    int (*fn_getinfo)(uint32_t, const char *, const char *, uint64_t,
                      const struct fi_info *, struct fi_info **);
    void (*fn_freeinfo)(struct fi_info *);
    struct fi_info *(*fn_dupinfo)(const struct fi_info *);
    int (*fn_fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*fn_strerror)(int);
} na_ofi_dl = {.once = PTHREAD_ONCE_INIT};

static void
na_ofi_dl_open(void)
{
    /* Kept open for the life of the process: libfabric's providers keep
     * threads and state that outlive any one class. */
    void *h = dlopen(NA_OFI_DL_LIBRARY, RTLD_NOW | RTLD_LOCAL);

    if (h == NULL) {
        qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR, "cannot open %s: %s",
               NA_OFI_DL_LIBRARY, dlerror());
        return;
    }
    *(void **) &na_ofi_dl.fn_getinfo = dlsym(h, "fi_getinfo");
    *(void **) &na_ofi_dl.fn_freeinfo = dlsym(h, "fi_freeinfo");
    *(void **) &na_ofi_dl.fn_dupinfo = dlsym(h, "fi_dupinfo");
    *(void **) &na_ofi_dl.fn_fabric = dlsym(h, "fi_fabric");
    *(void **) &na_ofi_dl.fn_strerror = dlsym(h, "fi_strerror");
    na_ofi_dl.ok = na_ofi_dl.fn_getinfo != NULL &&
                   na_ofi_dl.fn_freeinfo != NULL &&
                   na_ofi_dl.fn_dupinfo != NULL &&
                   na_ofi_dl.fn_fabric != NULL && na_ofi_dl.fn_strerror != NULL;
    if (!na_ofi_dl.ok)
        qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR,
               "%s lacks one of fi_getinfo, fi_freeinfo, fi_dupinfo, "
               "fi_fabric, fi_strerror",
               NA_OFI_DL_LIBRARY);
}

static bool
na_ofi_dl_ready(void)
{
    pthread_once(&na_ofi_dl.once, na_ofi_dl_open);
    return na_ofi_dl.ok;
}

int
fi_getinfo(uint32_t version, const char *node, const char *service,
           uint64_t flags, const struct fi_info *hints, struct fi_info **info)
{
    if (!na_ofi_dl_ready())
        return -FI_ENOSYS;
    return na_ofi_dl.fn_getinfo(version, node, service, flags, hints, info);
}

void
fi_freeinfo(struct fi_info *info)
{
    /* Only what libfabric allocated is ever freed here: it is open. */
    if (info != NULL && na_ofi_dl_ready())
        na_ofi_dl.fn_freeinfo(info);
}

struct fi_info *
fi_dupinfo(const struct fi_info *info)
{
    return na_ofi_dl_ready() ? na_ofi_dl.fn_dupinfo(info) : NULL;
}

int
fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
          void *context)
{
    if (!na_ofi_dl_ready())
        return -FI_ENOSYS;
    return na_ofi_dl.fn_fabric(attr, fabric, context);
}

const char *
fi_strerror(int errnum)
{
    return na_ofi_dl_ready() ? na_ofi_dl.fn_strerror(errnum)
                             : "libfabric could not be opened";
}
