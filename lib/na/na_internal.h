/* Private to the NA core (lib/na). */
#ifndef NA_INTERNAL_H
#define NA_INTERNAL_H

#include "na/na_plugin.h"

/* NULL-terminated, in selection order. */
extern const struct na_class_ops *const na_plugin_table[];

/* Errors are logged once where they start: qs_log("na", QS_LOG_ERROR, ...). */
#include "util/qs_log.h"

#endif /* NA_INTERNAL_H */
