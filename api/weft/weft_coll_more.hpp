// Weft C++ layer for weft_coll_more.h: reduce_scatter, alltoallw, reduce_local and
// op_commutative, as free functions taking the communicator first (the merger folds them into
// weft::Comm as members, dropping that argument).  Failing calls throw weft::error; span forms
// check their lengths and throw std::invalid_argument before calling.
#pragma once

#include <cstddef>
#include <numeric>
#include <span>

#include "weft.hpp"
#include "weft_coll_more.h"

namespace weft {

// Raw form: in holds the whole vector (sum of outcounts elements; WEFT_IN_PLACE: out holds it),
// rank r receives outcounts[r] elements of the reduction.
inline void reduce_scatter(const Comm &comm, const void *in, void *out, const size_t *outcounts, weft_datatype type,
                           weft_op op) {
    check(weft_reduce_scatter(in, out, outcounts, type, op, comm.handle()));
}
inline Request ireduce_scatter(const Comm &comm, const void *in, void *out, const size_t *outcounts, weft_datatype type,
                               weft_op op) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_ireduce_scatter(in, out, outcounts, type, op, comm.handle(), &r));
    return Request(r);
}

namespace detail {
// counts has one entry per rank; returns their sum.
inline size_t check_counts(const Comm &comm, std::span<const size_t> counts, const char *fn) {
    size_t n = static_cast<size_t>(comm.size());
    check_count(counts.size() == n, fn, "counts", counts.size(), "expected size() =", n);
    return std::accumulate(counts.begin(), counts.end(), size_t{0});
}
}  // namespace detail

// in holds the blocks of every rank (counts[r] elements for rank r, in rank order); out
// receives this rank's block of the reduction.
template <class In, size_t N, class Out, size_t M>
requires detail::same_elements<In, Out>
void reduce_scatter(const Comm &comm, std::span<In, N> in, std::span<Out, M> out, std::span<const size_t> counts,
                    weft_op op) {
    size_t total = detail::check_counts(comm, counts, "reduce_scatter");
    detail::check_count(in.size() == total, "reduce_scatter", "in", in.size(), "expected the sum of counts =", total);
    size_t mine = counts[static_cast<size_t>(comm.rank())];
    detail::check_count(out.size() == mine, "reduce_scatter", "out", out.size(), "expected counts[rank()] =", mine);
    reduce_scatter(comm, in.data(), out.data(), counts.data(), datatype_of_v<Out>, op);
}
// In place: inout holds every rank's blocks; this rank's result lands at its start.
template <builtin_type T, size_t N>
requires(!std::is_const_v<T>) void reduce_scatter(const Comm &comm, std::span<T, N> inout,
                                                  std::span<const size_t> counts, weft_op op) {
    size_t total = detail::check_counts(comm, counts, "reduce_scatter");
    detail::check_count(inout.size() == total, "reduce_scatter", "inout", inout.size(),
                        "expected the sum of counts =", total);
    reduce_scatter(comm, WEFT_IN_PLACE, inout.data(), counts.data(), datatype_of_v<T>, op);
}
template <class In, size_t N, class Out, size_t M>
requires detail::same_elements<In, Out> Request ireduce_scatter(const Comm &comm, std::span<In, N> in,
                                                                std::span<Out, M> out, std::span<const size_t> counts,
                                                                weft_op op) {
    size_t total = detail::check_counts(comm, counts, "ireduce_scatter");
    detail::check_count(in.size() == total, "ireduce_scatter", "in", in.size(), "expected the sum of counts =", total);
    size_t mine = counts[static_cast<size_t>(comm.rank())];
    detail::check_count(out.size() == mine, "ireduce_scatter", "out", out.size(), "expected counts[rank()] =", mine);
    return ireduce_scatter(comm, in.data(), out.data(), counts.data(), datatype_of_v<Out>, op);
}

// Per peer r: incounts[r] elements of intypes[r] at (char *)in + indispls[r] go to rank r;
// outcounts[r] elements of outtypes[r] at (char *)out + outdispls[r] come from it.
// Displacements in bytes.  in = WEFT_IN_PLACE: the in arrays are ignored (may be null).
inline void alltoallw(const Comm &comm, const void *in, const size_t *incounts, const std::ptrdiff_t *indispls,
                      const weft_datatype *intypes, void *out, const size_t *outcounts, const std::ptrdiff_t *outdispls,
                      const weft_datatype *outtypes) {
    check(weft_alltoallw(in, incounts, indispls, intypes, out, outcounts, outdispls, outtypes, comm.handle()));
}
inline Request ialltoallw(const Comm &comm, const void *in, const size_t *incounts, const std::ptrdiff_t *indispls,
                          const weft_datatype *intypes, void *out, const size_t *outcounts,
                          const std::ptrdiff_t *outdispls, const weft_datatype *outtypes) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_ialltoallw(in, incounts, indispls, intypes, out, outcounts, outdispls, outtypes, comm.handle(), &r));
    return Request(r);
}

// inout[i] = in[i] op inout[i], locally.
inline void reduce_local(const void *in, void *inout, size_t count, weft_datatype type, weft_op op) {
    check(weft_reduce_local(in, inout, count, type, op));
}
template <class In, size_t N, class Out, size_t M>
requires detail::same_elements<In, Out>
void reduce_local(std::span<In, N> in, std::span<Out, M> inout, weft_op op) {
    detail::check_count(inout.size() == in.size(), "reduce_local", "inout", inout.size(), "expected", in.size());
    reduce_local(in.data(), inout.data(), in.size(), datatype_of_v<Out>, op);
}

inline bool op_commutative(weft_op op) {
    int commute = 0;
    check(weft_op_commutative(op, &commute));
    return commute != 0;
}

}  // namespace weft
