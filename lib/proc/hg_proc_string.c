/*
 * String procs. Both string types share one implementation that works on a
 * `char **`: the const one differs only in the pointer type the program sees.
 */
#include "mercury_proc_string.h"

#include <stdlib.h>
#include <string.h>

static hg_return_t
proc_string_encode(hg_proc_t proc, const char *s)
{
    hg_size_t n = 0;
    hg_return_t ret;

    if (s != NULL)
        n = (hg_size_t) strlen(s) + 1;
    ret = hg_proc_uint64_t(proc, &n);
    if (ret != HG_SUCCESS || n == 0)
        return ret;
    return hg_proc_memcpy(proc, (void *) (uintptr_t) s, n);
}

/* Writes *out only on success; on failure the caller's field is cleared. */
static hg_return_t
proc_string_decode(hg_proc_t proc, char **out)
{
    hg_size_t n = 0;
    const char *wire;
    char *copy;
    hg_return_t ret;

    ret = hg_proc_uint64_t(proc, &n);
    if (ret != HG_SUCCESS)
        return ret;
    if (n == 0) {
        *out = NULL;
        return HG_SUCCESS;
    }
    /* The count comes from the peer: it must fit in what was received
     * before anything is allocated, which also bounds the allocation by the
     * message size. */
    if (n > hg_proc_get_size_left(proc))
        return HG_OVERFLOW;
    wire = hg_proc_save_ptr(proc, n);
    if (wire == NULL)
        return HG_OVERFLOW;
    /* Exactly one NUL, at the end: anything else would decode to a string
     * whose re-encoding differs from what was sent. */
    if (memchr(wire, '\0', (size_t) n) != wire + n - 1)
        return HG_PROTOCOL_ERROR;
    copy = malloc((size_t) n);
    if (copy == NULL)
        return HG_NOMEM;
    memcpy(copy, wire, (size_t) n);
    hg_proc_restore_ptr(proc, (void *) (uintptr_t) wire, n);
    *out = copy;
    return HG_SUCCESS;
}

/*
 * `field` points to a char * or a const char *. It is read and written with
 * memcpy() because the two pointer types may not alias each other.
 */
static hg_return_t
proc_string(hg_proc_t proc, void *field)
{
    char *s;
    hg_return_t ret;

    if (proc == HG_PROC_NULL || field == NULL)
        return HG_INVALID_ARG;
    memcpy(&s, field, sizeof(s));
    switch (hg_proc_get_op(proc)) {
    case HG_ENCODE:
        return proc_string_encode(proc, s);
    case HG_DECODE:
        ret = proc_string_decode(proc, &s);
        if (ret != HG_SUCCESS)
            s = NULL;
        memcpy(field, &s, sizeof(s));
        return ret;
    case HG_FREE:
    default:
        /* A string reaching HG_FREE was allocated by a decode, whatever
         * the constness of the field that holds it. */
        free(s);
        s = NULL;
        memcpy(field, &s, sizeof(s));
        return HG_SUCCESS;
    }
}

hg_return_t
hg_proc_hg_string_t(hg_proc_t proc, void *data)
{
    return proc_string(proc, data);
}

hg_return_t
hg_proc_hg_const_string_t(hg_proc_t proc, void *data)
{
    return proc_string(proc, data);
}

/* The string travels as an hg_string_t does; the flags are this side's
 * business and stay off the wire. A decoded object owns its copy. */
hg_return_t
hg_proc_hg_string_object_t(hg_proc_t proc, void *string)
{
    hg_string_object_t *obj = string;
    char *s = NULL;
    hg_return_t ret;

    if (proc == HG_PROC_NULL || obj == NULL)
        return HG_INVALID_ARG;
    switch (hg_proc_get_op(proc)) {
    case HG_ENCODE:
        return proc_string_encode(proc, obj->data);
    case HG_DECODE:
        ret = proc_string_decode(proc, &s);
        hg_string_object_init_char(obj, ret == HG_SUCCESS ? s : NULL, 1);
        return ret;
    case HG_FREE:
    default:
        return hg_string_object_free(obj);
    }
}
