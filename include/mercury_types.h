/*
 * Quicksilver HG (RPC layer) public types.
 *
 * Names, types and values follow the documented Mercury API so that programs
 * written against it compile unchanged.
 */
#ifndef MERCURY_TYPES_H
#define MERCURY_TYPES_H

#include "na_types.h"
/* As in Mercury, the configuration macros come with the types. */
#include "mercury_config.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t hg_size_t; /* sizes of RPC arguments and bulk data */
typedef uint64_t hg_id_t;   /* RPC id                               */
typedef uint8_t hg_bool_t;
typedef uint8_t hg_uint8_t;
typedef uint16_t hg_uint16_t;
typedef uint32_t hg_uint32_t;
typedef uint64_t hg_uint64_t;
typedef int8_t hg_int8_t;
typedef int16_t hg_int16_t;
typedef int32_t hg_int32_t;
typedef int64_t hg_int64_t;
typedef void *hg_ptr_t;

#define HG_TRUE 1
#define HG_FALSE 0

#define HG_SIZE_MAX UINT64_MAX

/* Version of the Mercury API this library implements: 2.4.1. */
#define HG_VERSION_MAJOR 2
#define HG_VERSION_MINOR 4
#define HG_VERSION_PATCH 1
/* An API version as HG_Init_opt2() takes it: HG_VERSION(2, 4). */
#define HG_VERSION(major, minor) (((major) << 16) | (minor))
#define HG_MAJOR(version) ((version) >> 16)
#define HG_MINOR(version) (0xffff & (version))
#define HG_VERSION_GE(v1, v2) ((v1) >= (v2))
#define HG_VERSION_LT(v1, v2) ((v1) < (v2))

/* Memory types of bulk regions (struct hg_bulk_attr), with Mercury's
 * values. Only host memory is supported. */
typedef enum hg_mem_type {
    HG_MEM_TYPE_HOST = NA_MEM_TYPE_HOST, /* system memory */
    HG_MEM_TYPE_CUDA = NA_MEM_TYPE_CUDA, /* NVIDIA CUDA (unsupported) */
    HG_MEM_TYPE_ROCM = NA_MEM_TYPE_ROCM, /* AMD ROCm (unsupported) */
    HG_MEM_TYPE_ZE = NA_MEM_TYPE_ZE,     /* Intel Level Zero (unsupported) */
    HG_MEM_TYPE_MAX = NA_MEM_TYPE_MAX,
    HG_MEM_TYPE_UNKNOWN = NA_MEM_TYPE_UNKNOWN
} hg_mem_type_t;

/* Attributes of a bulk region for HG_Bulk_create_attr(). */
struct hg_bulk_attr {
    hg_mem_type_t mem_type; /* memory type */
    uint64_t device;        /* device id; ignored for host memory */
};

/* Opaque objects. */
typedef struct hg_class hg_class_t;
typedef struct hg_context hg_context_t;
typedef struct hg_addr *hg_addr_t;
typedef struct hg_handle *hg_handle_t;
typedef struct hg_bulk *hg_bulk_t;
typedef struct hg_proc *hg_proc_t;
typedef struct hg_op_id *hg_op_id_t;

#define HG_ADDR_NULL ((hg_addr_t) NULL)
#define HG_HANDLE_NULL ((hg_handle_t) NULL)
#define HG_BULK_NULL ((hg_bulk_t) NULL)
#define HG_PROC_NULL ((hg_proc_t) NULL)
#define HG_OP_ID_NULL ((hg_op_id_t) NULL)
/* Pass where an hg_op_id_t * output is not wanted. */
#define HG_OP_ID_IGNORE ((hg_op_id_t *) 1)

/*
 * Return codes, as in Mercury 2.4: a one-argument X-macro table that
 * generates the enum (HG_RETURN_MAX last) and HG_Error_to_string()'s names
 * ("HG_TIMEOUT"). A program may expand it with its own one-argument X
 * (Bedrock's to_string does). The first 24 entries match na_return_t one
 * to one.
 */
#define HG_RETURN_VALUES                                                       \
    X(HG_SUCCESS)        /* success */                                         \
    X(HG_PERMISSION)     /* operation not permitted */                         \
    X(HG_NOENTRY)        /* no such file or directory */                       \
    X(HG_INTERRUPT)      /* operation interrupted */                           \
    X(HG_AGAIN)          /* operation must be retried */                       \
    X(HG_NOMEM)          /* out of memory */                                   \
    X(HG_ACCESS)         /* permission denied */                               \
    X(HG_FAULT)          /* bad address */                                     \
    X(HG_BUSY)           /* device or resource busy */                         \
    X(HG_EXIST)          /* entry already exists */                            \
    X(HG_NODEV)          /* no such device */                                  \
    X(HG_INVALID_ARG)    /* invalid argument */                                \
    X(HG_PROTOCOL_ERROR) /* protocol error */                                  \
    X(HG_OVERFLOW)       /* value too large */                                 \
    X(HG_MSGSIZE)        /* message size too long */                           \
    X(HG_PROTONOSUPPORT) /* protocol not supported */                          \
    X(HG_OPNOTSUPPORTED) /* operation not supported on endpoint */             \
    X(HG_ADDRINUSE)      /* address already in use */                          \
    X(HG_ADDRNOTAVAIL)   /* cannot assign requested address */                 \
    X(HG_HOSTUNREACH)    /* cannot reach host during operation */              \
    X(HG_TIMEOUT)        /* operation reached timeout */                       \
    X(HG_CANCELED)       /* operation canceled */                              \
    X(HG_IO_ERROR)       /* input/output error */                              \
    X(HG_HOSTFIREWALL)   /* host firewall refused the operation */             \
    X(HG_CHECKSUM_ERROR) /* checksum error */                                  \
    X(HG_NA_ERROR)       /* generic NA error */                                \
    X(HG_OTHER_ERROR)    /* generic HG error */                                \
    X(HG_RETURN_MAX)

#define X(a) a,
typedef enum hg_return { HG_RETURN_VALUES } hg_return_t;
#undef X

/* Older spellings still found in user programs. */
#define HG_INVALID_PARAM HG_INVALID_ARG
#define HG_SIZE_ERROR HG_MSGSIZE
#define HG_NOMEM_ERROR HG_NOMEM
#define HG_NO_MATCH HG_NOENTRY

/* Callback types. */
typedef enum hg_cb_type {
    HG_CB_LOOKUP,
    HG_CB_FORWARD,
    HG_CB_RESPOND,
    HG_CB_BULK
} hg_cb_type_t;

/* Bulk access flags and operations. */
#define HG_BULK_READ_ONLY 0x01
#define HG_BULK_WRITE_ONLY 0x02
#define HG_BULK_READWRITE 0x03
/* Extension flags for HG_Bulk_create(): keep the region out of eager
 * embedding even when it is small and read-only. */
#define HG_BULK_NO_EAGER 0x10

typedef enum hg_bulk_op { HG_BULK_PUSH, HG_BULK_PULL } hg_bulk_op_t;

/* Serialization directions. */
typedef enum hg_proc_op { HG_ENCODE, HG_DECODE, HG_FREE } hg_proc_op_t;

/* Checksum levels for hg_init_info. */
typedef enum hg_checksum_level {
    HG_CHECKSUM_NONE,
    HG_CHECKSUM_RPC_HEADERS,
    HG_CHECKSUM_RPC_PAYLOAD
} hg_checksum_level_t;

/* What an RPC handler learns about its request (HG_Get_info()). */
struct hg_info {
    hg_class_t *hg_class;  /* HG class                       */
    hg_context_t *context; /* HG context                     */
    hg_addr_t addr;        /* the origin's (or target's) addr */
    hg_id_t id;            /* RPC id                         */
    uint8_t context_id;    /* target context id              */
};

struct hg_cb_info_lookup {
    hg_addr_t addr;
};

struct hg_cb_info_forward {
    hg_handle_t handle;
};

struct hg_cb_info_respond {
    hg_handle_t handle;
};

struct hg_cb_info_bulk {
    hg_bulk_t origin_handle;
    hg_bulk_t local_handle;
    hg_bulk_op_t op;
    hg_size_t size;
};

struct hg_cb_info {
    union {
        struct hg_cb_info_lookup lookup;
        struct hg_cb_info_forward forward;
        struct hg_cb_info_respond respond;
        struct hg_cb_info_bulk bulk;
    } info;
    void *arg;         /* user argument            */
    hg_cb_type_t type; /* which union member is set */
    hg_return_t ret;   /* always check it           */
};

typedef hg_return_t (*hg_cb_t)(const struct hg_cb_info *callback_info);
typedef hg_return_t (*hg_rpc_cb_t)(hg_handle_t handle);
typedef hg_return_t (*hg_proc_cb_t)(hg_proc_t proc, void *data);
typedef hg_cb_t hg_bulk_cb_t;

/* Options for HG_Init_opt() / HG_Init_opt2(). */
struct hg_init_info {
    struct na_init_info na_init_info; /* passed to NA                    */
    na_class_t *na_class;             /* use an existing NA class        */
    hg_uint32_t request_post_init;    /* request receives kept posted
                                         (0: the default)                */
    hg_uint32_t request_post_incr;    /* handles the pool grows by when
                                         it runs dry                     */
    hg_bool_t auto_sm;                /* same-node peers over na+sm      */
    const char *sm_info_string;       /* its info string (auto_sm only)  */
    hg_checksum_level_t checksum_level;
    hg_bool_t no_bulk_eager;       /* never embed small bulk regions  */
    hg_bool_t no_loopback;         /* forward to self through NA      */
    hg_bool_t stats;               /* print RPC counts at finalize    */
    hg_bool_t no_multi_recv;       /* passed to plugins that use it   */
    hg_bool_t release_input_early; /* free input buffer at Get_input  */
    /* Since 2.4 (read only with HG_Init_opt2() and HG_VERSION(2, 4)): */
    enum na_traffic_class traffic_class; /* copied to na_init_info when
                                            that one is NA_TC_UNSPEC     */
    bool no_overflow; /* input or output above the message size fails
                         with HG_OVERFLOW instead of going through bulk */
    /* Multi-receive buffers the plugin posts for requests (ofi with
     * FI_MULTI_RECV; plugins without multi-receive ignore it). 0: the
     * plugin's default (4 in ofi). At most 64. */
    unsigned int multi_recv_op_max;
    /* Mercury copies requests out of multi-receive buffers when this few
     * remain; here requests are always copied out at once, so any value
     * up to multi_recv_op_max is accepted and has no further effect. */
    unsigned int multi_recv_copy_threshold;
    /* Quicksilver extensions (docs/architecture.md, "Liveness"). */
    hg_uint32_t probe_interval_ms; /* 0: the default, 1000 ms          */
    hg_bool_t no_probe;            /* never probe a silent target      */
};

#define HG_INIT_INFO_INITIALIZER                                               \
    (struct hg_init_info)                                                      \
    {                                                                          \
        .na_init_info = NA_INIT_INFO_INITIALIZER, .na_class = NULL,            \
        .request_post_init = 256, .request_post_incr = 256,                    \
        .auto_sm = HG_FALSE, .sm_info_string = NULL,                           \
        .checksum_level = HG_CHECKSUM_NONE, .no_bulk_eager = HG_FALSE,         \
        .no_loopback = HG_FALSE, .stats = HG_FALSE, .no_multi_recv = HG_FALSE, \
        .release_input_early = HG_FALSE, .traffic_class = NA_TC_UNSPEC,        \
        .no_overflow = false, .multi_recv_op_max = 0,                          \
        .multi_recv_copy_threshold = 0, .probe_interval_ms = 0,                \
        .no_probe = HG_FALSE                                                   \
    }

#ifdef __cplusplus
}
#endif

#endif /* MERCURY_TYPES_H */
