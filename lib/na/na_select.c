/*
 * Choosing the plugin for an info string, and the checks that keep one
 * meaning per transport name: "tcp", "na+tcp", "ofi+tcp" and
 * "ofi+tcp;ofi_rxm" select one plugin in a process, and an address that
 * names another class's protocol is refused at lookup. Also the auto_sm
 * class (asked of the plugin table) and QS_NA_INFO, which moves an
 * unchanged program to another fabric.
 */
#include "na/na_auto_sm.h"
#include "na/na_internal.h"

#include <stdlib.h>
#include <string.h>

/*
 * One transport, one meaning (docs/architecture.md, "Transport names").
 * "tcp", "na+tcp", "ofi+tcp" and "ofi+tcp;ofi_rxm" all name TCP, and one
 * plugin serves all of them in a process: the native plugin, or, when the
 * environment says QS_OFI_TCP=libfabric, libfabric's tcp provider through
 * the ofi plugin. A build without the native plugin falls back to
 * libfabric. Class "na" names no plugin of its own ("na+sm" is the
 * shared-memory plugin), so it is treated as no class.
 */
bool
na_protocol_is_tcp(const char *protocol_name)
{
    return strcmp(protocol_name, "tcp") == 0 ||
           strcmp(protocol_name, "tcp;ofi_rxm") == 0;
}

static bool
na_tcp_by_libfabric(void)
{
    const char *env = getenv("QS_OFI_TCP");

    return env != NULL && strcmp(env, "libfabric") == 0;
}

/* The first plugin of the table in class `want` ("" for any) that accepts
 * the protocol. */
static const struct na_class_ops *
na_plugin_find(const char *want, const char *protocol_name)
{
    for (size_t i = 0; na_plugin_table[i] != NULL; i++) {
        const struct na_class_ops *ops = na_plugin_table[i];

        if (want[0] != '\0' && strcmp(want, ops->class_name) != 0)
            continue;
        if (ops->check_protocol(protocol_name))
            return ops;
    }
    return NULL;
}

/* The plugin that provides auto_sm, if this build has one. */
static const struct na_class_ops *
na_plugin_auto_sm(void)
{
    for (size_t i = 0; na_plugin_table[i] != NULL; i++)
        if (na_plugin_table[i]->auto_initialize != NULL)
            return na_plugin_table[i];
    return NULL;
}

bool
na_auto_sm_available(void)
{
    return na_plugin_auto_sm() != NULL;
}

na_class_t *
na_auto_sm_initialize(const char *info_string, const char *sm_info_string,
                      bool listen, const struct na_init_info *na_init_info)
{
    const struct na_class_ops *ops = na_plugin_auto_sm();

    if (ops == NULL) {
        qs_log("na", QS_LOG_ERROR,
               "auto_sm: no plugin of this build provides it (it needs the "
               "shared-memory plugin)");
        return NULL;
    }
    return ops->auto_initialize(info_string, sm_info_string, listen,
                                na_init_info);
}

/* Pick the plugin: TCP by the rule above; otherwise by class name when
 * given, else the first one that accepts the protocol. */
const struct na_class_ops *
na_plugin_select(const struct na_info *info)
{
    const char *want = info->class_name;
    const struct na_class_ops *ops;

    if (na_protocol_is_tcp(info->protocol_name)) {
        ops = na_plugin_find(na_tcp_by_libfabric() ? "ofi" : "na", "tcp");
        return ops != NULL ? ops : na_plugin_find("", "tcp");
    }
    if (strcmp(want, "na") == 0)
        want = "";
    return na_plugin_find(want, info->protocol_name);
}

/* Whether two protocol names are one wire protocol. */
static bool
na_protocol_same(const char *a, const char *b)
{
    if (na_protocol_is_tcp(a) && na_protocol_is_tcp(b))
        return true;
    return strcmp(a, b) == 0;
}

static bool
na_plugin_in_table(const struct na_class_ops *ops)
{
    for (size_t i = 0; na_plugin_table[i] != NULL; i++)
        if (na_plugin_table[i] == ops)
            return true;
    return false;
}

/*
 * An address string that names its protocol ("[class+]protocol://...")
 * must name this class's: the same plugin and the same wire protocol.
 * Anything else is refused here, before any plugin parses it, so a
 * mismatch shows at lookup as NA_PROTONOSUPPORT rather than later as an
 * unreachable host. Bare addresses, and classes built outside the table
 * (auto_sm, whose inner classes judge), are the plugin's to parse.
 */
na_return_t
na_addr_lookup_check(na_class_t *na_class, const char *name)
{
    const char *sep = strstr(name, "://"), *proto = name, *plus;
    struct na_info li;
    size_t n;

    if (sep == NULL || !na_plugin_in_table(na_class->ops))
        return NA_SUCCESS;
    memset(&li, 0, sizeof(li));
    plus = memchr(name, '+', (size_t) (sep - name));
    if (plus != NULL) {
        n = (size_t) (plus - name);
        memcpy(li.class_name, name,
               n < sizeof(li.class_name) ? n : sizeof(li.class_name) - 1);
        proto = plus + 1;
    }
    n = (size_t) (sep - proto);
    memcpy(li.protocol_name, proto,
           n < sizeof(li.protocol_name) ? n : sizeof(li.protocol_name) - 1);
    if (li.protocol_name[0] != '\0' && na_plugin_select(&li) == na_class->ops &&
        na_protocol_same(li.protocol_name, na_class->protocol_name))
        return NA_SUCCESS;
    qs_log("na", QS_LOG_ERROR,
           "NA_Addr_lookup(\"%s\"): protocol \"%.*s\" is not this class's "
           "\"%s+%s\"; they are different wire protocols",
           name, (int) (sep - name), name, na_class->ops->class_name,
           na_class->protocol_name);
    return NA_PROTONOSUPPORT;
}

/* QS_NA_INFO runs an unchanged program on another fabric (qs-sweep sets
 * it to "sim"): it replaces every info string whose protocol differs from
 * its own, and leaves alone those that already name that protocol, so
 * "sim://server" keeps its node name under QS_NA_INFO=sim. */
const char *
na_info_override(const char *info_string)
{
    const char *env = getenv(NA_INFO_ENV);
    char cls[2][64], proto[2][64], host[2][256];

    if (env == NULL || *env == '\0' || strcmp(env, info_string) == 0)
        return info_string;
    if (NA_Info_string_parse(env, cls[0], proto[0], host[0], 64) !=
        NA_SUCCESS) {
        qs_log("na", QS_LOG_ERROR, "%s=\"%s\" is malformed, ignored",
               NA_INFO_ENV, env);
        return info_string;
    }
    if (NA_Info_string_parse(info_string, cls[1], proto[1], host[1], 64) ==
            NA_SUCCESS &&
        strcmp(proto[0], proto[1]) == 0)
        return info_string;
    return env;
}
