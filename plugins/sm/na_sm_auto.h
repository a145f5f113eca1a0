/*
 * The auto_sm class (na_sm_auto.c), which the shared-memory plugin's ops
 * table offers as auto_initialize: the core reaches it through
 * na_auto_sm_initialize() (lib/na/na_auto_sm.h). Its own header, since
 * the plain and the auto plugin each define the core's opaque structs.
 */
#ifndef NA_SM_AUTO_H
#define NA_SM_AUTO_H

#include "na.h"

#include <stdbool.h>

na_class_t *na_sm_auto_initialize(const char *info_string,
                                  const char *sm_info_string, bool listen,
                                  const struct na_init_info *na_init_info);

#endif /* NA_SM_AUTO_H */
