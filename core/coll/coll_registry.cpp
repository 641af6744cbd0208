#include "coll/coll_registry.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>

#include "base/error.hpp"
#include "coll/coll_algorithms.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

using namespace coll_threshold;
using K = coll_kind;

bool always(const coll_shape &) { return true; }
bool dense(const coll_shape &s) { return s.dense; }
bool commutative(const coll_shape &s) { return s.commutative; }
// Allreduce algorithms that reorder operands and split the vector among the processes.
bool reorders(const coll_shape &s) { return s.commutative && s.count >= static_cast<size_t>(s.procs); }
// The shared-memory rows: where the segment serves and the data fits a slot.
bool shm_fits(const coll_shape &s) { return s.shm && s.bytes <= shm_bytes; }
bool shm_fits_all(const coll_shape &s) { return s.shm && s.bytes * static_cast<size_t>(s.procs) <= shm_bytes; }
bool shm_fits_dense(const coll_shape &s) { return s.dense && shm_fits(s); }
size_t pof2_at_most(int n) {
    int p = 1;
    while (p * 2 <= n) p *= 2;
    return static_cast<size_t>(p);
}

// The registry.  `when` says the two predicates in words; keep it in step with them.
constexpr coll_algorithm rows[] = {
    {K::barrier, "shm", coll_barrier_shm, shm_fits, shm_fits,
     "auto on one node (blocking calls); needs all processes on one node and a blocking call", true},
    {K::barrier, "dissemination", coll_barrier_dissemination, always, nullptr, "auto otherwise"},

    // Rooted calls through the segment hold the root back until everyone finished the previous
    // call; through messages it runs ahead, which measured faster (bench/README.md).
    {K::bcast, "shm", coll_bcast_shm, nullptr, shm_fits,
     "forced only; needs all processes on one node, a blocking call and at most 8 KiB", true},
    {K::bcast, "binomial", coll_bcast_binomial,
     [](const coll_shape &s) { return s.bytes < bcast_large || s.procs < bcast_large_procs; }, nullptr,
     "auto below 16 KiB or with fewer than 3 processes"},
    {K::bcast, "scatter_allgather", coll_bcast_scatter_allgather, always, nullptr,
     "auto from 16 KiB with 3 processes or more"},

    {K::reduce, "shm", coll_reduce_shm, nullptr, shm_fits,
     "forced only; needs all processes on one node, a blocking call and at most 8 KiB", true},
    {K::reduce, "binomial", coll_reduce_binomial, always, nullptr, "auto otherwise, at every size"},
    {K::reduce, "linear", coll_reduce_linear, nullptr, nullptr, "forced only"},

    {K::allreduce, "shm", coll_allreduce_shm,
     [](const coll_shape &s) { return shm_fits(s) && s.bytes <= shm_allreduce; }, shm_fits,
     "auto up to 4 KiB on one node; needs all processes on one node, a blocking call and at most 8 KiB", true},
    {K::allreduce, "recursive_doubling", coll_allreduce_recursive_doubling,
     [](const coll_shape &s) { return s.bytes <= allreduce_large || s.count < pof2_at_most(s.procs); }, nullptr,
     "auto up to 8 KiB or with fewer elements than the largest power of 2 <= processes; runs instead of the "
     "others for a non-commutative op or fewer elements than processes"},
    {K::allreduce, "reduce_scatter_allgather", coll_allreduce_reduce_scatter_allgather, always, reorders,
     "auto above 8 KiB; needs a commutative op and an element per process"},
    {K::allreduce, "ring", coll_allreduce_ring, nullptr, reorders,
     "forced only; needs a commutative op and an element per process"},

    {K::gather, "binomial", coll_gather_binomial, [](const coll_shape &s) { return s.bytes < rooted_large; }, dense,
     "auto for blocks below 64 KiB; needs uniform, densely packed blocks"},
    {K::gather, "linear", coll_gather_linear, always, nullptr,
     "auto for blocks from 64 KiB; runs instead of binomial for other block layouts"},
    {K::gatherv, "linear", coll_gather_linear, always, nullptr, "always (the only one)"},

    {K::scatter, "binomial", coll_scatter_binomial, [](const coll_shape &s) { return s.bytes < rooted_large; }, dense,
     "auto for blocks below 64 KiB; needs uniform, densely packed blocks"},
    {K::scatter, "linear", coll_scatter_linear, always, nullptr,
     "auto for blocks from 64 KiB; runs instead of binomial for other block layouts"},
    {K::scatterv, "linear", coll_scatter_linear, always, nullptr, "always (the only one)"},

    {K::allgather, "shm", coll_allgather_shm, shm_fits_dense, shm_fits_dense,
     "auto for blocks up to 8 KiB on one node; needs all processes on one node, a blocking call, uniform "
     "densely packed blocks and at most 8 KiB each",
     true},
    {K::allgather, "ring", coll_allgather_ring,
     [](const coll_shape &s) { return s.bytes * static_cast<size_t>(s.procs) >= allgather_large; }, nullptr,
     "auto from 80 KiB in all (block x processes); runs instead of bruck for other block layouts"},
    {K::allgather, "bruck", coll_allgather_bruck, always, dense,
     "auto below 80 KiB in all; needs uniform, densely packed blocks"},
    {K::allgatherv, "ring", coll_allgather_ring, always, nullptr, "always (the only one)"},

    {K::alltoall, "shm", coll_alltoall_shm, shm_fits_all, shm_fits_all,
     "auto up to 8 KiB in all (block x processes) on one node; needs all processes on one node, a blocking "
     "call and at most 8 KiB in all",
     true},
    {K::alltoall, "pairwise", coll_alltoall_pairwise, [](const coll_shape &s) { return s.bytes >= alltoall_large; },
     nullptr, "auto for blocks from 32 KiB"},
    {K::alltoall, "linear", coll_alltoall_linear, always, nullptr, "auto for blocks below 32 KiB"},
    {K::alltoallv, "pairwise", coll_alltoall_pairwise, nullptr, nullptr, "forced only"},
    {K::alltoallv, "linear", coll_alltoall_linear, always, nullptr, "auto (block sizes differ between processes)"},

    {K::reduce_scatter_block, "pairwise", coll_reduce_scatter_block_pairwise,
     [](const coll_shape &s) { return s.bytes < reduce_scatter_large; }, nullptr,
     "auto for blocks below 512 B; runs instead of ring for a non-commutative op"},
    {K::reduce_scatter_block, "ring", coll_reduce_scatter_block_ring, always, commutative,
     "auto for blocks from 512 B; needs a commutative op"},

    {K::scan, "recursive_doubling", coll_scan_recursive_doubling, always, nullptr, "auto, at every size"},
    {K::scan, "linear", coll_scan_linear, nullptr, nullptr, "forced only"},
    {K::exscan, "recursive_doubling", coll_scan_recursive_doubling, always, nullptr, "auto, at every size"},
    {K::exscan, "linear", coll_scan_linear, nullptr, nullptr, "forced only"},

    {K::reduce_scatter, "recursive_halving", coll_reduce_scatter_recursive_halving,
     [](const coll_shape &s) { return s.bytes < reduce_scatter_long; }, commutative,
     "auto below 512 KiB in all (the whole vector); needs a commutative op"},
    {K::reduce_scatter, "pairwise", coll_reduce_scatter_pairwise, always, commutative,
     "auto from 512 KiB in all; needs a commutative op"},
    {K::reduce_scatter, "reduce_scatterv", coll_reduce_scatter_reduce_scatterv, nullptr, nullptr,
     "runs instead of the others for a non-commutative op (reduce to rank 0, then scatterv); else forced only"},

    {K::alltoallw, "scattered", coll_alltoallw_scattered, always, nullptr,
     "auto: the exchanges posted 32 peers at a time"},
    {K::alltoallw, "pairwise", coll_alltoallw_pairwise, nullptr, nullptr, "forced only: one peer pair per round"},
};

struct kind_names {
    const char *name, *variable;
};
constexpr kind_names kinds[] = {
    {"barrier", "WEFT_COLL_BARRIER"},
    {"bcast", "WEFT_COLL_BCAST"},
    {"reduce", "WEFT_COLL_REDUCE"},
    {"allreduce", "WEFT_COLL_ALLREDUCE"},
    {"gather", "WEFT_COLL_GATHER"},
    {"gatherv", "WEFT_COLL_GATHERV"},
    {"scatter", "WEFT_COLL_SCATTER"},
    {"scatterv", "WEFT_COLL_SCATTERV"},
    {"allgather", "WEFT_COLL_ALLGATHER"},
    {"allgatherv", "WEFT_COLL_ALLGATHERV"},
    {"alltoall", "WEFT_COLL_ALLTOALL"},
    {"alltoallv", "WEFT_COLL_ALLTOALLV"},
    {"reduce_scatter_block", "WEFT_COLL_REDUCE_SCATTER_BLOCK"},
    {"scan", "WEFT_COLL_SCAN"},
    {"exscan", "WEFT_COLL_EXSCAN"},
    {"reduce_scatter", "WEFT_COLL_REDUCE_SCATTER"},
    {"alltoallw", "WEFT_COLL_ALLTOALLW"},
};
constexpr size_t nkinds = static_cast<size_t>(K::count_);
static_assert(std::size(kinds) == nkinds);

// Each collective's rows: [first, end) of `rows`.
struct range {
    uint8_t first, end;
};
constexpr std::array<range, nkinds> index = [] {
    std::array<range, nkinds> ix{};
    size_t i = 0;
    for (size_t k = 0; k < nkinds; ++k) {
        ix[k].first = static_cast<uint8_t>(i);
        while (i < std::size(rows) && rows[i].kind == static_cast<K>(k)) ++i;
        ix[k].end = static_cast<uint8_t>(i);
    }
    return ix;
}();

// What coll_choose relies on: rows grouped by collective in coll_kind order, and in each
// collective a row that auto always takes and a message row that runs on any shape.
constexpr bool well_formed() {
    if (index[nkinds - 1].end != std::size(rows)) return false;
    for (const range &r : index) {
        bool ends_auto = false, runs_always = false;
        for (size_t i = r.first; i < r.end; ++i) {
            ends_auto |= rows[i].chosen == always;
            runs_always |= rows[i].needs == nullptr && !rows[i].through_shm;
        }
        if (!ends_auto || !runs_always) return false;
    }
    return true;
}
static_assert(well_formed(), "collective registry: see well_formed()");

// WEFT_COLL_<NAME>, read once: the environment does not change under a running program.  Each
// call checks `read` (one load) before call_once (about 75 instructions under callgrind).
const coll_algorithm *forced[nkinds];  // nullptr: unset or auto
const coll_algorithm unknown{};        // a name that is no algorithm of the collective
std::once_flag read_once;
std::atomic<bool> read{false};

void read_environment() {
    for (size_t k = 0; k < nkinds; ++k) {
        forced[k] = nullptr;
        const char *v = std::getenv(kinds[k].variable);
        if (v == nullptr || *v == '\0' || std::strcmp(v, "auto") == 0) continue;
        forced[k] = &unknown;
        for (const coll_algorithm &a : coll_rows(static_cast<K>(k)))
            if (std::strcmp(v, a.name) == 0) forced[k] = &a;
    }
    read.store(true, std::memory_order_release);
}

}  // namespace

std::span<const coll_algorithm> coll_rows(coll_kind k) {
    range r = index[static_cast<size_t>(k)];
    return {rows + r.first, rows + r.end};
}
const char *coll_kind_name(coll_kind k) { return kinds[static_cast<size_t>(k)].name; }
const char *coll_variable(coll_kind k) { return kinds[static_cast<size_t>(k)].variable; }

const coll_algorithm &coll_choose(coll_kind k, const coll_shape &s, const coll_algorithm *forced_row) {
    const coll_algorithm *first = rows + index[static_cast<size_t>(k)].first, *a = forced_row;
    // Both searches end at the latest on the row that well_formed() promises.
    if (a == nullptr) {
        a = first;
        while (a->chosen == nullptr || !a->chosen(s)) ++a;
    }
    // What runs instead of a row that cannot serve: the first message algorithm that can
    // (the shared-memory rows serve only where chosen or forced).
    if (a->needs != nullptr && !a->needs(s)) {
        a = first;
        while (a->through_shm || (a->needs != nullptr && !a->needs(s))) ++a;
    }
    return *a;
}

const coll_algorithm *coll_select(coll_kind k, const coll_shape &s, const char *fn, int &rc) {
    if (!read.load(std::memory_order_acquire)) std::call_once(read_once, read_environment);
    const coll_algorithm *f = forced[static_cast<size_t>(k)];
    if (f != &unknown) {
        rc = WEFT_SUCCESS;
        return &coll_choose(k, s, f);
    }
    std::string names;
    for (const coll_algorithm &a : coll_rows(k)) names += std::string(names.empty() ? "" : ", ") + a.name;
    const char *variable = coll_variable(k);
    rc = fail(WEFT_ERR_ARG, "%s: %s=%s is not an algorithm of this collective; use auto or one of: %s", fn, variable,
              std::getenv(variable), names.c_str());
    return nullptr;
}

}  // namespace weft

using namespace weft;

extern "C" int weft_query_collectives(weft_coll_report_fn fn, void *arg) {
    if (fn == nullptr) return fail(WEFT_ERR_ARG, "weft_query_collectives: fn must not be NULL");
    for (const coll_algorithm &a : rows) {
        weft_coll_report_t r{};
        r.struct_size = sizeof r;
        r.collective = coll_kind_name(a.kind);
        r.algorithm = a.name;
        r.variable = coll_variable(a.kind);
        r.when = a.when;
        fn(&r, arg);
    }
    return WEFT_SUCCESS;
}
