/*
 * Quicksilver NA (network abstraction) public types.
 *
 * The names, values and order follow the documented NA API so that programs
 * written against it compile unchanged.
 */
#ifndef NA_TYPES_H
#define NA_TYPES_H

#include <limits.h> /* as in Mercury's na_types.h */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The attribute and visibility macros Mercury's na_config.h gives every
 * includer of na_types.h. (na_config.h itself is not installed; NA_HAS_SM
 * and NA_HAS_OFI, which depend on the build, are not defined.) */
#if defined(__GNUC__) || defined(__clang__)
#define NA_PUBLIC __attribute__((visibility("default")))
#define NA_PRIVATE __attribute__((visibility("hidden")))
#define NA_UNUSED __attribute__((unused))
#define NA_WARN_UNUSED_RESULT __attribute__((warn_unused_result))
#define NA_PACKED(x) __attribute__((packed)) x
#define NA_ALIGNED(x, a) x __attribute__((aligned(a)))
#define NA_PRINTF(_fmt, _firstarg)                                             \
    __attribute__((format(printf, _fmt, _firstarg)))
#define NA_FALLTHROUGH __attribute__((fallthrough))
#else
#define NA_PUBLIC
#define NA_PRIVATE
#define NA_UNUSED
#define NA_WARN_UNUSED_RESULT
#define NA_PACKED(x) x
#define NA_ALIGNED(x, a) x
#define NA_PRINTF(_fmt, _firstarg)
#define NA_FALLTHROUGH
#endif
#define NA_INLINE inline
#define NA_BUILD_SHARED_LIBS

/* Opaque objects. */
typedef struct na_class na_class_t;     /* one per initialized plugin   */
typedef struct na_context na_context_t; /* one completion queue         */
typedef struct na_addr *na_addr_t;      /* plugin-defined address       */
typedef struct na_mem_handle *na_mem_handle_t; /* plugin-defined region */
typedef struct na_op_id na_op_id_t; /* reusable operation id        */

typedef uint32_t na_tag_t;
typedef uint64_t na_offset_t;
typedef bool na_bool_t;

#define NA_TRUE true
#define NA_FALSE false

/* Version of the NA API this library implements: NA 6.0.0, the one in
 * Mercury 2.4.1. */
#define NA_VERSION_MAJOR 6
#define NA_VERSION_MINOR 0
#define NA_VERSION_PATCH 0
/* An API version as NA_Initialize_opt2() takes it: NA_VERSION(5, 0). */
#define NA_VERSION(major, minor) (((major) << 16) | (minor))
#define NA_MAJOR(version) ((version) >> 16)
#define NA_MINOR(version) (0xffff & (version))
#define NA_VERSION_GE(v1, v2) ((v1) >= (v2))
#define NA_VERSION_LT(v1, v2) ((v1) < (v2))
#define NA_ADDR_NULL ((na_addr_t) NULL)
#define NA_MEM_HANDLE_NULL ((na_mem_handle_t) NULL)
#define NA_OP_ID_NULL ((na_op_id_t *) NULL)

/*
 * Return codes, as in Mercury 2.4: a one-argument X-macro table that
 * generates the enum (NA_RETURN_MAX last) and NA_Error_to_string()'s names
 * ("NA_TIMEOUT"), so the two can never drift apart. A program may expand
 * it with its own one-argument X. The order is Mercury's; HG's codes share
 * the first 24 entries.
 */
#define NA_RETURN_VALUES                                                       \
    X(NA_SUCCESS)        /* success */                                         \
    X(NA_PERMISSION)     /* operation not permitted */                         \
    X(NA_NOENTRY)        /* no such file or directory */                       \
    X(NA_INTERRUPT)      /* operation interrupted */                           \
    X(NA_AGAIN)          /* operation must be retried */                       \
    X(NA_NOMEM)          /* out of memory */                                   \
    X(NA_ACCESS)         /* permission denied */                               \
    X(NA_FAULT)          /* bad address */                                     \
    X(NA_BUSY)           /* device or resource busy */                         \
    X(NA_EXIST)          /* entry already exists */                            \
    X(NA_NODEV)          /* no such device */                                  \
    X(NA_INVALID_ARG)    /* invalid argument */                                \
    X(NA_PROTOCOL_ERROR) /* protocol error */                                  \
    X(NA_OVERFLOW)       /* value too large */                                 \
    X(NA_MSGSIZE)        /* message size too long */                           \
    X(NA_PROTONOSUPPORT) /* protocol not supported */                          \
    X(NA_OPNOTSUPPORTED) /* operation not supported on endpoint */             \
    X(NA_ADDRINUSE)      /* address already in use */                          \
    X(NA_ADDRNOTAVAIL)   /* cannot assign requested address */                 \
    X(NA_HOSTUNREACH)    /* cannot reach host during operation */              \
    X(NA_TIMEOUT)        /* operation reached timeout */                       \
    X(NA_CANCELED)       /* operation canceled */                              \
    X(NA_IO_ERROR)       /* input/output error */                              \
    X(NA_HOSTFIREWALL)   /* host firewall refused the operation */             \
    X(NA_RETURN_MAX)

#define X(a) a,
typedef enum na_return { NA_RETURN_VALUES } na_return_t;
#undef X

/* Preferred address format (struct na_init_info.addr_format), with
 * Mercury's values. Plugins here pick their own format: only NA_ADDR_UNSPEC
 * and NA_ADDR_IPV4 (what tcp, ofi and sm use) are accepted; NA_ADDR_IPV6
 * and NA_ADDR_NATIVE are refused by NA_Initialize_opt*() with the reason
 * logged. */
enum na_addr_format {
    NA_ADDR_UNSPEC, /* the plugin chooses */
    NA_ADDR_IPV4,   /* IPv4 where the plugin has IP addresses */
    NA_ADDR_IPV6,   /* IPv6 (refused) */
    NA_ADDR_NATIVE  /* the fabric's native addressing (refused) */
};

/* Flags of NA_Addr_deserialize() in Mercury 2.4; none is honoured here
 * (NA_Has_opt_feature(NA_OPT_FIREWALL_ADDR) is false). */
enum na_addr_flags { NA_ADDR_FIREWALL = (1 << 0) };

/* One entry of NA_Get_protocol_info()'s list, freed with
 * NA_Free_protocol_info(). device_name is NULL: no plugin here chooses
 * among devices. */
struct na_protocol_info {
    struct na_protocol_info *next; /* next entry, NULL at the end */
    char *class_name;              /* "sim", "na", "ofi", "verbs" */
    char *protocol_name;           /* "sim", "sm", "tcp", "sockets", ... */
    char *device_name;             /* NULL */
};

/* Completion types, in Mercury's order, from the NA_CB_TYPES X-macro list
 * (a program may expand it with its own X to name them). No plugin here
 * produces NA_CB_MULTI_RECV_UNEXPECTED: NA_Msg_multi_recv_unexpected() is
 * refused. NA_CB_MAX counts them. */
#define NA_CB_TYPES                                                            \
    X(NA_CB_SEND_UNEXPECTED)                                                   \
    X(NA_CB_RECV_UNEXPECTED)                                                   \
    X(NA_CB_MULTI_RECV_UNEXPECTED)                                             \
    X(NA_CB_SEND_EXPECTED)                                                     \
    X(NA_CB_RECV_EXPECTED)                                                     \
    X(NA_CB_PUT)                                                               \
    X(NA_CB_GET)                                                               \
    X(NA_CB_MAX)

#define X(a) a,
typedef enum na_cb_type { NA_CB_TYPES } na_cb_type_t;
#undef X

struct na_cb_info_recv_unexpected {
    size_t actual_buf_size; /* bytes received                       */
    na_addr_t source;       /* owned by the callee: NA_Addr_free it */
    na_tag_t tag;
};

/* The fields of a multi-receive completion, as in Mercury (never
 * produced here). */
struct na_cb_info_multi_recv_unexpected {
    size_t actual_buf_size; /* bytes received                       */
    na_addr_t source;       /* owned by the callee: NA_Addr_free it */
    na_tag_t tag;
    void *actual_buf; /* where in the buffer the message is   */
    bool last;        /* the last message of the buffer       */
};

struct na_cb_info_recv_expected {
    size_t actual_buf_size;
};

struct na_cb_info {
    union {
        struct na_cb_info_recv_unexpected recv_unexpected;
        struct na_cb_info_multi_recv_unexpected multi_recv_unexpected;
        struct na_cb_info_recv_expected recv_expected;
    } info;
    void *arg; /* the argument given when the op was posted */
    na_cb_type_t type;
    na_return_t ret; /* NA_SUCCESS, an error, or NA_CANCELED      */
};

/* Completion callback, run from NA_Trigger() only. */
typedef void (*na_cb_t)(const struct na_cb_info *callback_info);

/* Memory access flags for NA_Mem_handle_create(). */
#define NA_MEM_READ_ONLY 0x01
#define NA_MEM_WRITE_ONLY 0x02
#define NA_MEM_READWRITE 0x03

/* Memory types for NA_Mem_register(), with Mercury's values. Only host
 * memory is supported: the others are refused with NA_OPNOTSUPPORTED;
 * NA_MEM_TYPE_UNKNOWN is taken as host memory. */
enum na_mem_type {
    NA_MEM_TYPE_HOST, /* system memory */
    NA_MEM_TYPE_CUDA, /* NVIDIA CUDA memory (unsupported) */
    NA_MEM_TYPE_ROCM, /* AMD ROCm memory (unsupported) */
    NA_MEM_TYPE_ZE,   /* Intel Level Zero memory (unsupported) */
    NA_MEM_TYPE_MAX,
    NA_MEM_TYPE_UNKNOWN = NA_MEM_TYPE_MAX
};

/*
 * Traffic classes (na_init_info.traffic_class). A class that a fabric can
 * express is passed on (ofi: fi_tx_attr.tclass); the simulated fabric
 * accepts every class and treats them alike, as a provider without
 * traffic classes does in Mercury. A value outside the enum is refused
 * with NA_INVALID_ARG.
 */
enum na_traffic_class {
    NA_TC_UNSPEC,           /* the plugin chooses */
    NA_TC_BEST_EFFORT,      /* best effort */
    NA_TC_LOW_LATENCY,      /* low latency */
    NA_TC_BULK_DATA,        /* bulk data */
    NA_TC_DEDICATED_ACCESS, /* high priority */
    NA_TC_SCAVENGER,        /* low priority */
    NA_TC_NETWORK_CTRL      /* privileged network management */
};

/* One memory segment for NA_Mem_handle_create_segments(). */
struct na_segment {
    uint64_t base; /* address of the segment */
    size_t len;    /* length in bytes        */
};

/* Flags for NA_Op_create() and NA_Msg_buf_alloc(): none are defined yet. */

/* Progress modes. */
#define NA_NO_BLOCK 0x01 /* never sleep in progress: busy-poll */

/* Mercury's NA_NO_RETRY: accepted; plugins never retry in progress. */
#define NA_NO_RETRY 0x02

/* Thread modes: promises the caller makes; plugins lock regardless. */
#define NA_THREAD_MODE_SINGLE_CLS 0x01 /* one thread at a time per class */
#define NA_THREAD_MODE_SINGLE_CTX 0x02 /* one thread at a time per context */
#define NA_THREAD_MODE_SINGLE                                                  \
    (NA_THREAD_MODE_SINGLE_CLS | NA_THREAD_MODE_SINGLE_CTX)

/* Longest timeout (ms) that means "until something happens". */
#define NA_MAX_IDLE_TIME (3600 * 1000)
/* Limits of the types (not of any plugin). */
#define NA_CONTEXT_ID_MAX UINT8_MAX
#define NA_TAG_MAX UINT32_MAX

/* Optional features for NA_Has_opt_feature(). */
#define NA_OPT_MULTI_RECV (1 << 0)    /* NA_Msg_multi_recv_unexpected()  */
#define NA_OPT_FIREWALL_ADDR (1 << 1) /* addresses behind a firewall     */

/* NA_Msg_buf_alloc() flags, as in Mercury; the buffer serves any of them. */
#define NA_SEND (1 << 0)
#define NA_RECV (1 << 1)
#define NA_MULTI_RECV (1 << 2)
#define NA_ALLOC_MAX (1 << 3)
/* NA_Op_create() flags, as in Mercury; operations are reusable either way. */
#define NA_OP_SINGLE 0x00
#define NA_OP_MULTI 0x01

/*
 * Options for NA_Initialize_opt(). Every field has a safe default of zero
 * (NA_INIT_INFO_INITIALIZER); a plugin that cannot honour a non-zero field
 * fails initialization with NA_OPNOTSUPPORTED rather than ignoring it.
 */
struct na_init_info {
    const char *ip_subnet;      /* preferred subnet, e.g. "10.0.0.0/8"      */
    const char *auth_key;       /* fabric authentication key (unsupported)  */
    size_t max_unexpected_size; /* 0: plugin default                      */
    size_t max_expected_size;   /* 0: plugin default                      */
    uint32_t progress_mode;     /* 0 or NA_NO_BLOCK                       */
    enum na_addr_format addr_format; /* NA_ADDR_UNSPEC or NA_ADDR_IPV4  */
    uint8_t max_contexts;    /* 0: 1                                    */
    uint8_t thread_mode;     /* 0 or NA_THREAD_MODE_SINGLE             */
    bool request_mem_device; /* device memory (unsupported)             */
    bool no_multi_recv;      /* plugins with multi-receive buffers do
                                not use them for unexpected messages    */
    enum na_traffic_class traffic_class; /* NA_TC_UNSPEC by default        */
    unsigned int multi_recv_op_max;      /* multi-receive buffers to post; 0:
                                            the plugin's default (Quicksilver's
                                            own field, set from hg_init_info) */
};

#define NA_INIT_INFO_INITIALIZER                                               \
    (struct na_init_info)                                                      \
    {                                                                          \
        .ip_subnet = NULL, .auth_key = NULL, .max_unexpected_size = 0,         \
        .max_expected_size = 0, .progress_mode = 0,                            \
        .addr_format = NA_ADDR_UNSPEC, .max_contexts = 1, .thread_mode = 0,    \
        .request_mem_device = false, .no_multi_recv = false,                   \
        .traffic_class = NA_TC_UNSPEC, .multi_recv_op_max = 0                  \
    }

#ifdef __cplusplus
}
#endif

#endif /* NA_TYPES_H */
