/*
 * auto_sm: the class made of a network class and a shared-memory class
 * (see na_sm_auto_internal.h): creation and finalize, the ops table, op
 * ids and the few class queries.
 */
#include "na_sm_auto_internal.h"

#include "na_sm_auto.h"
#include "util/qs_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* This boot of this machine: peers with the same id share our memory. */
static void
na_auto_read_node(char *node)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    size_t n = 0;

    node[0] = '\0';
    if (f != NULL) {
        if (fgets(node, NA_AUTO_NODE_MAX, f) == NULL)
            node[0] = '\0';
        fclose(f);
    }
    n = strcspn(node, "\n");
    node[n] = '\0';
    if (n == 0 && gethostname(node, NA_AUTO_NODE_MAX - 1) != 0)
        strcpy(node, "localhost");
    node[NA_AUTO_NODE_MAX - 1] = '\0';
    for (char *p = node; *p; p++)
        if (*p == '#' || *p == '@')
            *p = '-';
}

/*
 * The core has moved the op from idle to posted. An op that an inner
 * class will carry (side >= 0) starts here, before the handoff; false: a
 * cancel came first, and the op is finished as canceled. An unexpected
 * receive (side -1) starts when it joins the posted list.
 */
bool
na_auto_op_start(struct na_op_id *op, const struct na_op_desc *desc, int side)
{
    op->context = desc->context;
    op->side = side;
    atomic_fetch_add(&na_auto_ctx(desc->context)->pending, 1);
    if (side < 0 || na_op_start(op))
        return true;
    na_auto_op_finish(op, NA_CANCELED);
    return false;
}

/*
 * After the inner post returned `ret`. A refused post is undone. A cancel
 * that came after na_auto_op_start() but before the inner op was posted
 * found nothing to cancel there, so it is passed on now (a second cancel
 * of the inner op does nothing). The op may have completed meanwhile:
 * only the arguments are read.
 */
na_return_t
na_auto_op_handed(struct na_op_id *op, struct na_auto_class *cls,
                  struct na_auto_context *ac, int side, na_return_t ret)
{
    if (ret != NA_SUCCESS)
        atomic_fetch_sub(&ac->pending, 1);
    else if (na_op_cancel_requested(&op->base))
        (void) NA_Cancel(cls->inner[side], ac->inner[side], op->inner[side]);
    return ret;
}

void
na_auto_op_finish(struct na_op_id *op, na_return_t ret)
{
    struct na_auto_context *ac = na_auto_ctx(op->context);

    atomic_fetch_add(&ac->completed, 1);
    atomic_fetch_add(&ac->cls->completed, 1);
    na_op_finish(op, ret);
    atomic_fetch_sub(&ac->pending, 1);
}

/* An inner operation completed (runs from our NA_Trigger of it). */
void
na_auto_inner_cb(const struct na_cb_info *info)
{
    struct na_op_id *op = info->arg;

    if (info->type == NA_CB_RECV_EXPECTED)
        op->base.info.info.recv_expected.actual_buf_size =
            info->info.recv_expected.actual_buf_size;
    na_auto_op_finish(op, info->ret);
}

static bool
na_auto_check_protocol(const char *protocol_name)
{
    (void) protocol_name;
    return false; /* never chosen by an info string */
}

static na_return_t
na_auto_initialize_op(na_class_t *na_class, const struct na_info *info,
                      bool listen)
{
    (void) na_class;
    (void) info;
    (void) listen;
    return NA_OPNOTSUPPORTED;
}

static na_return_t
na_auto_finalize(na_class_t *na_class)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    na_return_t ret;

    if (cls == NULL)
        return NA_SUCCESS;
    ret = NA_Finalize(cls->inner[NA_AUTO_SM]);
    if (ret != NA_SUCCESS)
        return ret;
    cls->inner[NA_AUTO_SM] = NULL;
    ret = NA_Finalize(cls->inner[NA_AUTO_NET]);
    if (ret != NA_SUCCESS)
        return ret;
    free(cls);
    na_class->plugin_class = NULL;
    return NA_SUCCESS;
}

static const struct na_class_ops na_auto_class_ops = {
    .class_name = "auto_sm",
    .check_protocol = na_auto_check_protocol,
    .initialize = na_auto_initialize_op,
    .finalize = na_auto_finalize,
    .context = &na_auto_context_ops,
    .addr = &na_auto_addr_ops,
    .msg = &na_auto_msg_ops,
    .mem = &na_auto_mem_ops,
};

static size_t
na_auto_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

/*
 * An info string may be an auto_sm address of this node
 * ("<network>#na+sm://<name>@<boot id>", as a class prints itself), to
 * start a class again at the address a previous one had: the network part
 * is the network info string, and the shared-memory name is taken when
 * the boot id is ours and no sm_info_string was given. net_info and
 * sm_info receive the two strings (sm_info "" when there is none).
 */
static int
na_auto_split_info(const char *info, const char *node, char *net_info,
                   size_t net_size, char *sm_info, size_t sm_size)
{
    const char *hash = strchr(info, '#'), *at;
    size_t n;

    sm_info[0] = '\0';
    if (hash == NULL) {
        if (strlen(info) >= net_size)
            return -1;
        strcpy(net_info, info);
        return 0;
    }
    n = (size_t) (hash - info);
    if (n == 0 || n >= net_size)
        return -1;
    memcpy(net_info, info, n);
    net_info[n] = '\0';
    at = strrchr(hash, '@');
    if (at == NULL || strcmp(at + 1, node) != 0)
        return 0; /* another node's (or another boot's) name: not ours */
    n = (size_t) (at - hash - 1);
    if (n >= sm_size)
        return -1;
    memcpy(sm_info, hash + 1, n);
    sm_info[n] = '\0';
    return 0;
}

na_class_t *
na_sm_auto_initialize(const char *info_string, const char *sm_info_string,
                      bool listen, const struct na_init_info *na_init_info)
{
    struct na_init_info ii =
        na_init_info ? *na_init_info : NA_INIT_INFO_INITIALIZER;
    struct na_init_info sm_ii = ii;
    struct na_auto_class *cls;
    na_class_t *net, *sm, *outer;
    char node[NA_AUTO_NODE_MAX], net_info[512], sm_info[128];

    na_auto_read_node(node);
    if (info_string == NULL ||
        na_auto_split_info(info_string, node, net_info, sizeof(net_info),
                           sm_info, sizeof(sm_info)) != 0) {
        na_plugin_log_error("auto_sm", "bad info string \"%s\"",
                            info_string ? info_string : "(null)");
        return NULL;
    }
    if (sm_info_string == NULL && sm_info[0] != '\0')
        sm_info_string = sm_info;
    net = NA_Initialize_opt2(net_info, listen, NA_VERSION(NA_VERSION_MAJOR, 0),
                             &ii);
    if (net == NULL)
        return NULL;
    if (strcmp(NA_Get_class_protocol(net), "sm") == 0)
        return net; /* already shared memory: nothing to add */
    if (strcmp(NA_Get_class_name(net), "sim") == 0) {
        /* The simulated world lives in this process on a virtual clock:
         * real shared memory beside it would only break its determinism. */
        na_plugin_log_error("auto_sm",
                            "auto_sm does not apply to the simulated fabric "
                            "(\"%s\")",
                            net_info);
        NA_Finalize(net);
        return NULL;
    }
    /* Network-only options stay with the network class. */
    sm_ii.ip_subnet = NULL;
    sm_ii.auth_key = NULL;
    sm_ii.multi_recv_op_max = 0;
    sm = NA_Initialize_opt2(sm_info_string ? sm_info_string : "na+sm", listen,
                            NA_VERSION(NA_VERSION_MAJOR, 0), &sm_ii);
    if (sm == NULL) {
        na_plugin_log_error("auto_sm", "no shared-memory class (\"%s\")",
                            sm_info_string ? sm_info_string : "na+sm");
        NA_Finalize(net);
        return NULL;
    }
    cls = calloc(1, sizeof(*cls));
    outer = qs_calloc_lines(sizeof(*outer));
    if (cls == NULL || outer == NULL ||
        (outer->protocol_name = strdup(NA_Get_class_protocol(net))) == NULL) {
        free(cls);
        qs_free_lines(outer, sizeof(*outer));
        NA_Finalize(sm);
        NA_Finalize(net);
        return NULL;
    }
    cls->inner[NA_AUTO_NET] = net;
    cls->inner[NA_AUTO_SM] = sm;
    memcpy(cls->node, node, sizeof(cls->node));
    cls->ops = na_auto_class_ops;
    cls->ops.class_name = NA_Get_class_name(net);
    cls->max_unexp = na_auto_min(NA_Msg_get_max_unexpected_size(net),
                                 NA_Msg_get_max_unexpected_size(sm));
    cls->max_exp = na_auto_min(NA_Msg_get_max_expected_size(net),
                               NA_Msg_get_max_expected_size(sm));
    cls->max_tag = NA_Msg_get_max_tag(net) < NA_Msg_get_max_tag(sm)
                       ? NA_Msg_get_max_tag(net)
                       : NA_Msg_get_max_tag(sm);
    cls->no_block = (ii.progress_mode & NA_NO_BLOCK) != 0;
    outer->ops = &cls->ops;
    outer->plugin_class = cls;
    outer->listen = listen;
    na_plugin_set_msg_limits(outer, cls->max_unexp, cls->max_exp, cls->max_tag);
    pthread_mutex_init(&outer->lock, NULL);
    return outer;
}
