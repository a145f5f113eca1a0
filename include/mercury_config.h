/*
 * Mercury's build configuration header (mercury_types.h includes it, as
 * Mercury's does), for programs that include it or test its macros: the version
 * (from mercury_types.h), the attribute and visibility macros Mercury's headers
 * use, and the HG_HAS_* features, each defined only where this library has the
 * feature as Mercury means it.
 *
 * Left undefined: HG_HAS_BOOST (MERCURY_GEN_PROC needs no Boost here, it
 * is always available), HG_HAS_XDR (the encoding is little-endian, not
 * XDR), HG_HAS_CHECKSUMS (checksums cover whole payloads through
 * hg_init_info.checksum_level; there is no per-field
 * hg_proc_checksum_update()), HG_HAS_DEBUG, HG_HAS_DIAG (the diagnostic
 * counters are always kept), HG_HAS_MULTI_PROGRESS (Mercury's promise that
 * several threads may call HG_Progress() on one context at once is not
 * made here).
 */
#ifndef MERCURY_CONFIG_H
#define MERCURY_CONFIG_H

#include "mercury_types.h"

#if defined(__GNUC__) || defined(__clang__)
#define HG_ATTR_ABI_EXPORT __attribute__((visibility("default")))
#define HG_ATTR_ABI_IMPORT __attribute__((visibility("default")))
#define HG_ATTR_ABI_HIDDEN __attribute__((visibility("hidden")))
#define HG_ATTR_WARN_UNUSED_RESULT __attribute__((warn_unused_result))
#ifndef HG_ATTR_UNUSED
#define HG_ATTR_UNUSED __attribute__((unused))
#endif
#define HG_ATTR_PACKED(x) __attribute__((packed)) x
#define HG_ATTR_ALIGNED(x, a) x __attribute__((aligned(a)))
#define HG_ATTR_PRINTF(_fmt, _firstarg)                                        \
    __attribute__((format(printf, _fmt, _firstarg)))
#define HG_ATTR_FALLTHROUGH __attribute__((fallthrough))
#else
#define HG_ATTR_ABI_EXPORT
#define HG_ATTR_ABI_IMPORT
#define HG_ATTR_ABI_HIDDEN
#define HG_ATTR_WARN_UNUSED_RESULT
#ifndef HG_ATTR_UNUSED
#define HG_ATTR_UNUSED
#endif
#define HG_ATTR_PACKED(x) x
#define HG_ATTR_ALIGNED(x, a) x
#define HG_ATTR_PRINTF(_fmt, _firstarg)
#define HG_ATTR_FALLTHROUGH
#endif

#define HG_WARN_UNUSED_RESULT HG_ATTR_WARN_UNUSED_RESULT
#define HG_UNUSED HG_ATTR_UNUSED
#define HG_PACKED(x) HG_ATTR_PACKED(x)
#define HG_FALLTHROUGH HG_ATTR_FALLTHROUGH
#ifndef HG_INLINE
#define HG_INLINE inline
#endif

/* libquicksilver is a shared library with hidden default visibility. */
#define HG_BUILD_SHARED_LIBS
#define HG_PUBLIC HG_ATTR_ABI_EXPORT
#define HG_PRIVATE HG_ATTR_ABI_HIDDEN

#endif /* MERCURY_CONFIG_H */
