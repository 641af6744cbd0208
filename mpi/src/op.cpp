// Reduction operations: user operations (MPI_User_function takes int *len and MPI's datatype,
// Weft's takes size_t *len and Weft's: each distinct function gets a trampoline of its own),
// MPI_Op_free, MPI_Op_commutative, MPI_Reduce_local.
#include <atomic>
#include <mutex>
#include <utility>

#include "handles.hpp"

using namespace weft_mpi;

namespace {
constexpr int max_user_ops = 64;
struct user_op {
    std::atomic<MPI_User_function *> fn{nullptr};
    std::atomic<MPI_User_function_c *> fn_c{nullptr};
};
user_op user_ops[max_user_ops];
std::mutex user_ops_lock;

template <int I>
void trampoline(void *invec, void *inoutvec, size_t *len, weft_datatype *datatype) {
    MPI_Datatype t = mtype(*datatype);
    if (MPI_User_function_c *fc = user_ops[I].fn_c.load(std::memory_order_acquire)) {
        MPI_Count n = static_cast<MPI_Count>(*len);
        fc(invec, inoutvec, &n, &t);
        return;
    }
    MPI_User_function *f = user_ops[I].fn.load(std::memory_order_acquire);
    size_t left = *len;
    if (left <= static_cast<size_t>(INT_MAX)) {
        int n = static_cast<int>(left);
        f(invec, inoutvec, &n, &t);
        return;
    }
    // More elements than an int counts: in pieces of INT_MAX elements.
    ptrdiff_t lb = 0, extent = 0;
    weft_type_get_extent(*datatype, &lb, &extent);
    char *in = static_cast<char *>(invec), *inout = static_cast<char *>(inoutvec);
    while (left > 0) {
        int n = left > static_cast<size_t>(INT_MAX) ? INT_MAX : static_cast<int>(left);
        f(in, inout, &n, &t);
        in += static_cast<ptrdiff_t>(n) * extent;
        inout += static_cast<ptrdiff_t>(n) * extent;
        left -= static_cast<size_t>(n);
    }
}
template <int... I>
weft_user_function *trampoline_of(int i, std::integer_sequence<int, I...>) {
    weft_user_function *t[] = {&trampoline<I>...};
    return t[i];
}

int create(const char *fn_name, MPI_User_function *f, MPI_User_function_c *fc, int commute, MPI_Op *op) {
    if ((f == nullptr && fc == nullptr) || op == nullptr)
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "%s: user_fn and op must not be NULL", fn_name);
    int slot = -1;
    {
        std::lock_guard<std::mutex> g(user_ops_lock);
        for (int i = 0; i < max_user_ops && slot < 0; ++i) {
            user_op &u = user_ops[i];
            MPI_User_function *cf = u.fn.load(std::memory_order_relaxed);
            MPI_User_function_c *cfc = u.fn_c.load(std::memory_order_relaxed);
            if (cf == nullptr && cfc == nullptr) {
                if (fc)
                    u.fn_c.store(fc, std::memory_order_release);
                else
                    u.fn.store(f, std::memory_order_release);
                slot = i;
            } else if ((f && cf == f) || (fc && cfc == fc)) {
                slot = i;
            }
        }
    }
    if (slot < 0)
        return fail(WEFT_COMM_SELF, WEFT_ERR_NO_MEM, "%s: more than %d distinct user functions", fn_name, max_user_ops);
    weft_op o = WEFT_OP_NULL;
    if (int rc = weft_op_create(trampoline_of(slot, std::make_integer_sequence<int, max_user_ops>{}), commute, &o))
        return merr(rc);
    *op = mop(o);
    return MPI_SUCCESS;
}
template <class C>
int reduce_local(const char *fn, const void *inbuf, void *inoutbuf, C count, MPI_Datatype datatype, MPI_Op op) {
    if (bad_count(count)) return fail(WEFT_COMM_SELF, WEFT_ERR_COUNT, "%s: negative count", fn);
    return merr(weft_reduce_local(inbuf, inoutbuf, static_cast<size_t>(count), wtype(datatype), wop(op)));
}
}  // namespace

extern "C" int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op) {
    return create("MPI_Op_create", user_fn, nullptr, commute, op);
}
extern "C" int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op) {
    return create("MPI_Op_create_c", nullptr, user_fn, commute, op);
}
extern "C" int PMPI_Op_free(MPI_Op *op) {
    if (op == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Op_free: op is NULL");
    weft_op o = wop(*op);
    if (int rc = weft_op_free(&o)) return merr(rc);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
extern "C" int PMPI_Op_commutative(MPI_Op op, int *commute) { return merr(weft_op_commutative(wop(op), commute)); }
extern "C" int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op) {
    return reduce_local("MPI_Reduce_local", inbuf, inoutbuf, count, datatype, op);
}
extern "C" int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype,
                                   MPI_Op op) {
    return reduce_local("MPI_Reduce_local_c", inbuf, inoutbuf, count, datatype, op);
}

#define WEFT_MPI_FAMILY_op 1
#include "alias.hpp"
