// Datatype constructors: every MPI constructor as a list of parts (datatype.hpp), the typemap's
// size and bounds with overflow checks, and the flat list of runs of one element.
#include <algorithm>
#include <cstdio>
#include <limits>

#include "base/datatype.hpp"
#include "base/error.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

constexpr ptrdiff_t ptrdiff_max = std::numeric_limits<ptrdiff_t>::max();

bool mul(size_t a, size_t b, size_t *r) { return !__builtin_mul_overflow(a, b, r); }
bool add(size_t a, size_t b, size_t *r) { return !__builtin_add_overflow(a, b, r); }
bool smul(ptrdiff_t a, ptrdiff_t b, ptrdiff_t *r) { return !__builtin_mul_overflow(a, b, r); }
bool sadd(ptrdiff_t a, ptrdiff_t b, ptrdiff_t *r) { return !__builtin_add_overflow(a, b, r); }

// Consecutive elements of c abut: a block of them is one run.
bool dense(const datatype &c) { return c.flat && c.blocks.size() == 1 && c.blocks[0].length == size_t(c.extent); }

// The flat list of dt's parts, unless a child is not flat or it would exceed flat_blocks_max.
bool flatten(datatype &dt) {
    size_t estimate = 0;
    for (const datatype_part &p : dt.parts) {
        const datatype &c = *p.child;
        if (p.count == 0 || p.blocklen == 0 || c.size == 0) continue;
        if (!c.flat) return false;
        size_t per_block, runs;
        if (dense(c))
            per_block = 1;
        else if (!mul(p.blocklen, c.blocks.size(), &per_block))
            return false;
        if (!mul(p.count, per_block, &runs) || !add(estimate, runs, &estimate) || estimate > flat_blocks_max)
            return false;
    }
    std::vector<datatype_block> &out = dt.blocks;
    out.reserve(estimate);
    auto push = [&](ptrdiff_t offset, size_t length) {
        if (!out.empty() && out.back().offset + static_cast<ptrdiff_t>(out.back().length) == offset)
            out.back().length += length;
        else
            out.push_back({offset, length});
    };
    for (const datatype_part &p : dt.parts) {
        const datatype &c = *p.child;
        if (p.blocklen == 0 || c.size == 0) continue;
        bool run = dense(c);
        for (size_t b = 0; b < p.count; ++b) {
            ptrdiff_t block = p.disp + static_cast<ptrdiff_t>(b) * p.stride;
            if (run) {
                push(block + c.blocks[0].offset, p.blocklen * c.size);
                continue;
            }
            for (size_t j = 0; j < p.blocklen; ++j)
                for (const datatype_block &r : c.blocks)
                    push(block + static_cast<ptrdiff_t>(j) * c.extent + r.offset, r.length);
        }
    }
    return true;
}

void set_contiguous(datatype &dt) {
    dt.contiguous = dt.lb == 0 && static_cast<size_t>(dt.extent) == dt.size &&
        (dt.size == 0 || (dt.flat && dt.blocks.size() == 1 && dt.blocks[0].offset == 0));
}

int overflow(const char *call, int *rc) {
    *rc = fail(WEFT_ERR_COUNT, "%s: the type's size, extent or a displacement overflows", call);
    return *rc;
}

}  // namespace

std::shared_ptr<datatype> datatype_build(std::vector<datatype_part> parts, const char *call, int *rc) {
    auto dt = std::make_shared<datatype>();
    size_t size = 0, basic = 0;
    bool bounded = false, data = false;
    ptrdiff_t lb = 0, ub = 0, tlb = 0, tub = 0;
    if (!parts.empty()) dt->basic = parts[0].child->basic;
    for (const datatype_part &p : parts) {
        const datatype &c = *p.child;
        size_t n, bytes, elems;
        if (!mul(p.count, p.blocklen, &n)) return overflow(call, rc), nullptr;
        if (n == 0) continue;
        if (!mul(n, c.size, &bytes) || !add(size, bytes, &size) || !mul(n, c.basic_count, &elems) ||
            !add(basic, elems, &basic))
            return overflow(call, rc), nullptr;
        // The origins of the part's elements span [lo, hi]: blocks by stride, elements in a
        // block by the child's (non-negative) extent.
        ptrdiff_t span_b, span_j, lo, hi, plb, pub;
        if (p.count > size_t(ptrdiff_max) || p.blocklen > size_t(ptrdiff_max) ||
            !smul(static_cast<ptrdiff_t>(p.count - 1), p.stride, &span_b) ||
            !smul(static_cast<ptrdiff_t>(p.blocklen - 1), c.extent, &span_j) ||
            !sadd(p.disp, std::min<ptrdiff_t>(span_b, 0), &lo) || !sadd(p.disp, std::max<ptrdiff_t>(span_b, 0), &hi) ||
            !sadd(hi, span_j, &hi) || !sadd(lo, c.lb, &plb) || !sadd(hi, c.lb, &pub) || !sadd(pub, c.extent, &pub))
            return overflow(call, rc), nullptr;
        if (c.bounded) {
            lb = bounded ? std::min(lb, plb) : plb;
            ub = bounded ? std::max(ub, pub) : pub;
            bounded = true;
        }
        if (c.size == 0) continue;
        ptrdiff_t ptlb, ptub;
        if (!sadd(lo, c.true_lb, &ptlb) || !sadd(hi, c.true_ub, &ptub)) return overflow(call, rc), nullptr;
        if (!data) {
            dt->basic = c.basic;
            dt->homogeneous = c.homogeneous;
        } else {
            dt->homogeneous = dt->homogeneous && c.homogeneous && c.basic == dt->basic;
        }
        tlb = data ? std::min(tlb, ptlb) : ptlb;
        tub = data ? std::max(tub, ptub) : ptub;
        data = true;
    }
    ptrdiff_t extent;
    if (size > size_t(ptrdiff_max) || __builtin_sub_overflow(ub, lb, &extent)) return overflow(call, rc), nullptr;
    dt->size = size;
    dt->basic_count = basic;
    dt->bounded = bounded;
    dt->lb = lb;  // MPI: a type with no elements has lb 0 and extent 0
    dt->extent = extent;
    dt->true_lb = tlb;
    dt->true_ub = tub;
    dt->parts = std::move(parts);
    dt->flat = flatten(*dt);
    if (!dt->flat) dt->blocks.clear();
    set_contiguous(*dt);
    *rc = WEFT_SUCCESS;
    return dt;
}

namespace {

int make(std::vector<datatype_part> parts, weft_datatype *newtype, const char *call) {
    int rc;
    std::shared_ptr<datatype> dt = datatype_build(std::move(parts), call, &rc);
    if (!dt) return rc;
    return datatype_register(std::move(dt), newtype, call);
}

int old_and_new(const char *call, weft_datatype oldtype, weft_datatype *newtype, std::shared_ptr<const datatype> &old) {
    if (newtype == nullptr) return fail(WEFT_ERR_ARG, "%s: newtype is NULL", call);
    char what[96];
    std::snprintf(what, sizeof what, "%s: oldtype", call);
    return datatype_lookup(oldtype, what, old);
}

// count blocks of blocklength, block starts stride apart (in old extents, or bytes).
int make_strided(size_t count, size_t blocklength, ptrdiff_t stride, bool bytes, weft_datatype oldtype,
                 weft_datatype *newtype, const char *call) {
    std::shared_ptr<const datatype> old;
    if (int rc = old_and_new(call, oldtype, newtype, old)) return rc;
    ptrdiff_t stride_bytes = stride;
    if (!bytes && !smul(stride, old->extent, &stride_bytes))
        return fail(WEFT_ERR_COUNT, "%s: stride %td extents of %td bytes overflows", call, stride, old->extent);
    return make({{old, 0, count, blocklength, stride_bytes}}, newtype, call);
}

// Block i: blocklengths[i] (or blocklength) elements at displacements[i] (extents, or bytes).
int make_indexed(size_t count, const size_t *blocklengths, size_t blocklength, const ptrdiff_t *displacements,
                 bool bytes, weft_datatype oldtype, weft_datatype *newtype, const char *call) {
    std::shared_ptr<const datatype> old;
    if (int rc = old_and_new(call, oldtype, newtype, old)) return rc;
    if (count != 0 && displacements == nullptr) return fail(WEFT_ERR_ARG, "%s: displacements is NULL", call);
    std::vector<datatype_part> parts;
    parts.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        size_t bl = blocklengths ? blocklengths[i] : blocklength;
        ptrdiff_t disp = displacements[i];
        if (!bytes && !smul(disp, old->extent, &disp))
            return fail(WEFT_ERR_COUNT, "%s: displacements[%zu] (%td extents) overflows", call, i, displacements[i]);
        if (bl != 0) parts.push_back({old, disp, 1, bl, 0});
    }
    return make(std::move(parts), newtype, call);
}

}  // namespace
}  // namespace weft

using namespace weft;

extern "C" {

static int type_contiguous_impl(size_t count, weft_datatype oldtype, weft_datatype *newtype) {
    // One block of count elements.
    return make_strided(1, count, 0, false, oldtype, newtype, "weft_type_contiguous");
}

WEFT_API int weft_type_contiguous(size_t count, weft_datatype oldtype, weft_datatype *newtype) {
    return self_error_return(type_contiguous_impl(count, oldtype, newtype), "weft_type_contiguous");
}

static int type_vector_impl(size_t count, size_t blocklength, ptrdiff_t stride, weft_datatype oldtype,
                            weft_datatype *newtype) {
    return make_strided(count, blocklength, stride, false, oldtype, newtype, "weft_type_vector");
}

WEFT_API int weft_type_vector(size_t count, size_t blocklength, ptrdiff_t stride, weft_datatype oldtype,
                              weft_datatype *newtype) {
    return self_error_return(type_vector_impl(count, blocklength, stride, oldtype, newtype), "weft_type_vector");
}

static int type_create_hvector_impl(size_t count, size_t blocklength, ptrdiff_t stride, weft_datatype oldtype,
                                    weft_datatype *newtype) {
    return make_strided(count, blocklength, stride, true, oldtype, newtype, "weft_type_create_hvector");
}

WEFT_API int weft_type_create_hvector(size_t count, size_t blocklength, ptrdiff_t stride, weft_datatype oldtype,
                                      weft_datatype *newtype) {
    return self_error_return(type_create_hvector_impl(count, blocklength, stride, oldtype, newtype),
                             "weft_type_create_hvector");
}

static int type_indexed_impl(size_t count, const size_t blocklengths[], const ptrdiff_t displacements[],
                             weft_datatype oldtype, weft_datatype *newtype) {
    if (count != 0 && blocklengths == nullptr) return fail(WEFT_ERR_ARG, "weft_type_indexed: blocklengths is NULL");
    return make_indexed(count, blocklengths, 0, displacements, false, oldtype, newtype, "weft_type_indexed");
}

WEFT_API int weft_type_indexed(size_t count, const size_t blocklengths[], const ptrdiff_t displacements[],
                               weft_datatype oldtype, weft_datatype *newtype) {
    return self_error_return(type_indexed_impl(count, blocklengths, displacements, oldtype, newtype),
                             "weft_type_indexed");
}

static int type_create_hindexed_impl(size_t count, const size_t blocklengths[], const ptrdiff_t displacements[],
                                     weft_datatype oldtype, weft_datatype *newtype) {
    if (count != 0 && blocklengths == nullptr)
        return fail(WEFT_ERR_ARG, "weft_type_create_hindexed: blocklengths is NULL");
    return make_indexed(count, blocklengths, 0, displacements, true, oldtype, newtype, "weft_type_create_hindexed");
}

WEFT_API int weft_type_create_hindexed(size_t count, const size_t blocklengths[], const ptrdiff_t displacements[],
                                       weft_datatype oldtype, weft_datatype *newtype) {
    return self_error_return(type_create_hindexed_impl(count, blocklengths, displacements, oldtype, newtype),
                             "weft_type_create_hindexed");
}

static int type_create_indexed_block_impl(size_t count, size_t blocklength, const ptrdiff_t displacements[],
                                          weft_datatype oldtype, weft_datatype *newtype) {
    return make_indexed(count, nullptr, blocklength, displacements, false, oldtype, newtype,
                        "weft_type_create_indexed_block");
}

WEFT_API int weft_type_create_indexed_block(size_t count, size_t blocklength, const ptrdiff_t displacements[],
                                            weft_datatype oldtype, weft_datatype *newtype) {
    return self_error_return(type_create_indexed_block_impl(count, blocklength, displacements, oldtype, newtype),
                             "weft_type_create_indexed_block");
}

static int type_create_hindexed_block_impl(size_t count, size_t blocklength, const ptrdiff_t displacements[],
                                           weft_datatype oldtype, weft_datatype *newtype) {
    return make_indexed(count, nullptr, blocklength, displacements, true, oldtype, newtype,
                        "weft_type_create_hindexed_block");
}

WEFT_API int weft_type_create_hindexed_block(size_t count, size_t blocklength, const ptrdiff_t displacements[],
                                             weft_datatype oldtype, weft_datatype *newtype) {
    return self_error_return(type_create_hindexed_block_impl(count, blocklength, displacements, oldtype, newtype),
                             "weft_type_create_hindexed_block");
}

static int type_create_struct_impl(size_t count, const size_t blocklengths[], const ptrdiff_t displacements[],
                                   const weft_datatype types[], weft_datatype *newtype) {
    const char *call = "weft_type_create_struct";
    if (newtype == nullptr) return fail(WEFT_ERR_ARG, "%s: newtype is NULL", call);
    if (count != 0 && (blocklengths == nullptr || displacements == nullptr || types == nullptr))
        return fail(WEFT_ERR_ARG, "%s: blocklengths, displacements and types must not be NULL", call);
    std::vector<datatype_part> parts;
    parts.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        std::shared_ptr<const datatype> t;
        char what[64];
        std::snprintf(what, sizeof what, "%s: types[%zu]", call, i);
        if (int rc = datatype_lookup(types[i], what, t)) return rc;
        if (blocklengths[i] != 0) parts.push_back({std::move(t), displacements[i], 1, blocklengths[i], 0});
    }
    return make(std::move(parts), newtype, call);
}

WEFT_API int weft_type_create_struct(size_t count, const size_t blocklengths[], const ptrdiff_t displacements[],
                                     const weft_datatype types[], weft_datatype *newtype) {
    return self_error_return(type_create_struct_impl(count, blocklengths, displacements, types, newtype),
                             "weft_type_create_struct");
}

static int type_create_resized_impl(weft_datatype oldtype, ptrdiff_t lb, ptrdiff_t extent, weft_datatype *newtype) {
    const char *call = "weft_type_create_resized";
    std::shared_ptr<const datatype> old;
    if (int rc = old_and_new(call, oldtype, newtype, old)) return rc;
    if (extent < 0) return fail(WEFT_ERR_ARG, "%s: extent %td is negative", call, extent);
    ptrdiff_t ub;
    if (__builtin_add_overflow(lb, extent, &ub))
        return fail(WEFT_ERR_COUNT, "%s: lb %td + extent %td overflows", call, lb, extent);
    int rc;
    std::shared_ptr<datatype> dt = datatype_build({{old, 0, 1, 1, 0}}, call, &rc);
    if (!dt) return rc;
    dt->lb = lb;
    dt->extent = extent;
    dt->bounded = true;
    set_contiguous(*dt);
    return datatype_register(std::move(dt), newtype, call);
}

WEFT_API int weft_type_create_resized(weft_datatype oldtype, ptrdiff_t lb, ptrdiff_t extent, weft_datatype *newtype) {
    return self_error_return(type_create_resized_impl(oldtype, lb, extent, newtype), "weft_type_create_resized");
}

static int type_create_subarray_impl(size_t ndims, const size_t sizes[], const size_t subsizes[], const size_t starts[],
                                     int order, weft_datatype oldtype, weft_datatype *newtype) {
    const char *call = "weft_type_create_subarray";
    std::shared_ptr<const datatype> old;
    if (int rc = old_and_new(call, oldtype, newtype, old)) return rc;
    if (ndims == 0) return fail(WEFT_ERR_ARG, "%s: ndims is 0", call);
    if (sizes == nullptr || subsizes == nullptr || starts == nullptr)
        return fail(WEFT_ERR_ARG, "%s: sizes, subsizes and starts must not be NULL", call);
    if (order != WEFT_ORDER_C && order != WEFT_ORDER_FORTRAN)
        return fail(WEFT_ERR_ARG, "%s: order %d is neither WEFT_ORDER_C nor WEFT_ORDER_FORTRAN", call, order);
    for (size_t i = 0; i < ndims; ++i) {
        if (sizes[i] == 0) return fail(WEFT_ERR_ARG, "%s: sizes[%zu] is 0", call, i);
        if (subsizes[i] > sizes[i] || starts[i] > sizes[i] - subsizes[i])
            return fail(WEFT_ERR_ARG, "%s: subsizes[%zu] %zu from starts[%zu] %zu exceeds sizes[%zu] %zu", call, i,
                        subsizes[i], i, starts[i], i, sizes[i]);
    }
    // Dimensions from the fastest-varying on: a contiguous row, then an hvector per dimension
    // (its stride the bytes of one step in it), then the start's offset, then the whole
    // array's bounds (lb 0, as MPICH).
    int rc;
    std::shared_ptr<const datatype> t = old;
    ptrdiff_t stride = old->extent, disp = 0;
    for (size_t k = 0; k < ndims; ++k) {
        size_t d = order == WEFT_ORDER_C ? ndims - 1 - k : k;
        ptrdiff_t step;
        if (sizes[d] > size_t(ptrdiff_max) || starts[d] > size_t(ptrdiff_max) ||
            !smul(static_cast<ptrdiff_t>(starts[d]), stride, &step) || !sadd(disp, step, &disp))
            return overflow(call, &rc);
        std::shared_ptr<datatype> next = k == 0 ? datatype_build({{t, 0, 1, subsizes[d], 0}}, call, &rc)
                                                : datatype_build({{t, 0, subsizes[d], 1, stride}}, call, &rc);
        if (!next) return rc;
        t = std::move(next);
        if (!smul(stride, static_cast<ptrdiff_t>(sizes[d]), &stride)) return overflow(call, &rc);
    }
    std::shared_ptr<datatype> dt = datatype_build({{t, disp, 1, 1, 0}}, call, &rc);
    if (!dt) return rc;
    dt->lb = 0;
    dt->extent = stride;
    dt->bounded = true;
    set_contiguous(*dt);
    return datatype_register(std::move(dt), newtype, call);
}

WEFT_API int weft_type_create_subarray(size_t ndims, const size_t sizes[], const size_t subsizes[],
                                       const size_t starts[], int order, weft_datatype oldtype,
                                       weft_datatype *newtype) {
    return self_error_return(type_create_subarray_impl(ndims, sizes, subsizes, starts, order, oldtype, newtype),
                             "weft_type_create_subarray");
}

}  // extern "C"
