// weft_reduce_local and weft_op_commutative: an operation applied or asked about outside any
// collective, resolved exactly as a reduction resolves it (op_bind).
#include "base/datatype.hpp"
#include "base/error.hpp"
#include "base/lifecycle.hpp"
#include "base/op.hpp"
#include "weft/weft.h"

using namespace weft;

extern "C" {

static int reduce_local_impl(const void *inbuf, void *inoutbuf, size_t count, weft_datatype type, weft_op op) {
    constexpr const char *fn = "weft_reduce_local";
    if (int rc = runtime_check(fn)) return rc;
    const datatype *t = datatype_get(type);
    if (t == nullptr) return fail(WEFT_ERR_TYPE, "%s: invalid datatype handle 0x%x", fn, type);
    if (!t->committed)
        return fail(WEFT_ERR_TYPE, "%s: datatype 0x%x is not committed (call weft_type_commit)", fn, type);
    op_binding b;
    if (int rc = op_bind(fn, op, type, *t, b)) return rc;
    size_t bytes;
    if (__builtin_mul_overflow(count, static_cast<size_t>(t->extent), &bytes))
        return fail(WEFT_ERR_COUNT, "%s: count %zu overflows", fn, count);
    if (inbuf == WEFT_IN_PLACE || inoutbuf == WEFT_IN_PLACE)
        return fail(WEFT_ERR_BUFFER, "%s: WEFT_IN_PLACE is not valid here (inbuf and inoutbuf are both needed)", fn);
    if (inbuf == nullptr && bytes != 0) return fail(WEFT_ERR_BUFFER, "%s: inbuf is NULL with a non-zero count", fn);
    if (inoutbuf == nullptr && bytes != 0)
        return fail(WEFT_ERR_BUFFER, "%s: inoutbuf is NULL with a non-zero count", fn);
    op_apply(b, inbuf, inoutbuf, count);
    return WEFT_SUCCESS;
}

WEFT_API int weft_reduce_local(const void *inbuf, void *inoutbuf, size_t count, weft_datatype type, weft_op op) {
    return self_error_return(reduce_local_impl(inbuf, inoutbuf, count, type, op), "weft_reduce_local");
}

static int op_commutative_impl(weft_op op, int *commute) {
    constexpr const char *fn = "weft_op_commutative";
    if (int rc = runtime_check(fn)) return rc;
    if (commute == nullptr) return fail(WEFT_ERR_ARG, "%s: commute is NULL", fn);
    if (op >= WEFT_MAX && op <= WEFT_MAXLOC) {  // the predefined ops
        *commute = 1;
        return WEFT_SUCCESS;
    }
    // A user op binds to any built-in type (WEFT_BYTE): the binding finds the handle and says
    // whether it commutes, and fails with the message a collective would give for a bad one.
    op_binding b;
    if (int rc = op_bind(fn, op, WEFT_BYTE, *datatype_get(WEFT_BYTE), b)) return rc;
    *commute = b.commutative ? 1 : 0;
    return WEFT_SUCCESS;
}

WEFT_API int weft_op_commutative(weft_op op, int *commute) {
    return self_error_return(op_commutative_impl(op, commute), "weft_op_commutative");
}

}  // extern "C"
