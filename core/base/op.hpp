// Reduction operations: the built-in ops on every basic datatype where MPI defines them, the
// MINLOC/MAXLOC pair types, and user operations (weft_op_create).
#pragma once
#include <cstddef>
#include <memory>

#include "base/datatype.hpp"
#include "weft/weft.h"

namespace weft {

struct user_op {
    weft_user_function *fn = nullptr;
    bool commutative = true;
};

// An operation resolved against one datatype: what a collective applies to its buffers.
struct op_binding {
    // Built-in op: inout[i] = in[i] op inout[i] over count elements.
    void (*builtin)(const void *in, void *inout, size_t count) = nullptr;
    std::shared_ptr<const user_op> user;      // user op, held while a collective uses it
    weft_datatype type = WEFT_DATATYPE_NULL;  // handed to the user function
    size_t elem_size = 0;
    bool commutative = true;
};

// Resolves op for datatype type (t is its resolved descriptor).  A null, freed or unknown op
// handle, or a built-in op MPI does not define for the type (e.g. WEFT_BAND on WEFT_DOUBLE,
// WEFT_SUM on a pair type, anything on a non-built-in type other than a user op on a
// contiguous type), fails with WEFT_ERR_OP and a message naming fn, the op and the type.
int op_bind(const char *fn, weft_op op, weft_datatype type, const datatype &t, op_binding &out);
// The same, but a predefined op on a derived type of one basic type binds to that basic type
// (MPI allows it): the caller applies it to the type's basic elements, packed, out.elem_size
// bytes each.  A type of several basic types (or of padded pairs) fails with WEFT_ERR_OP.
int op_bind_basic(const char *fn, weft_op op, weft_datatype type, const datatype &t, op_binding &out);

// inout = in op inout, count elements.  Both buffers are contiguous.
inline void op_apply(const op_binding &b, const void *in, void *inout, size_t count) {
    if (count == 0) return;
    if (b.builtin != nullptr) {
        b.builtin(in, inout, count);
    } else {
        weft_datatype t = b.type;
        b.user->fn(const_cast<void *>(in), inout, &count, &t);
    }
}

// Drops every user operation (finalize).
void op_finalize_all();

}  // namespace weft
