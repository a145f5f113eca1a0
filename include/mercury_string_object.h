/*
 * String objects (Mercury 2.4's mercury_string_object.h): a C string with
 * whether it may be written and whether its holder must free it, for
 * procs that encode a string they do not own and decode one they do
 * (hg_proc_hg_string_object_t() in mercury_proc_string.h).
 */
#ifndef MERCURY_STRING_OBJECT_H
#define MERCURY_STRING_OBJECT_H

#include "qs_export.h"
#include "mercury_types.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hg_string_object {
    char *data;    /* the string, or NULL                          */
    bool is_const; /* made from a const char *: not to be written   */
    bool is_owned; /* hg_string_object_free() frees data            */
} hg_string_object_t;

/* An empty object (NULL data, not owned). HG_INVALID_ARG for NULL. */
QS_EXPORT hg_return_t hg_string_object_init(hg_string_object_t *string);

/* Wrap `s`; with is_owned non-zero the object frees it (it must come from
 * malloc()). The const form marks the object is_const. HG_INVALID_ARG for
 * a NULL object. */
QS_EXPORT hg_return_t hg_string_object_init_char(hg_string_object_t *string,
                                                 char *s, uint8_t is_owned);
QS_EXPORT hg_return_t hg_string_object_init_const_char(
    hg_string_object_t *string, const char *s, uint8_t is_owned);

/* Free data if the object owns it, and set it to NULL; an object that does
 * not own its data is left as it is. HG_INVALID_ARG for NULL. */
QS_EXPORT hg_return_t hg_string_object_free(hg_string_object_t *string);

/* A copy of string's data (strdup), owned and writable. HG_NOMEM on
 * failure; NULL data gives a NULL copy; HG_INVALID_ARG for a NULL
 * new_string. */
QS_EXPORT hg_return_t hg_string_object_dup(hg_string_object_t string,
                                           hg_string_object_t *new_string);

/* Put `s` in the object (not owned, not const) and return the data it held,
 * which the caller now owns if the object did. NULL object: NULL. */
QS_EXPORT char *hg_string_object_swap(hg_string_object_t *string, char *s);

#ifdef __cplusplus
}
#endif

#endif /* MERCURY_STRING_OBJECT_H */
