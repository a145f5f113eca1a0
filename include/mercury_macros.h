/*
 * Macros that generate RPC argument structures and their procs.
 *
 *   MERCURY_GEN_PROC(sum_in_t, ((int32_t)(n))((hg_bulk_t)(bulk)))
 *
 * declares
 *
 *   typedef struct { int32_t n; hg_bulk_t bulk; } sum_in_t;
 *   static HG_INLINE hg_return_t hg_proc_sum_in_t(hg_proc_t, void *);
 *
 * The proc calls hg_proc_<type>() on each field in order and stops at the
 * first error. A field's type must be one identifier with a proc of that name:
 * a scalar or string type, hg_bulk_t, or another generated structure (which
 * nests). There is no limit on the number of fields.
 *
 * When a decode fails part way, the generated proc runs HG_FREE over the
 * fields it had already decoded before returning the error, so a failed
 * decode leaves nothing allocated and the structure must NOT be passed to
 * HG_FREE afterwards (its later fields were never written).
 *
 * The helpers are our own: a field list is a preprocessor "sequence" of
 * ((type)(name)) elements, walked by two macros that call each other
 * alternately (QS_..._A names QS_..._B after its output and vice versa), so
 * that neither is expanded inside its own expansion. The walk ends when a
 * token pasted with _END names an empty macro.
 */
#ifndef MERCURY_MACROS_H
#define MERCURY_MACROS_H

/* A program that includes only mercury.h and this header can use every
 * proc-able field type, so the proc headers come with it. mercury.h declares
 * HG_Register_name() for MERCURY_REGISTER. */
#include "mercury.h"
#include "mercury_proc.h"
#include "mercury_proc_bulk.h"
#include "mercury_proc_string.h"

/* Pasting after expansion of both operands. */
#define QS_PP_CAT(a, b) QS_PP_CAT_I(a, b)
#define QS_PP_CAT_I(a, b) a##b

/* A field element is (type)(name). */
#define QS_PP_EAT(x)
#define QS_PP_ID(x) x
#define QS_PP_HEAD_I(t) t QS_PP_EAT
#define QS_PP_TAIL_I(t) QS_PP_ID
#define QS_FIELD_TYPE(elem) QS_PP_HEAD_I elem
#define QS_FIELD_NAME(elem) QS_PP_TAIL_I elem
#define QS_FIELD_PROC(elem) QS_PP_PROC_NAME(QS_FIELD_TYPE(elem))
#define QS_PP_PROC_NAME(type) QS_PP_PROC_NAME_I(type)
#define QS_PP_PROC_NAME_I(type) hg_proc_##type

/* Member declarations: "type name;" per field. */
#define QS_GEN_DECL(elem) QS_FIELD_TYPE(elem) QS_FIELD_NAME(elem);
#define QS_GEN_DECL_A(elem) QS_GEN_DECL(elem) QS_GEN_DECL_B
#define QS_GEN_DECL_B(elem) QS_GEN_DECL(elem) QS_GEN_DECL_A
#define QS_GEN_DECL_A_END
#define QS_GEN_DECL_B_END
#define QS_GEN_DECLS(fields) QS_PP_CAT(QS_GEN_DECL_A fields, _END)

/* Proc calls: each runs only while every earlier field succeeded, and counts
 * the fields that did. */
#define QS_GEN_CALL(elem)                                                      \
    if (qs_ret == HG_SUCCESS) {                                                \
        qs_ret = QS_FIELD_PROC(elem)(qs_proc, &qs_s->QS_FIELD_NAME(elem));     \
        if (qs_ret == HG_SUCCESS)                                              \
            qs_done++;                                                         \
    }
#define QS_GEN_CALL_A(elem) QS_GEN_CALL(elem) QS_GEN_CALL_B
#define QS_GEN_CALL_B(elem) QS_GEN_CALL(elem) QS_GEN_CALL_A
#define QS_GEN_CALL_A_END
#define QS_GEN_CALL_B_END
#define QS_GEN_CALLS(fields) QS_PP_CAT(QS_GEN_CALL_A fields, _END)

/* Undo of a failed decode: HG_FREE on the first qs_done fields. */
#define QS_GEN_UNDO(elem)                                                      \
    if (qs_k++ < qs_done)                                                      \
        (void) QS_FIELD_PROC(elem)(qs_proc, &qs_s->QS_FIELD_NAME(elem));
#define QS_GEN_UNDO_A(elem) QS_GEN_UNDO(elem) QS_GEN_UNDO_B
#define QS_GEN_UNDO_B(elem) QS_GEN_UNDO(elem) QS_GEN_UNDO_A
#define QS_GEN_UNDO_A_END
#define QS_GEN_UNDO_B_END
#define QS_GEN_UNDOS(fields) QS_PP_CAT(QS_GEN_UNDO_A fields, _END)

/* Generate only the proc, for an existing structure type (a typedef name). */
#define MERCURY_GEN_STRUCT_PROC(struct_type_name, fields)                      \
    static HG_INLINE HG_ATTR_UNUSED hg_return_t hg_proc_##struct_type_name(    \
        hg_proc_t qs_proc, void *qs_data)                                      \
    {                                                                          \
        struct_type_name *qs_s = (struct_type_name *) qs_data;                 \
        hg_return_t qs_ret = HG_SUCCESS;                                       \
        unsigned qs_done = 0, qs_k = 0;                                        \
        hg_proc_op_t qs_op;                                                    \
                                                                               \
        if (qs_proc == HG_PROC_NULL || qs_data == NULL)                        \
            return HG_INVALID_ARG;                                             \
        QS_GEN_CALLS(fields)                                                   \
        if (qs_ret != HG_SUCCESS && hg_proc_get_op(qs_proc) == HG_DECODE) {    \
            qs_op = qs_proc_swap_op(qs_proc, HG_FREE);                         \
            QS_GEN_UNDOS(fields)                                               \
            (void) qs_proc_swap_op(qs_proc, qs_op);                            \
        }                                                                      \
        return qs_ret;                                                         \
    }

/* Generate the structure typedef and its proc. */
#define MERCURY_GEN_PROC(struct_type_name, fields)                             \
    typedef struct {                                                           \
        QS_GEN_DECLS(fields)                                                   \
    } struct_type_name;                                                        \
    MERCURY_GEN_STRUCT_PROC(struct_type_name, fields)

/* Register an RPC by name with the procs of its input and output structure
 * types; "void" stands for no structure (hg_proc_void is NULL). */
#define MERCURY_REGISTER(hg_class, func_name, in_struct_type_name,             \
                         out_struct_type_name, rpc_cb)                         \
    HG_Register_name(hg_class, func_name, hg_proc_##in_struct_type_name,       \
                     hg_proc_##out_struct_type_name, rpc_cb)

#endif /* MERCURY_MACROS_H */
