/*
 * auto_sm: an NA class that reaches peers on this node over shared memory
 * (na+sm) and the others over the network class named by info_string.
 * The core finds it in the plugin table: the first plugin whose ops have
 * auto_initialize (the shared-memory plugin, plugins/sm/na_sm_auto.c,
 * when built). Used by HG_Init_opt2() for hg_init_info.auto_sm.
 */
#ifndef NA_AUTO_SM_H
#define NA_AUTO_SM_H

#include "na.h"

#include <stdbool.h>

/* Whether a plugin of this build provides auto_sm. */
bool na_auto_sm_available(void);

/* sm_info_string: the shared-memory class's info string (NULL: "na+sm").
 * Returns NULL (and logs why) on failure, or when no plugin provides
 * auto_sm; free with NA_Finalize(). */
na_class_t *na_auto_sm_initialize(const char *info_string,
                                  const char *sm_info_string, bool listen,
                                  const struct na_init_info *na_init_info);

#endif /* NA_AUTO_SM_H */
