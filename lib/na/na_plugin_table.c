/*
 * The static plugin table. Order matters: an info string with no class
 * picks the first plugin that accepts its protocol.
 */
#include "na/na_internal.h"

#include "na_config.h"

extern const struct na_class_ops na_sim_class_ops;
#if QS_PLUGIN_SM_ENABLED
extern const struct na_class_ops na_sm_class_ops;
#endif
#if QS_PLUGIN_TCP_ENABLED
extern const struct na_class_ops na_tcp_class_ops;
#endif
#if QS_PLUGIN_OFI_ENABLED
extern const struct na_class_ops na_ofi_class_ops;
#endif
#if QS_PLUGIN_VERBS_ENABLED
extern const struct na_class_ops na_verbs_class_ops;
#endif

const struct na_class_ops *const na_plugin_table[] = {
    &na_sim_class_ops,
#if QS_PLUGIN_SM_ENABLED
    &na_sm_class_ops,
#endif
#if QS_PLUGIN_TCP_ENABLED
    &na_tcp_class_ops, /* before ofi: a bare "tcp" is the native plugin */
#endif
#if QS_PLUGIN_OFI_ENABLED
    &na_ofi_class_ops,
#endif
#if QS_PLUGIN_VERBS_ENABLED
    &na_verbs_class_ops,
#endif
    NULL,
};
