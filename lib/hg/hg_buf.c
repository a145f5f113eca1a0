/*
 * Raw access to a handle's message buffers (HG_Get_input_buf() and
 * friends) and the bytes a program reserves at their start
 * (HG_Class_set_input_offset() / _output_offset()).
 *
 * A request or response message is [header][reserved][arguments]: the
 * header is HG's own (HG_HEADER_SIZE bytes, never shown), the reserved
 * bytes are the program's, written into the buffer HG_Get_input_buf() /
 * HG_Get_output_buf() return before HG_Forward() / HG_Respond(), and
 * carried as they are; the encoded arguments follow them, or, when they
 * do not fit, the descriptor of the overflow transfer, and the arguments
 * arrive in the extra buffer (HG_Get_input_extra_buf()). Both sides must
 * set the same offsets: a message shorter than its header and reserved
 * bytes is refused as a protocol error.
 */
#include "hg/hg_internal.h"

#include <stdlib.h>

hg_return_t
HG_Class_set_input_offset(hg_class_t *hg_class, hg_size_t offset)
{
    if (hg_class == NULL)
        return HG_INVALID_ARG;
    /* As in Mercury: the reserved bytes must fit in an eager message. */
    if (offset > hg_class->in_eager_size)
        return HG_INVALID_ARG;
    hg_class->in_offset = offset;
    return HG_SUCCESS;
}

hg_return_t
HG_Class_set_output_offset(hg_class_t *hg_class, hg_size_t offset)
{
    if (hg_class == NULL)
        return HG_INVALID_ARG;
    if (offset > hg_class->out_eager_size)
        return HG_INVALID_ARG;
    hg_class->out_offset = offset;
    return HG_SUCCESS;
}

hg_return_t
hg_buf_input_args(struct hg_handle *handle, void **buf, hg_size_t *size)
{
    hg_size_t skip = HG_HEADER_SIZE + handle->ctx->hg_class->in_offset;

    if (handle->in_extra != NULL) {
        *buf = handle->in_extra;
        *size = handle->in_extra_size;
        return HG_SUCCESS;
    }
    /* Released (HG_Release_input_buf()) or never received. */
    if (handle->in_size < skip)
        return HG_FAULT;
    *buf = (char *) handle->in_buf + skip;
    *size = handle->in_size - skip;
    return HG_SUCCESS;
}

hg_return_t
hg_buf_output_args(struct hg_handle *handle, void **buf, hg_size_t *size)
{
    hg_size_t skip = HG_HEADER_SIZE + handle->ctx->hg_class->out_offset;

    if (handle->out_extra != NULL) {
        *buf = handle->out_extra;
        *size = handle->out_extra_size;
        return HG_SUCCESS;
    }
    if (handle->out_size < skip)
        return HG_FAULT;
    *buf = (char *) handle->out_buf + skip;
    *size = handle->out_size - skip;
    return HG_SUCCESS;
}

/*
 * The buffer after HG's header. Where the message is being written (the
 * origin's request, the target's response) it is the whole eager
 * capacity; where it was received, the bytes that arrived.
 */
hg_return_t
HG_Get_input_buf(hg_handle_t handle, void **in_buf_p, hg_size_t *in_buf_size_p)
{
    hg_size_t size;

    if (handle == HG_HANDLE_NULL || in_buf_p == NULL)
        return HG_INVALID_ARG;
    if (handle->is_target) {
        if (handle->in_size < HG_HEADER_SIZE)
            return HG_FAULT; /* released or never received */
        size = handle->in_size - HG_HEADER_SIZE;
    } else {
        size = handle->ctx->hg_class->in_eager_size;
    }
    *in_buf_p = (char *) handle->in_buf + HG_HEADER_SIZE;
    if (in_buf_size_p != NULL)
        *in_buf_size_p = size;
    return HG_SUCCESS;
}

hg_return_t
HG_Get_output_buf(hg_handle_t handle, void **out_buf_p,
                  hg_size_t *out_buf_size_p)
{
    hg_size_t size;

    if (handle == HG_HANDLE_NULL || out_buf_p == NULL)
        return HG_INVALID_ARG;
    if (!handle->is_target) {
        if (handle->out_size < HG_HEADER_SIZE)
            return HG_FAULT; /* no response received yet */
        size = handle->out_size - HG_HEADER_SIZE;
    } else {
        size = handle->ctx->hg_class->out_eager_size;
    }
    *out_buf_p = (char *) handle->out_buf + HG_HEADER_SIZE;
    if (out_buf_size_p != NULL)
        *out_buf_size_p = size;
    return HG_SUCCESS;
}

hg_return_t
HG_Get_input_extra_buf(hg_handle_t handle, void **in_buf_p,
                       hg_size_t *in_buf_size_p)
{
    if (handle == HG_HANDLE_NULL || in_buf_p == NULL)
        return HG_INVALID_ARG;
    /* The encoded input only: the reserved bytes stay in the message. */
    *in_buf_p = handle->in_extra;
    if (in_buf_size_p != NULL)
        *in_buf_size_p = handle->in_extra != NULL ? handle->in_extra_size : 0;
    return HG_SUCCESS;
}

hg_return_t
HG_Get_output_extra_buf(hg_handle_t handle, void **out_buf_p,
                        hg_size_t *out_buf_size_p)
{
    if (handle == HG_HANDLE_NULL || out_buf_p == NULL)
        return HG_INVALID_ARG;
    *out_buf_p = handle->out_extra;
    if (out_buf_size_p != NULL)
        *out_buf_size_p =
            handle->out_extra != NULL ? handle->out_extra_size : 0;
    return HG_SUCCESS;
}

/*
 * Let go of a received request's input before the handle is destroyed:
 * the overflowed copy is freed at once, and the input counts as gone
 * (HG_Get_input() and HG_Get_input_buf() give HG_FAULT, as Mercury's do
 * once a multi-receive buffer was released). The eager buffer itself
 * belongs to the handle and is reused when the handle is. A second call,
 * and a call on an origin handle, change nothing.
 */
hg_return_t
HG_Release_input_buf(hg_handle_t handle)
{
    if (handle == HG_HANDLE_NULL)
        return HG_INVALID_ARG;
    if (!handle->is_target)
        return HG_SUCCESS;
    free(handle->in_extra);
    handle->in_extra = NULL;
    handle->in_extra_size = 0;
    handle->in_size = 0;
    return HG_SUCCESS;
}
