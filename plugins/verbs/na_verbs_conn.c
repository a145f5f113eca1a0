/*
 * Devices and connections: everything that talks to librdmacm.
 *
 * Opening a class binds a CM id to the class's IP address, which picks the
 * RDMA device that owns it; a listening class also listens on that id. A
 * connection to a peer is made the first time something is sent to it:
 * resolve address, resolve route, create the queue pair, pre-post the
 * receive buffers, connect. The connection request carries the requester's
 * identity (the address its class is bound to), so the passive side can
 * name the source of every message that arrives on the connection.
 *
 * The CM event channel is non-blocking and drained from the progress loop
 * under the class lock. Each event is copied and acknowledged before it is
 * handled, so destroying an id never waits on an unacknowledged event.
 *
 * A connection that fails (rejected, unreachable, disconnected, or an error
 * completion) moves to CLOSING: its queue pair goes to the error state so
 * every outstanding work request comes back flushed, its queued operations
 * complete with an error, and it is destroyed once nothing is in flight.
 */
#include "na_verbs_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How long a closing connection may wait for its receive buffers to come
 * back flushed before its queue pair is destroyed anyway. */
#define NA_VERBS_FLUSH_WAIT_NS (2ull * 1000 * 1000 * 1000)

/* rdma_cm reports a missing RDMA device as ENODEV, ENOENT or ENOSYS;
 * other errnos map as on every plugin. */
static na_return_t
na_verbs_errno_to_na(int err)
{
    if (err == ENOENT || err == ENOSYS)
        return NA_NODEV;
    return na_plugin_errno_to_na(err);
}

/* The same for an error that starts here, logged once with its errno. */
static na_return_t
na_verbs_errno_error(const char *what, int err)
{
    if (err == ENOENT || err == ENOSYS) {
        NA_VERBS_LOG("%s: %s (errno %d, NA_NODEV)", what, strerror(err), err);
        return NA_NODEV;
    }
    return na_plugin_errno_error(NA_VERBS_CLASS_NAME, err, what);
}

na_return_t
na_verbs_wc_status_to_na(enum ibv_wc_status s)
{
    switch (s) {
    case IBV_WC_SUCCESS:
        return NA_SUCCESS;
    case IBV_WC_REM_ACCESS_ERR:
        return NA_ACCESS;
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_MW_BIND_ERR:
        return NA_PERMISSION;
    case IBV_WC_LOC_LEN_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
        return NA_MSGSIZE;
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
    case IBV_WC_WR_FLUSH_ERR:
        return NA_HOSTUNREACH;
    default:
        return NA_IO_ERROR;
    }
}

static int
na_verbs_set_nonblock(int fd)
{
    int flags = fcntl(fd, F_GETFL);

    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return -1;
    return 0;
}

static void
na_verbs_ip_string(uint32_t ip, char *buf, size_t size)
{
    struct in_addr in = {.s_addr = htonl(ip)};

    if (inet_ntop(AF_INET, &in, buf, (socklen_t) size) == NULL)
        snprintf(buf, size, "?");
}

/* Fail fast, with a message that says what is missing, on a machine with
 * no RDMA device at all or without the requested one. */
static na_return_t
na_verbs_check_devices(const char *device)
{
    struct ibv_device **list;
    int n = 0;
    bool found = device[0] == '\0';

    list = ibv_get_device_list(&n);
    if (list == NULL || n == 0) {
        NA_VERBS_LOG("no RDMA device found (ibv_get_device_list: %s); the "
                     "verbs plugin needs an RDMA NIC or a Soft-RoCE device "
                     "(rdma link add rxe0 type rxe netdev <if>)",
                     list == NULL ? strerror(errno) : "empty list");
        if (list != NULL)
            ibv_free_device_list(list);
        return NA_NODEV;
    }
    for (int i = 0; i < n && !found; i++)
        found = strcmp(ibv_get_device_name(list[i]), device) == 0;
    ibv_free_device_list(list);
    if (!found) {
        NA_VERBS_LOG("RDMA device \"%s\" not found", device);
        return NA_NODEV;
    }
    return NA_SUCCESS;
}

static bool
na_verbs_id_on_device(struct rdma_cm_id *id, const char *device)
{
    if (id->verbs == NULL)
        return false;
    return device[0] == '\0' ||
           strcmp(ibv_get_device_name(id->verbs->device), device) == 0;
}

static na_return_t
na_verbs_bind(struct na_verbs_class *cls, uint32_t ip, uint16_t port,
              struct rdma_cm_id **idp)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    struct rdma_cm_id *id;

    if (rdma_create_id(cls->cm_channel, &id, NULL, RDMA_PS_TCP) != 0)
        return na_verbs_errno_to_na(errno);
    sin.sin_addr.s_addr = htonl(ip);
    sin.sin_port = htons(port);
    if (rdma_bind_addr(id, (struct sockaddr *) &sin) != 0) {
        na_return_t ret = na_verbs_errno_to_na(errno);

        rdma_destroy_id(id);
        return ret;
    }
    *idp = id;
    return NA_SUCCESS;
}

/* No IP in the info string: take the first IPv4 address that belongs to an
 * RDMA device (the requested one if a device was named). */
static na_return_t
na_verbs_bind_any(struct na_verbs_class *cls, const char *device, uint16_t port,
                  struct rdma_cm_id **idp)
{
    struct ifaddrs *ifa_list, *ifa;
    na_return_t ret = NA_NODEV;

    if (getifaddrs(&ifa_list) != 0)
        return NA_NODEV;
    for (ifa = ifa_list; ifa != NULL; ifa = ifa->ifa_next) {
        struct rdma_cm_id *id;
        uint32_t ip;

        if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != AF_INET ||
            (ifa->ifa_flags & IFF_UP) == 0)
            continue;
        ip = ntohl(((struct sockaddr_in *) ifa->ifa_addr)->sin_addr.s_addr);
        if (na_verbs_bind(cls, ip, port, &id) != NA_SUCCESS)
            continue;
        if (na_verbs_id_on_device(id, device)) {
            *idp = id;
            ret = NA_SUCCESS;
            break;
        }
        rdma_destroy_id(id);
    }
    freeifaddrs(ifa_list);
    if (ret != NA_SUCCESS)
        NA_VERBS_LOG("no IPv4 address belongs to %s%s; give one in the info "
                     "string (verbs://[device/]ip[:port])",
                     device[0] ? "RDMA device " : "an RDMA device", device);
    return ret;
}

/* Bind (and listen), then read back the address and port actually used. */
static na_return_t
na_verbs_open_id(struct na_verbs_class *cls, const char *device, bool has_ip,
                 uint32_t ip, uint16_t port, bool listen)
{
    char ipstr[INET_ADDRSTRLEN];
    struct sockaddr_in *sin;
    na_return_t ret;

    if (has_ip) {
        ret = na_verbs_bind(cls, ip, port, &cls->bind_id);
        if (ret != NA_SUCCESS) {
            na_verbs_ip_string(ip, ipstr, sizeof(ipstr));
            NA_VERBS_LOG("cannot bind to %s:%u: %s", ipstr, (unsigned) port,
                         strerror(errno));
            return ret;
        }
        if (!na_verbs_id_on_device(cls->bind_id, device)) {
            na_verbs_ip_string(ip, ipstr, sizeof(ipstr));
            NA_VERBS_LOG("address %s is not on %s%s", ipstr,
                         device[0] ? "RDMA device " : "any RDMA device",
                         device);
            ret = NA_NODEV;
            goto destroy_id;
        }
    } else {
        ret = na_verbs_bind_any(cls, device, port, &cls->bind_id);
        if (ret != NA_SUCCESS)
            return ret;
    }
    if (listen && rdma_listen(cls->bind_id, 128) != 0) {
        ret = na_verbs_errno_error("rdma_listen", errno);
        goto destroy_id;
    }
    cls->listening = listen;
    sin = (struct sockaddr_in *) rdma_get_local_addr(cls->bind_id);
    cls->ip = ntohl(sin->sin_addr.s_addr);
    cls->port = ntohs(rdma_get_src_port(cls->bind_id));
    cls->verbs = cls->bind_id->verbs;
    snprintf(cls->device, sizeof(cls->device), "%s",
             ibv_get_device_name(cls->verbs->device));
    return NA_SUCCESS;

destroy_id:
    rdma_destroy_id(cls->bind_id);
    cls->bind_id = NULL;
    return ret;
}

na_return_t
na_verbs_device_open(struct na_verbs_class *cls, const char *device,
                     bool has_ip, uint32_t ip, uint16_t port, bool listen)
{
    int per_conn = NA_VERBS_SQ_DEPTH + NA_VERBS_RECV_CREDITS + 1;
    na_return_t ret;

    ret = na_verbs_check_devices(device);
    if (ret != NA_SUCCESS)
        return ret;
    cls->cm_channel = rdma_create_event_channel();
    if (cls->cm_channel == NULL) {
        NA_VERBS_LOG("cannot open the RDMA connection manager "
                     "(/dev/infiniband/rdma_cm): %s",
                     strerror(errno));
        return NA_NODEV;
    }
    if (na_verbs_set_nonblock(cls->cm_channel->fd) != 0) {
        ret = NA_IO_ERROR;
        goto destroy_channel;
    }
    ret = na_verbs_open_id(cls, device, has_ip, ip, port, listen);
    if (ret != NA_SUCCESS)
        goto destroy_channel;
    if (ibv_query_device(cls->verbs, &cls->dev_attr) != 0) {
        NA_VERBS_LOG("ibv_query_device: %s", strerror(errno));
        ret = NA_IO_ERROR;
        goto destroy_id;
    }
    cls->pd = ibv_alloc_pd(cls->verbs);
    if (cls->pd == NULL) {
        NA_VERBS_LOG("ibv_alloc_pd: %s", strerror(errno));
        ret = NA_NOMEM;
        goto destroy_id;
    }
    cls->comp_channel = ibv_create_comp_channel(cls->verbs);
    if (cls->comp_channel == NULL ||
        na_verbs_set_nonblock(cls->comp_channel->fd) != 0) {
        NA_VERBS_LOG("completion channel: %s", strerror(errno));
        ret = NA_IO_ERROR;
        goto dealloc_pd;
    }
    cls->cq_size = NA_VERBS_CQ_SIZE;
    if (cls->dev_attr.max_cqe > 0 && cls->dev_attr.max_cqe < cls->cq_size)
        cls->cq_size = cls->dev_attr.max_cqe;
    cls->cq =
        ibv_create_cq(cls->verbs, cls->cq_size, cls, cls->comp_channel, 0);
    if (cls->cq == NULL) {
        NA_VERBS_LOG("ibv_create_cq(%d): %s", cls->cq_size, strerror(errno));
        ret = NA_NOMEM;
        goto destroy_comp;
    }
    /* Every queue pair shares the class's CQ, so the CQ size caps the
     * number of connections: an overrun CQ would lose completions. */
    cls->max_conns = (unsigned int) (cls->cq_size / per_conn);
    return NA_SUCCESS;

destroy_comp:
    if (cls->comp_channel != NULL)
        ibv_destroy_comp_channel(cls->comp_channel);
    cls->comp_channel = NULL;
dealloc_pd:
    ibv_dealloc_pd(cls->pd);
    cls->pd = NULL;
destroy_id:
    rdma_destroy_id(cls->bind_id);
    cls->bind_id = NULL;
destroy_channel:
    rdma_destroy_event_channel(cls->cm_channel);
    cls->cm_channel = NULL;
    return ret;
}

/* Free a connection whose work requests are all accounted for (or, with
 * force, at finalize, when the CQ is about to go away too). */
static void
na_verbs_conn_destroy(struct na_verbs_conn *conn)
{
    struct na_verbs_class *cls = conn->cls;

    LIST_REMOVE(conn, entry);
    cls->conn_count--;
    if (conn->peer != NULL && conn->peer->conn == conn)
        conn->peer->conn = NULL;
    if (conn->id != NULL) {
        if (conn->qp_created)
            rdma_destroy_qp(conn->id);
        rdma_destroy_id(conn->id);
    }
    if (conn->mr != NULL)
        ibv_dereg_mr(conn->mr);
    na_verbs_addr_unref(conn->peer);
    free(conn->region);
    free(conn->recv_wr);
    free(conn->free_send);
    free(conn);
}

void
na_verbs_device_close(struct na_verbs_class *cls)
{
    struct na_verbs_conn *conn;

    pthread_mutex_lock(&cls->lock);
    while ((conn = LIST_FIRST(&cls->conns)) != NULL) {
        /* Tell the peer now rather than leaving it to its ACK timeout. */
        if (conn->id != NULL && conn->state != NA_VERBS_CONN_CLOSING &&
            conn->state != NA_VERBS_CONN_RESOLVING)
            (void) rdma_disconnect(conn->id);
        na_verbs_op_list_fail(&conn->pending, NA_CANCELED);
        na_verbs_conn_destroy(conn);
    }
    pthread_mutex_unlock(&cls->lock);
    if (cls->bind_id != NULL)
        rdma_destroy_id(cls->bind_id);
    if (cls->cq != NULL && ibv_destroy_cq(cls->cq) != 0)
        NA_VERBS_LOG("ibv_destroy_cq: %s", strerror(errno));
    if (cls->comp_channel != NULL)
        ibv_destroy_comp_channel(cls->comp_channel);
    /* Fails with EBUSY if the user still has registered memory handles;
     * the PD then stays allocated rather than being torn from under them. */
    if (cls->pd != NULL && ibv_dealloc_pd(cls->pd) != 0)
        NA_VERBS_LOG("protection domain still in use at finalize (memory "
                     "handles left registered?)");
    if (cls->cm_channel != NULL)
        rdma_destroy_event_channel(cls->cm_channel);
    cls->bind_id = NULL;
    cls->cq = NULL;
    cls->comp_channel = NULL;
    cls->pd = NULL;
    cls->cm_channel = NULL;
}

/* Allocate a connection and its registered buffers; the queue pair comes
 * later, once the id is bound to the device. */
static na_return_t
na_verbs_conn_alloc(struct na_verbs_class *cls, struct na_addr *peer,
                    struct rdma_cm_id *id, bool active,
                    struct na_verbs_conn **connp)
{
    uint32_t nrecv = NA_VERBS_RECV_CREDITS + 1;
    uint32_t nsend = NA_VERBS_RECV_CREDITS;
    struct na_verbs_conn *conn;
    size_t region_len;

    if (cls->conn_count >= cls->max_conns) {
        NA_VERBS_LOG("connection limit reached (%u, bounded by the CQ size)",
                     cls->max_conns);
        return NA_AGAIN;
    }
    conn = calloc(1, sizeof(*conn));
    if (conn == NULL)
        return NA_NOMEM;
    conn->cls = cls;
    conn->id = id;
    conn->active = active;
    conn->state = NA_VERBS_CONN_RESOLVING;
    na_op_list_init(&conn->pending);
    /* Slots are cache-line multiples so neighbouring buffers never share a
     * line that both the device and the CPU write. */
    conn->slot_size = (NA_VERBS_MSG_HDR_SIZE + cls->max_payload + 63) & ~63ul;
    region_len = conn->slot_size * (nrecv + nsend + 1);
    conn->recv_wr = calloc(nrecv, sizeof(*conn->recv_wr));
    conn->free_send = calloc(nsend, sizeof(*conn->free_send));
    if (posix_memalign((void **) &conn->region, 4096, region_len) != 0)
        conn->region = NULL;
    if (conn->recv_wr == NULL || conn->free_send == NULL ||
        conn->region == NULL)
        goto free_conn;
    memset(conn->region, 0, region_len);
    conn->mr =
        ibv_reg_mr(cls->pd, conn->region, region_len, IBV_ACCESS_LOCAL_WRITE);
    if (conn->mr == NULL) {
        NA_VERBS_LOG("ibv_reg_mr(%zu bytes) for connection buffers: %s",
                     region_len, strerror(errno));
        goto free_conn;
    }
    for (uint32_t i = 0; i < nrecv; i++)
        conn->recv_wr[i] = (struct na_verbs_wr){
            .kind = NA_VERBS_WR_RECV, .conn = conn, .slot = i};
    for (uint32_t i = 0; i < nsend; i++)
        conn->free_send[i] = nrecv + i;
    conn->free_send_count = nsend;
    conn->ctrl_wr = (struct na_verbs_wr){
        .kind = NA_VERBS_WR_CTRL, .conn = conn, .slot = nrecv + nsend};
    na_verbs_addr_ref(peer);
    conn->peer = peer;
    if (id != NULL)
        id->context = conn;
    LIST_INSERT_HEAD(&cls->conns, conn, entry);
    cls->conn_count++;
    *connp = conn;
    return NA_SUCCESS;

free_conn:
    free(conn->region);
    free(conn->recv_wr);
    free(conn->free_send);
    free(conn);
    return NA_NOMEM;
}

static na_return_t
na_verbs_conn_create_qp(struct na_verbs_conn *conn)
{
    struct na_verbs_class *cls = conn->cls;
    struct ibv_qp_init_attr attr = {
        .send_cq = cls->cq,
        .recv_cq = cls->cq,
        .cap = {.max_send_wr = NA_VERBS_SQ_DEPTH,
                .max_recv_wr = NA_VERBS_RECV_CREDITS + 1,
                .max_send_sge = 1,
                .max_recv_sge = 1},
        .qp_type = IBV_QPT_RC,
        .sq_sig_all = 1,
    };
    uint8_t timeout = NA_VERBS_ACK_TIMEOUT;

    if (conn->id->verbs != cls->verbs) {
        NA_VERBS_LOG("route to peer leaves through another RDMA device");
        return NA_HOSTUNREACH;
    }
    if (rdma_create_qp(conn->id, cls->pd, &attr) != 0) {
        return na_verbs_errno_error("rdma_create_qp", errno);
    }
    conn->qp_created = true;
    /* Bounded ACK timeout: a silent peer becomes an error completion in
     * seconds instead of the default of minutes. Not fatal if refused. */
    (void) rdma_set_option(conn->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
                           &timeout, sizeof(timeout));
    return na_verbs_conn_post_recvs(conn);
}

static void
na_verbs_conn_param(struct na_verbs_conn *conn, uint8_t *pdata,
                    struct rdma_conn_param *param)
{
    struct na_verbs_class *cls = conn->cls;
    struct na_verbs_conn_data data = {
        .ip = cls->ip,
        .port = cls->port,
        .credits = NA_VERBS_RECV_CREDITS,
        .max_payload = (uint32_t) cls->max_payload,
    };

    na_verbs_conn_data_encode(pdata, &data);
    memset(param, 0, sizeof(*param));
    param->private_data = pdata;
    param->private_data_len = NA_VERBS_CONN_DATA_SIZE;
    /* RDMA reads need outstanding read credits in both directions;
     * librdmacm's default of 0 would make every get fail. */
    param->responder_resources = (uint8_t) (cls->dev_attr.max_qp_rd_atom < 16
                                                ? cls->dev_attr.max_qp_rd_atom
                                                : 16);
    param->initiator_depth = (uint8_t) (cls->dev_attr.max_qp_init_rd_atom < 16
                                            ? cls->dev_attr.max_qp_init_rd_atom
                                            : 16);
    param->retry_count = NA_VERBS_RETRY_COUNT;
    param->rnr_retry_count = NA_VERBS_RNR_RETRY;
}

/* The live connection sends to this peer should use, if any. */
static struct na_verbs_conn *
na_verbs_conn_find_live(struct na_verbs_class *cls, struct na_addr *peer)
{
    struct na_verbs_conn *conn, *best = NULL;

    LIST_FOREACH(conn, &cls->conns, entry)
    {
        if (conn->peer != peer || conn->state == NA_VERBS_CONN_CLOSING)
            continue;
        if (conn->state == NA_VERBS_CONN_CONNECTED)
            return conn;
        if (best == NULL)
            best = conn;
    }
    return best;
}

na_return_t
na_verbs_conn_get(struct na_verbs_class *cls, struct na_addr *peer,
                  struct na_verbs_conn **connp)
{
    struct sockaddr_in src = {.sin_family = AF_INET};
    struct sockaddr_in dst = {.sin_family = AF_INET};
    struct na_verbs_conn *conn;
    struct rdma_cm_id *id;
    na_return_t ret;

    if (peer->conn != NULL && peer->conn->state != NA_VERBS_CONN_CLOSING) {
        *connp = peer->conn;
        return NA_SUCCESS;
    }
    conn = na_verbs_conn_find_live(cls, peer);
    if (conn != NULL) {
        peer->conn = conn;
        *connp = conn;
        return NA_SUCCESS;
    }
    if (rdma_create_id(cls->cm_channel, &id, NULL, RDMA_PS_TCP) != 0) {
        return na_verbs_errno_error("rdma_create_id", errno);
    }
    ret = na_verbs_conn_alloc(cls, peer, id, true, &conn);
    if (ret != NA_SUCCESS) {
        rdma_destroy_id(id);
        return ret;
    }
    /* Resolve from our own address so the connection uses our device. */
    src.sin_addr.s_addr = htonl(cls->ip);
    dst.sin_addr.s_addr = htonl(peer->ip);
    dst.sin_port = htons(peer->port);
    if (rdma_resolve_addr(id, (struct sockaddr *) &src,
                          (struct sockaddr *) &dst,
                          NA_VERBS_RESOLVE_TIMEOUT_MS) != 0) {
        ret = na_verbs_errno_error("rdma_resolve_addr", errno);
        na_verbs_conn_destroy(conn);
        return ret == NA_INVALID_ARG ? NA_HOSTUNREACH : ret;
    }
    peer->conn = conn;
    *connp = conn;
    return NA_SUCCESS;
}

void
na_verbs_conn_fail(struct na_verbs_conn *conn, na_return_t ret, const char *why)
{
    struct na_verbs_class *cls = conn->cls;
    struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};
    /* Work of the user's: a queued op, or a posted request other than the
     * credit return (a peer that closes while one is in flight has simply
     * left; that is not worth an error line). */
    bool had_work = !na_op_list_empty(&conn->pending) ||
                    conn->sq_used > (conn->ctrl_inflight ? 1u : 0u);
    char ipstr[INET_ADDRSTRLEN];

    if (conn->state == NA_VERBS_CONN_CLOSING)
        return;
    if (why != NULL &&
        (had_work || ret != NA_HOSTUNREACH || !conn->established)) {
        na_verbs_ip_string(conn->peer->ip, ipstr, sizeof(ipstr));
        NA_VERBS_LOG("connection to %s:%u lost: %s", ipstr,
                     (unsigned) conn->peer->port, why);
    }
    if (conn->established || conn->state == NA_VERBS_CONN_CONNECTING ||
        conn->state == NA_VERBS_CONN_ACCEPTING)
        (void) rdma_disconnect(conn->id);
    conn->state = NA_VERBS_CONN_CLOSING;
    conn->closing_since = na_plugin_clock_monotonic_ns();
    /* The error state flushes every posted work request back to the CQ,
     * which is what lets the in-flight operations complete. */
    if (conn->qp_created)
        (void) ibv_modify_qp(conn->id->qp, &attr, IBV_QP_STATE);
    na_verbs_op_list_fail(&conn->pending,
                          ret == NA_SUCCESS ? NA_HOSTUNREACH : ret);
    if (conn->peer->conn == conn)
        conn->peer->conn = na_verbs_conn_find_live(cls, conn->peer);
    if (conn->peer->conn == NULL)
        na_verbs_msg_peer_lost(cls, conn->peer);
}

void
na_verbs_conn_reap(struct na_verbs_class *cls)
{
    struct na_verbs_conn *conn, *next;
    uint64_t now = 0;

    for (conn = LIST_FIRST(&cls->conns); conn != NULL; conn = next) {
        next = LIST_NEXT(conn, entry);
        if (conn->state != NA_VERBS_CONN_CLOSING || conn->sq_used > 0)
            continue;
        if (conn->recv_posted == 0) {
            na_verbs_conn_destroy(conn);
            continue;
        }
        /* Some providers do not flush the receive queue of a queue pair in
         * the error state. After a grace period, destroy the queue pair
         * (no completion can be generated for it afterwards) but keep the
         * wr_id targets, marked dead, until finalize, so a completion that
         * was queued just before cannot touch freed memory. */
        if (now == 0)
            now = na_plugin_clock_monotonic_ns();
        if (!conn->zombie &&
            now - conn->closing_since > NA_VERBS_FLUSH_WAIT_NS) {
            NA_VERBS_LOG("%u receive buffer(s) of a closed connection were "
                         "not flushed within 2 s; destroying its queue pair",
                         conn->recv_posted);
            if (conn->qp_created)
                rdma_destroy_qp(conn->id);
            conn->qp_created = false;
            rdma_destroy_id(conn->id);
            conn->id = NULL;
            conn->zombie = true;
            if (conn->peer->conn == conn)
                conn->peer->conn = NULL;
        }
    }
}

static void
na_verbs_reject(struct rdma_cm_id *id)
{
    (void) rdma_reject(id, NULL, 0);
    rdma_destroy_id(id);
}

/* A peer asks to connect: check what it sent, build the queue pair and the
 * buffers, and accept. */
static void
na_verbs_handle_request(struct na_verbs_class *cls, struct rdma_cm_id *id,
                        const uint8_t *pdata, size_t pdata_len)
{
    struct na_verbs_conn_data data;
    struct rdma_conn_param param;
    uint8_t reply[NA_VERBS_CONN_DATA_SIZE];
    struct na_verbs_conn *conn;
    struct na_addr *peer;

    if (na_verbs_conn_data_decode(pdata, pdata_len, &data) != NA_SUCCESS) {
        NA_VERBS_LOG("rejected a connection request with malformed private "
                     "data (%zu bytes)",
                     pdata_len);
        na_verbs_reject(id);
        return;
    }
    if (id->verbs != cls->verbs ||
        na_verbs_addr_get(cls, data.ip, data.port, &peer) != NA_SUCCESS) {
        na_verbs_reject(id);
        return;
    }
    if (na_verbs_conn_alloc(cls, peer, id, false, &conn) != NA_SUCCESS) {
        na_verbs_addr_unref(peer);
        na_verbs_reject(id);
        return;
    }
    na_verbs_addr_unref(peer); /* the connection holds its own reference */
    conn->send_credits = data.credits;
    conn->credits_granted = data.credits;
    conn->peer_max_payload = data.max_payload;
    conn->state = NA_VERBS_CONN_ACCEPTING;
    if (na_verbs_conn_create_qp(conn) != NA_SUCCESS) {
        (void) rdma_reject(id, NULL, 0);
        na_verbs_conn_fail(conn, NA_IO_ERROR, "cannot set up the queue pair");
        return;
    }
    na_verbs_conn_param(conn, reply, &param);
    if (rdma_accept(id, &param) != 0) {
        NA_VERBS_LOG("rdma_accept: %s", strerror(errno));
        na_verbs_conn_fail(conn, NA_IO_ERROR, "accept failed");
    }
}

static void
na_verbs_handle_established(struct na_verbs_conn *conn, const uint8_t *pdata,
                            size_t pdata_len)
{
    struct na_verbs_conn_data data;

    if (conn->active) {
        if (na_verbs_conn_data_decode(pdata, pdata_len, &data) != NA_SUCCESS) {
            na_verbs_conn_fail(conn, NA_PROTOCOL_ERROR,
                               "malformed accept private data");
            return;
        }
        conn->send_credits = data.credits;
        conn->credits_granted = data.credits;
        conn->peer_max_payload = data.max_payload;
    }
    conn->state = NA_VERBS_CONN_CONNECTED;
    conn->established = true;
    if (conn->peer->conn == NULL)
        conn->peer->conn = conn;
    na_verbs_conn_kick(conn);
}

static void
na_verbs_handle_route(struct na_verbs_conn *conn)
{
    struct rdma_conn_param param;
    uint8_t pdata[NA_VERBS_CONN_DATA_SIZE];
    na_return_t ret;

    ret = na_verbs_conn_create_qp(conn);
    if (ret != NA_SUCCESS) {
        na_verbs_conn_fail(conn, ret, "cannot set up the queue pair");
        return;
    }
    na_verbs_conn_param(conn, pdata, &param);
    if (rdma_connect(conn->id, &param) != 0) {
        na_verbs_conn_fail(conn, NA_HOSTUNREACH, strerror(errno));
        return;
    }
    conn->state = NA_VERBS_CONN_CONNECTING;
}

/* A copy of what we need from a CM event, taken before acknowledging it. */
struct na_verbs_cm_event {
    enum rdma_cm_event_type type;
    int status;
    struct rdma_cm_id *id;
    uint8_t pdata[64];
    size_t pdata_len;
};

static void
na_verbs_handle_event(struct na_verbs_class *cls,
                      const struct na_verbs_cm_event *ev)
{
    struct na_verbs_conn *conn = ev->id->context;

    if (ev->type == RDMA_CM_EVENT_CONNECT_REQUEST) {
        na_verbs_handle_request(cls, ev->id, ev->pdata, ev->pdata_len);
        return;
    }
    if (ev->type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
        LIST_FOREACH(conn, &cls->conns, entry)
        na_verbs_conn_fail(conn, NA_NODEV, "RDMA device removed");
        return;
    }
    if (conn == NULL || conn->state == NA_VERBS_CONN_CLOSING)
        return;
    switch (ev->type) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
        if (rdma_resolve_route(conn->id, NA_VERBS_RESOLVE_TIMEOUT_MS) != 0)
            na_verbs_conn_fail(conn, NA_HOSTUNREACH, strerror(errno));
        break;
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
        na_verbs_handle_route(conn);
        break;
    case RDMA_CM_EVENT_ESTABLISHED:
        na_verbs_handle_established(conn, ev->pdata, ev->pdata_len);
        break;
    case RDMA_CM_EVENT_ADDR_ERROR:
        na_verbs_conn_fail(conn, NA_HOSTUNREACH, "address resolution failed");
        break;
    case RDMA_CM_EVENT_ROUTE_ERROR:
        na_verbs_conn_fail(conn, NA_HOSTUNREACH, "route resolution failed");
        break;
    case RDMA_CM_EVENT_UNREACHABLE:
        na_verbs_conn_fail(conn, NA_HOSTUNREACH, "peer unreachable");
        break;
    case RDMA_CM_EVENT_REJECTED:
        na_verbs_conn_fail(conn, NA_HOSTUNREACH,
                           "connection rejected (no listener at that "
                           "address?)");
        break;
    case RDMA_CM_EVENT_CONNECT_ERROR:
        na_verbs_conn_fail(conn, NA_HOSTUNREACH, "connection error");
        break;
    case RDMA_CM_EVENT_DISCONNECTED:
        /* Reap what already completed first: a send the peer acknowledged
         * before it closed is done, not work the close interrupts. */
        (void) na_verbs_cq_progress(cls);
        na_verbs_conn_fail(conn, NA_HOSTUNREACH, "peer disconnected");
        break;
    default:
        /* TIMEWAIT_EXIT, ADDR_CHANGE, ...: nothing to do. */
        break;
    }
}

void
na_verbs_cm_progress(struct na_verbs_class *cls)
{
    struct rdma_cm_event *event;

    while (rdma_get_cm_event(cls->cm_channel, &event) == 0) {
        struct na_verbs_cm_event ev = {
            .type = event->event,
            .status = event->status,
            .id = event->id,
        };
        const struct rdma_conn_param *cp = &event->param.conn;

        if (cp->private_data != NULL) {
            ev.pdata_len = cp->private_data_len < sizeof(ev.pdata)
                               ? cp->private_data_len
                               : sizeof(ev.pdata);
            memcpy(ev.pdata, cp->private_data, ev.pdata_len);
        }
        rdma_ack_cm_event(event);
        na_verbs_handle_event(cls, &ev);
    }
}
