/*
 * The native TCP NA plugin ("tcp", "na+tcp", "tcp://<ip>:<port>"): its ops
 * table, class and context life cycle, operation ids and limits. See
 * na_tcp_internal.h for the design and docs/plugin-tcp.md for its use.
 */
#include "na_tcp_internal.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool
na_tcp_check_protocol(const char *protocol_name)
{
    return strcmp(protocol_name, "tcp") == 0;
}

/* Refuse the init_info fields this plugin cannot honour. */
static na_return_t
na_tcp_check_init_info(const struct na_init_info *ii)
{
    const char *field = NULL;

    if (ii->auth_key != NULL)
        field = "auth_key";
    else if (ii->request_mem_device)
        field = "request_mem_device";
    else if (ii->max_unexpected_size > NA_TCP_MAX_MSG_SIZE ||
             ii->max_expected_size > NA_TCP_MAX_MSG_SIZE)
        field = "max_unexpected_size/max_expected_size above 1 MiB";
    if (field == NULL)
        return NA_SUCCESS;
    na_plugin_log_error("tcp", "init option %s is not supported", field);
    return NA_OPNOTSUPPORTED;
}

/*
 * The host part of the info string: "", "<ip>", "<ip>:<port>", "[<v6>]",
 * "[<v6>]:<port>", "<name>[:<port>]" (a host or an interface name, IPv4).
 * An empty host with FI_TCP_IFACE set in the environment is that
 * interface, as libfabric's tcp provider reads it (FI_TCP_IFACE=lo keeps
 * a plain "tcp" on loopback). Otherwise an empty or 0.0.0.0 host listens
 * on every IPv4 interface and is named by the first interface that is not
 * loopback (127.0.0.1 if none); [::] listens on every IPv6 interface and
 * is named [::1].
 */
static na_return_t
na_tcp_parse_host(const char *host_name, struct na_tcp_ip *bind_ip,
                  struct na_tcp_ip *self_ip, uint16_t *port)
{
    char host[256];
    const char *colon = strrchr(host_name, ':');
    const char *start = host_name;
    size_t n;
    char *end = NULL;
    unsigned long p = 0;

    if (host_name[0] == '[') {
        /* IPv6: the port's colon, if any, follows the bracket. */
        const char *close = strchr(host_name, ']');
        if (close == NULL || (close[1] != '\0' && close[1] != ':'))
            return NA_INVALID_ARG;
        start = host_name + 1;
        n = (size_t) (close - start);
        colon = close[1] == ':' ? close + 1 : NULL;
    } else {
        n = colon ? (size_t) (colon - host_name) : strlen(host_name);
    }
    if (n >= sizeof(host))
        return NA_INVALID_ARG;
    memcpy(host, start, n);
    host[n] = '\0';
    if (n == 0 && host_name[0] != '[' && getenv("FI_TCP_IFACE") != NULL) {
        const char *iface = getenv("FI_TCP_IFACE");

        if (strlen(iface) >= sizeof(host)) {
            na_plugin_log_error("tcp", "FI_TCP_IFACE is too long");
            return NA_INVALID_ARG;
        }
        strcpy(host, iface);
    }
    if (colon != NULL) {
        p = strtoul(colon + 1, &end, 10);
        if (colon[1] == '\0' || *end != '\0' || p > 65535)
            return NA_INVALID_ARG;
    }
    *port = (uint16_t) p;
    memset(bind_ip, 0, sizeof(*bind_ip));
    bind_ip->family = AF_INET;
    bind_ip->u.v4.s_addr = htonl(INADDR_ANY);
    if (host_name[0] == '[') {
        bind_ip->family = AF_INET6;
        if (inet_pton(AF_INET6, host, &bind_ip->u.v6) != 1)
            return NA_INVALID_ARG;
    } else if (host[0] != '\0' &&
               inet_pton(AF_INET, host, &bind_ip->u.v4) != 1 &&
               !na_plugin_iface_ipv4(host, &bind_ip->u.v4)) {
        struct addrinfo hints = {.ai_family = AF_INET}, *res = NULL;
        if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL) {
            na_plugin_log_error("tcp",
                                "\"%s\" is neither an IPv4 address, an "
                                "interface with one, nor a host name",
                                host);
            return NA_INVALID_ARG;
        }
        bind_ip->u.v4 =
            ((struct sockaddr_in *) (void *) res->ai_addr)->sin_addr;
        freeaddrinfo(res);
    }
    *self_ip = *bind_ip;
    if (na_tcp_ip_is_any(bind_ip)) {
        if (bind_ip->family == AF_INET6)
            self_ip->u.v6 = in6addr_loopback;
        else if (!na_plugin_iface_ipv4(NULL, &self_ip->u.v4))
            self_ip->u.v4.s_addr = htonl(INADDR_LOOPBACK);
    }
    return NA_SUCCESS;
}

static void
na_tcp_class_free(struct na_tcp_class *cls)
{
    struct na_tcp_conn *c;

    while ((c = LIST_FIRST(&cls->conns)) != NULL)
        na_tcp_conn_destroy(c);
    /* Addresses the user did not free die with the class. */
    na_plugin_addr_list_clear(&cls->addrs);
    if (cls->listen_sock >= 0)
        close(cls->listen_sock);
    na_plugin_wait_fini(&cls->wait);
    na_tcp_regions_destroy(cls);
    pthread_mutex_destroy(&cls->lock);
    free(cls);
}

static na_return_t
na_tcp_initialize(na_class_t *na_class, const struct na_info *info, bool listen)
{
    const struct na_init_info *ii = &info->init_info;
    struct na_tcp_ip self_ip;
    struct na_tcp_class *cls;
    uint16_t port;
    size_t max;
    na_return_t ret;

    (void) listen; /* every class listens: peers answer over its links */
    ret = na_tcp_check_init_info(ii);
    if (ret != NA_SUCCESS)
        return ret;
    cls = calloc(1, sizeof(*cls));
    if (cls == NULL)
        return NA_NOMEM;
    pthread_mutex_init(&cls->lock, NULL);
    LIST_INIT(&cls->addrs);
    LIST_INIT(&cls->conns);
    cls->listen_sock = cls->wait.wake_fd = cls->wait.epfd = -1;
    ret = na_tcp_parse_host(info->host_name, &cls->bind_ip, &self_ip, &port);
    if (ret != NA_SUCCESS) {
        na_plugin_log_error("tcp", "bad host \"%s\"", info->host_name);
        goto fail;
    }
    cls->limits.max_unexp = ii->max_unexpected_size ? ii->max_unexpected_size
                                                    : NA_TCP_DEFAULT_MSG_SIZE;
    cls->limits.max_exp =
        ii->max_expected_size ? ii->max_expected_size : NA_TCP_DEFAULT_MSG_SIZE;
    max = cls->limits.max_unexp > cls->limits.max_exp ? cls->limits.max_unexp
                                                      : cls->limits.max_exp;
    cls->rx_size = 2 * (NA_TCP_HDR_SIZE + max);
    if (cls->rx_size < NA_TCP_RX_SIZE)
        cls->rx_size = NA_TCP_RX_SIZE;
    ret =
        na_plugin_wait_init(&cls->wait, (ii->progress_mode & NA_NO_BLOCK) != 0);
    if (ret != NA_SUCCESS)
        goto fail;
    ret = na_tcp_listen(cls, port);
    if (ret != NA_SUCCESS)
        goto fail;
    cls->self = na_tcp_addr_intern(cls, &self_ip, cls->listen_port);
    if (cls->self == NULL) {
        ret = NA_NOMEM;
        goto fail;
    }
    na_class->plugin_class = cls;
    na_plugin_set_msg_limits(na_class, cls->limits.max_unexp,
                             cls->limits.max_exp, UINT32_MAX);
    na_plugin_set_max_segments(na_class, NA_TCP_SEG_MAX);
    return NA_SUCCESS;

fail:
    na_tcp_class_free(cls);
    return ret;
}

static na_return_t
na_tcp_finalize(na_class_t *na_class)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);

    if (cls == NULL)
        return NA_SUCCESS;
    na_tcp_class_free(cls);
    na_class->plugin_class = NULL;
    return NA_SUCCESS;
}

const struct na_class_ops na_tcp_class_ops = {
    .class_name = NA_TCP_CLASS_NAME,
    .check_protocol = na_tcp_check_protocol,
    .initialize = na_tcp_initialize,
    .finalize = na_tcp_finalize,
    .context = &na_tcp_context_ops,
    .addr = &na_tcp_addr_ops,
    .msg = &na_tcp_msg_ops,
    .mem = &na_tcp_mem_ops,
};
