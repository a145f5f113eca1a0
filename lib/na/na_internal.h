/* Private to the NA core (lib/na). */
#ifndef NA_INTERNAL_H
#define NA_INTERNAL_H

#include "na/na_plugin.h"

/* NULL-terminated, in selection order. */
extern const struct na_class_ops *const na_plugin_table[];

/* Log once where an error starts: "quicksilver: na: ...". */
void na_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* NA_INTERNAL_H */
