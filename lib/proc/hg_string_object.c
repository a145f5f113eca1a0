/*
 * String objects (include/mercury_string_object.h). Their proc,
 * hg_proc_hg_string_object_t(), is in hg_proc_string.c beside the other
 * string procs, whose wire format it shares.
 */
#include "mercury_string_object.h"

#include <stdlib.h>
#include <string.h>

hg_return_t
hg_string_object_init(hg_string_object_t *string)
{
    return hg_string_object_init_char(string, NULL, 0);
}

hg_return_t
hg_string_object_init_char(hg_string_object_t *string, char *s,
                           uint8_t is_owned)
{
    if (string == NULL)
        return HG_INVALID_ARG;
    string->data = s;
    string->is_owned = is_owned != 0;
    string->is_const = false;
    return HG_SUCCESS;
}

hg_return_t
hg_string_object_init_const_char(hg_string_object_t *string, const char *s,
                                 uint8_t is_owned)
{
    hg_return_t ret;

    /* The object keeps a char *; is_const records that it must not be
     * written through. */
    ret = hg_string_object_init_char(string, (char *) (uintptr_t) s, is_owned);
    if (ret == HG_SUCCESS)
        string->is_const = true;
    return ret;
}

hg_return_t
hg_string_object_free(hg_string_object_t *string)
{
    if (string == NULL)
        return HG_INVALID_ARG;
    if (string->is_owned) {
        free(string->data);
        string->data = NULL;
        string->is_owned = false;
    }
    return HG_SUCCESS;
}

hg_return_t
hg_string_object_dup(hg_string_object_t string, hg_string_object_t *new_string)
{
    char *copy = NULL;

    if (new_string == NULL)
        return HG_INVALID_ARG;
    if (string.data != NULL) {
        copy = strdup(string.data);
        if (copy == NULL)
            return HG_NOMEM;
    }
    return hg_string_object_init_char(new_string, copy, 1);
}

char *
hg_string_object_swap(hg_string_object_t *string, char *s)
{
    char *old;

    if (string == NULL)
        return NULL;
    old = string->data;
    string->data = s;
    string->is_const = false;
    string->is_owned = false;
    return old;
}
