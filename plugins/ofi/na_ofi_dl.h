/*
 * libfabric is opened with dlopen() the first time the ofi plugin needs
 * it, not linked: the library must not pay for libfabric at process start.
 *
 * Why: Debian's libfabric links its psm provider, whose libinfinipath
 * runs a constructor at load time that calibrates the CPU clock with
 * hundreds of 125 us sleeps; every process linked to libfabric waited
 * about 0.2 s in it before main(), whether it used ofi or not. A service
 * tested on the simulated fabric (qs-sweep runs it once per seed) paid
 * that at every run, with its cores idle (docs/plugin-ofi.md).
 *
 * This header is included before libfabric's: it renames the five
 * functions libfabric exports that the plugin calls (the rest of its API
 * is inline, through the objects these return) to loaders in
 * na_ofi_dl.c, which resolve the real ones on first use.
 */
#ifndef NA_OFI_DL_H
#define NA_OFI_DL_H

#define fi_getinfo na_ofi_dl_getinfo
#define fi_freeinfo na_ofi_dl_freeinfo
#define fi_dupinfo na_ofi_dl_dupinfo
#define fi_fabric na_ofi_dl_fabric
#define fi_strerror na_ofi_dl_strerror

/* The shared object opened (its ABI has been 1 since libfabric 1.0). */
#define NA_OFI_DL_LIBRARY "libfabric.so.1"

#endif
