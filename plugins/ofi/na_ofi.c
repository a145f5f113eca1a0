/*
 * The libfabric NA plugin: its ops table, class and context life cycle,
 * operation ids and limits.
 *
 * A class opens one fabric, domain, address vector, completion queue and
 * FI_EP_RDM endpoint on the provider its protocol names ("tcp" is served
 * by libfabric as "tcp;ofi_rxm", "sockets" by the sockets provider).
 */
#include "na_ofi_internal.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

/* Capabilities the plugin cannot work without. */
#define NA_OFI_CAPS_REQUIRED                                                   \
    (FI_MSG | FI_TAGGED | FI_RMA | FI_SEND | FI_RECV | FI_READ | FI_WRITE |    \
     FI_REMOTE_READ | FI_REMOTE_WRITE)

static bool
na_ofi_check_protocol(const char *protocol_name)
{
    /* "shm" is claimed only to refuse it with the reason (initialize). */
    return strcmp(protocol_name, "tcp") == 0 ||
           strcmp(protocol_name, "tcp;ofi_rxm") == 0 ||
           strcmp(protocol_name, "sockets") == 0 ||
           strcmp(protocol_name, "shm") == 0;
}

/* Refuse the init_info fields this plugin cannot honour. */
static na_return_t
na_ofi_check_init_info(const struct na_init_info *ii)
{
    const char *field = NULL;

    if (ii->auth_key != NULL)
        field = "auth_key";
    else if (ii->request_mem_device)
        field = "request_mem_device";
    else if (ii->ip_subnet != NULL)
        field = "ip_subnet";
    if (field == NULL)
        return NA_SUCCESS;
    qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR, "init option %s is not supported",
           field);
    return NA_OPNOTSUPPORTED;
}

/* One fi_getinfo() attempt with the given capabilities. */
static int
na_ofi_getinfo_caps(struct na_ofi_class *cls, const struct sockaddr_in *sin,
                    uint64_t caps, struct fi_info **info)
{
    struct fi_info *hints = fi_allocinfo();
    int rc;

    if (hints == NULL)
        return -FI_ENOMEM;
    hints->caps = caps;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = FI_EP_RDM;
    hints->addr_format = cls->shm ? FI_ADDR_STR : FI_SOCKADDR_IN;
    hints->domain_attr->threading = FI_THREAD_SAFE;
    hints->domain_attr->mr_mode =
        FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->av_type = FI_AV_UNSPEC;
    hints->fabric_attr->prov_name = strdup(cls->prov_name);
    /* shm: no source address, so the provider names the endpoint
     * "fi_shm://<pid>:<d>:<e>" itself (the form na_ofi_shm_parse reads). */
    if (!cls->shm) {
        hints->src_addr = malloc(sizeof(*sin));
        if (hints->src_addr != NULL) {
            memcpy(hints->src_addr, sin, sizeof(*sin));
            hints->src_addrlen = sizeof(*sin);
        }
    }
    if (hints->fabric_attr->prov_name == NULL ||
        (!cls->shm && hints->src_addr == NULL)) {
        fi_freeinfo(hints);
        return -FI_ENOMEM;
    }

    rc = fi_getinfo(NA_OFI_FI_VERSION, NULL, NULL, 0, hints, info);
    fi_freeinfo(hints); /* also frees prov_name and src_addr */
    return rc;
}

/*
 * Ask for everything we can use, then drop the optional capabilities one
 * by one: a provider that cannot match receives by source or cannot do
 * multi-receive buffers still works, only less efficiently.
 */
static na_return_t
na_ofi_getinfo(struct na_ofi_class *cls, const struct sockaddr_in *sin,
               bool want_multi_recv)
{
    /* FI_SOURCE: the provider tells who sent each message, which is
     * checked against the address the message's header claims. */
    uint64_t optional[4] = {FI_DIRECTED_RECV | FI_SOURCE, FI_DIRECTED_RECV, 0,
                            0};
    int rc = -FI_ENODATA;

    if (want_multi_recv) {
        optional[0] |= FI_MULTI_RECV;
        optional[1] |= FI_MULTI_RECV;
        optional[2] = FI_MULTI_RECV;
    }
    for (size_t i = 0; i < 4; i++) {
        rc = na_ofi_getinfo_caps(cls, sin, NA_OFI_CAPS_REQUIRED | optional[i],
                                 &cls->info);
        if (rc == 0)
            return NA_SUCCESS;
        if (rc != -FI_ENODATA)
            break;
        if (optional[i] == 0)
            break;
    }
    qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR,
           "provider \"%s\" is not available or refused the hints "
           "(FI_EP_RDM, tagged messages, RMA, thread safe) on %s:%u: %s",
           cls->prov_name, inet_ntoa(sin->sin_addr), ntohs(sin->sin_port),
           fi_strerror(-rc));
    return rc == -FI_ENODATA ? NA_NODEV : NA_PROTONOSUPPORT;
}

/* Record what the provider granted so the data path need not ask again. */
static void
na_ofi_read_info(struct na_ofi_class *cls, bool want_multi_recv)
{
    const struct fi_info *info = cls->info;

    /* Providers may report FI_MULTI_RECV even when it was not asked for. */
    cls->multi_recv = want_multi_recv && (info->caps & FI_MULTI_RECV) != 0;
    cls->directed_recv = (info->caps & FI_DIRECTED_RECV) != 0;
    /* libfabric 1.17's shm provider reports as source of a message its
     * own index of the peer, not the fi_addr our fi_av_insert of the
     * peer's name returned: its sources cannot be checked. */
    cls->fi_source = (info->caps & FI_SOURCE) != 0 && !cls->shm;
    cls->mr_virt_addr = (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    cls->mr_prov_key = (info->domain_attr->mr_mode & FI_MR_PROV_KEY) != 0;
    cls->inject_size = info->tx_attr->inject_size;
}

/*
 * Open the completion queue with a file-descriptor wait object when the
 * provider has one, so an idle poll_wait can sleep in poll(2); otherwise
 * fall back to the provider's own blocking read, then to none.
 */
static int
na_ofi_cq_open(struct na_ofi_class *cls)
{
    static const enum fi_wait_obj objs[] = {FI_WAIT_FD, FI_WAIT_UNSPEC,
                                            FI_WAIT_NONE};
    static const enum na_ofi_wait_mode modes[] = {
        NA_OFI_WAIT_FD, NA_OFI_WAIT_SREAD, NA_OFI_WAIT_NONE};
    int rc = -FI_ENOSYS;

    /* libfabric 1.17's shm CQ offers no fd, and its fi_cq_sread does not
     * return at its timeout: shm waits without a wait object
     * (na_ofi_sleep naps instead). */
    for (size_t i = cls->no_block || cls->shm ? 2 : 0; i < 3; i++) {
        struct fi_cq_attr attr = {
            .format = FI_CQ_FORMAT_TAGGED,
            .wait_obj = objs[i],
            .wait_cond = FI_CQ_COND_NONE,
        };
        rc = fi_cq_open(cls->domain, &attr, &cls->cq, NULL);
        if (rc == 0) {
            cls->wait_mode = modes[i];
            return 0;
        }
    }
    return rc;
}

/* Open and enable the endpoint; learn our own address. */
static int
na_ofi_endpoint_open(struct na_ofi_class *cls)
{
    struct fi_av_attr av_attr = {.type = FI_AV_UNSPEC};
    size_t min_multi_recv = NA_OFI_HDR_SIZE + cls->max_unexp_size;
    int rc;

    rc = fi_fabric(cls->info->fabric_attr, &cls->fabric, NULL);
    if (rc == 0)
        rc = fi_domain(cls->fabric, cls->info, &cls->domain, NULL);
    if (rc == 0)
        rc = fi_av_open(cls->domain, &av_attr, &cls->av, NULL);
    if (rc == 0)
        rc = na_ofi_cq_open(cls);
    if (rc == 0)
        rc = fi_endpoint(cls->domain, cls->info, &cls->ep, NULL);
    if (rc == 0)
        rc = fi_ep_bind(cls->ep, &cls->av->fid, 0);
    if (rc == 0)
        rc = fi_ep_bind(cls->ep, &cls->cq->fid, FI_TRANSMIT | FI_RECV);
    if (rc == 0 && cls->multi_recv)
        rc = fi_setopt(&cls->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
                       &min_multi_recv, sizeof(min_multi_recv));
    if (rc == 0)
        rc = fi_enable(cls->ep);
    if (rc == 0 && cls->wait_mode == NA_OFI_WAIT_FD &&
        fi_control(&cls->cq->fid, FI_GETWAIT, &cls->cq_fd) != 0) {
        /* The CQ has a wait object but will not show it: block in it. */
        cls->cq_fd = -1;
        cls->wait_mode = NA_OFI_WAIT_SREAD;
    }
    return rc;
}

/* Close whatever na_ofi_endpoint_open() managed to open, newest first. */
static void
na_ofi_endpoint_close(struct na_ofi_class *cls)
{
    if (cls->ep != NULL)
        fi_close(&cls->ep->fid);
    if (cls->cq != NULL)
        fi_close(&cls->cq->fid);
    if (cls->av != NULL)
        fi_close(&cls->av->fid);
    if (cls->domain != NULL)
        fi_close(&cls->domain->fid);
    if (cls->fabric != NULL)
        fi_close(&cls->fabric->fid);
}

/* Our own address as the provider bound it (the real port for port 0). */
static na_return_t
na_ofi_self_init(struct na_ofi_class *cls)
{
    struct sockaddr_in sin;
    char name[128] = "";
    size_t len = cls->shm ? sizeof(name) - 1 : sizeof(sin);
    int rc = fi_getname(&cls->ep->fid, cls->shm ? (void *) name : (void *) &sin,
                        &len);

    if (cls->shm) {
        if (rc != 0 || na_ofi_shm_parse(name, &sin) != NA_SUCCESS) {
            qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR,
                   "fi_getname gave no shm name of the form "
                   "fi_shm://<pid>:<d>:<e> (\"%s\"): %s",
                   name, rc ? fi_strerror(-rc) : "unexpected form");
            return NA_PROTOCOL_ERROR;
        }
    } else if (rc != 0 || len != sizeof(sin) || sin.sin_family != AF_INET) {
        qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR,
               "fi_getname gave no IPv4 address: %s",
               rc ? fi_strerror(-rc) : "wrong address format");
        return NA_PROTOCOL_ERROR;
    }
    if (na_ofi_addr_intern(cls, &sin, &cls->self) != NA_SUCCESS)
        return NA_PROTOCOL_ERROR;
    if (cls->shm) {
        na_ofi_shm_set_live(cls->self, true);
        (void) na_ofi_shm_keys_create(cls);
    }
    /* Every unexpected message we send starts with this header. */
    memset(cls->hdr_template, 0, sizeof(cls->hdr_template));
    cls->hdr_template[4] = NA_OFI_HDR_VERSION;
    na_ofi_addr_to_wire(cls->self, cls->hdr_template + 5);
    return NA_SUCCESS;
}

static void
na_ofi_class_free(struct na_ofi_class *cls)
{
    if (cls->shm && cls->self != NULL) {
        na_ofi_shm_set_live(cls->self, false);
        na_ofi_shm_keys_destroy(cls);
    }
    na_ofi_endpoint_close(cls); /* discards the posted receive buffers */
    na_ofi_rx_bufs_free(cls);
    na_ofi_addr_cache_destroy(cls);
    if (cls->info != NULL)
        fi_freeinfo(cls->info);
    if (cls->wake_fd >= 0)
        close(cls->wake_fd);
    if (cls->poll_epfd >= 0)
        close(cls->poll_epfd);
    pthread_mutex_destroy(&cls->addr_lock);
    pthread_mutex_destroy(&cls->rx_lock);
    pthread_mutex_destroy(&cls->retry_lock);
    free(cls);
}

/*
 * Where our memory keys start when the provider leaves keys to us (tcp
 * and sockets do): a random start makes a peer's guess of another
 * region's key unlikely, though keys are still consecutive after it.
 */
static uint64_t
na_ofi_random_key(void)
{
    uint64_t key = 0;

    if (getrandom(&key, sizeof(key), 0) != sizeof(key))
        key = na_plugin_clock_monotonic_ns() * 0x9e3779b97f4a7c15ull;
    return key == FI_KEY_NOTAVAIL ? 1 : key;
}

static struct na_ofi_class *
na_ofi_class_alloc(const struct na_info *info)
{
    const struct na_init_info *ii = &info->init_info;
    struct na_ofi_class *cls = calloc(1, sizeof(*cls));

    if (cls == NULL)
        return NULL;
    pthread_mutex_init(&cls->addr_lock, NULL);
    pthread_mutex_init(&cls->rx_lock, NULL);
    pthread_mutex_init(&cls->retry_lock, NULL);
    TAILQ_INIT(&cls->contexts);
    na_op_list_init(&cls->retry_ops);
    cls->cq_fd = -1;
    cls->wake_fd = -1;
    cls->poll_epfd = -1;
    atomic_init(&cls->next_mr_key, na_ofi_random_key());
    atomic_init(&cls->spin_ns, 20000);
    if (strcmp(info->protocol_name, "sockets") == 0) {
        strcpy(cls->protocol, "sockets");
        cls->prov_name = "sockets";
    } else if (strcmp(info->protocol_name, "shm") == 0) {
        strcpy(cls->protocol, "shm");
        cls->prov_name = "shm";
        cls->shm = true;
    } else {
        strcpy(cls->protocol, "tcp");
        cls->prov_name = "tcp;ofi_rxm";
    }
    cls->max_unexp_size = ii->max_unexpected_size ? ii->max_unexpected_size
                                                  : NA_OFI_DEFAULT_MSG_SIZE;
    cls->max_exp_size =
        ii->max_expected_size ? ii->max_expected_size : NA_OFI_DEFAULT_MSG_SIZE;
    cls->no_block = (ii->progress_mode & NA_NO_BLOCK) != 0;
    cls->multi_recv_op_max = ii->multi_recv_op_max;
    return cls;
}

/* At initialization, address errors are about our own address. */
static na_return_t
na_ofi_init_error_to_na(int rc)
{
    if (rc == -FI_EADDRINUSE)
        return NA_ADDRINUSE;
    if (rc == -FI_EADDRNOTAVAIL)
        return NA_ADDRNOTAVAIL;
    return na_ofi_error_to_na(-rc);
}

static na_return_t
na_ofi_initialize(na_class_t *na_class, const struct na_info *info, bool listen)
{
    struct na_ofi_class *cls;
    struct sockaddr_in sin;
    bool want_multi_recv;
    na_return_t ret;
    int rc;

    (void) listen; /* RDM endpoints always accept connections. */
    ret = na_ofi_check_init_info(&info->init_info);
    if (ret != NA_SUCCESS)
        return ret;
    if (strcmp(info->protocol_name, "shm") == 0) {
        /* The shm provider names each endpoint after its process; a name
         * of our choosing would need strings beyond the 7-byte wire form
         * (na_ofi_internal.h), so none is taken. */
        memset(&sin, 0, sizeof(sin));
        ret = NA_SUCCESS;
        if (info->host_name[0] != '\0') {
            qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR,
                   "ofi+shm takes no address (\"%s\"): the shm provider "
                   "names each endpoint fi_shm://<pid>:<d>:<e> itself; use "
                   "\"ofi+shm\", or na+sm://<name> for a chosen name",
                   info->host_name);
            return NA_INVALID_ARG;
        }
    } else {
        ret = na_ofi_addr_parse_host(info->host_name, &sin, false);
    }
    if (ret != NA_SUCCESS) {
        qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR, "bad host \"%s\"",
               info->host_name);
        return ret;
    }
    cls = na_ofi_class_alloc(info);
    if (cls == NULL)
        return NA_NOMEM;
    /* libfabric 1.17's shm endpoint crashes in fi_setopt(
     * FI_OPT_MIN_MULTI_RECV): no multi-receive buffers there. */
    want_multi_recv = !info->init_info.no_multi_recv && !cls->shm;
    ret = na_ofi_getinfo(cls, &sin, want_multi_recv);
    if (ret != NA_SUCCESS)
        goto free_class;
    na_ofi_read_info(cls, want_multi_recv);

    if (cls->shm)
        na_ofi_shm_own_stale_sweep();
    rc = na_ofi_endpoint_open(cls);
    if (rc != 0) {
        qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR,
               "opening a %s endpoint on %s:%u: %s", cls->prov_name,
               inet_ntoa(sin.sin_addr), ntohs(sin.sin_port), fi_strerror(-rc));
        ret = na_ofi_init_error_to_na(rc);
        goto free_class;
    }
    ret = na_ofi_self_init(cls);
    if (ret != NA_SUCCESS)
        goto free_class;
    cls->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (cls->wake_fd < 0) {
        ret = NA_NOMEM;
        goto free_class;
    }
    ret = na_ofi_rx_bufs_post(cls);
    if (ret != NA_SUCCESS)
        goto free_class;
    na_class->plugin_class = cls;
    /* NA tags travel in the low 32 bits of libfabric's 64-bit tag. */
    na_plugin_set_msg_limits(na_class, cls->max_unexp_size, cls->max_exp_size,
                             UINT32_MAX);
    return NA_SUCCESS;

free_class:
    na_ofi_class_free(cls);
    return ret;
}

static na_return_t
na_ofi_finalize(na_class_t *na_class)
{
    struct na_ofi_class *cls = na_ofi_class(na_class);

    if (cls == NULL)
        return NA_SUCCESS;
    na_ofi_class_free(cls);
    na_class->plugin_class = NULL;
    return NA_SUCCESS;
}

const struct na_class_ops na_ofi_class_ops = {
    .class_name = NA_OFI_CLASS_NAME,
    .check_protocol = na_ofi_check_protocol,
    .initialize = na_ofi_initialize,
    .finalize = na_ofi_finalize,
    .context = &na_ofi_context_ops,
    .addr = &na_ofi_addr_ops,
    .msg = &na_ofi_msg_ops,
    .mem = &na_ofi_mem_ops,
};
