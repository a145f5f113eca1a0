/*
 * auto_sm: an NA class that reaches peers on this node over shared memory
 * (na+sm) and the others over the network class named by info_string.
 * Implemented by the shared-memory plugin (plugins/sm/na_sm_auto.c) when
 * QS_PLUGIN_SM_ENABLED; used by HG_Init_opt2() for hg_init_info.auto_sm.
 * sm_info_string: the shared-memory class's info string (NULL: "na+sm").
 * Returns NULL (and logs why) on failure; free with NA_Finalize().
 */
#ifndef NA_AUTO_SM_H
#define NA_AUTO_SM_H

#include "na.h"

na_class_t *na_sm_auto_initialize(const char *info_string,
                                  const char *sm_info_string, bool listen,
                                  const struct na_init_info *na_init_info);

#endif /* NA_AUTO_SM_H */
