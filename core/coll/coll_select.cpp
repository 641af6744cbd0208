#include "coll/coll_select.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "base/error.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

const coll_algorithms table[] = {
    {"WEFT_COLL_BARRIER", {"dissemination", nullptr}},
    {"WEFT_COLL_BCAST", {"binomial", "scatter_allgather", nullptr}},
    {"WEFT_COLL_REDUCE", {"binomial", "linear", nullptr}},
    {"WEFT_COLL_ALLREDUCE", {"recursive_doubling", "reduce_scatter_allgather", "ring", nullptr}},
    {"WEFT_COLL_GATHER", {"binomial", "linear", nullptr}},
    {"WEFT_COLL_GATHERV", {"linear", nullptr}},
    {"WEFT_COLL_SCATTER", {"binomial", "linear", nullptr}},
    {"WEFT_COLL_SCATTERV", {"linear", nullptr}},
    {"WEFT_COLL_ALLGATHER", {"ring", "bruck", nullptr}},
    {"WEFT_COLL_ALLGATHERV", {"ring", nullptr}},
    {"WEFT_COLL_ALLTOALL", {"pairwise", "linear", nullptr}},
    {"WEFT_COLL_ALLTOALLV", {"pairwise", "linear", nullptr}},
    {"WEFT_COLL_REDUCE_SCATTER_BLOCK", {"pairwise", "ring", nullptr}},
    {"WEFT_COLL_SCAN", {"recursive_doubling", "linear", nullptr}},
    {"WEFT_COLL_EXSCAN", {"recursive_doubling", "linear", nullptr}},
};
static_assert(sizeof table / sizeof table[0] == static_cast<size_t>(coll_kind::count_));

constexpr int unset = -1, unknown = -2;

// Read once: the environment does not change under a running program.
int forced[static_cast<size_t>(coll_kind::count_)];
std::once_flag read_once;

void read_environment() {
    for (size_t k = 0; k < static_cast<size_t>(coll_kind::count_); ++k) {
        forced[k] = unset;
        const char *v = std::getenv(table[k].variable);
        if (v == nullptr || *v == '\0' || std::strcmp(v, "auto") == 0) continue;
        forced[k] = unknown;
        for (int i = 0; table[k].names[i] != nullptr; ++i)
            if (std::strcmp(v, table[k].names[i]) == 0) forced[k] = i;
    }
}

}  // namespace

const coll_algorithms &coll_algorithm_table(coll_kind k) { return table[static_cast<size_t>(k)]; }

int coll_forced(coll_kind k, const char *fn, int &rc) {
    std::call_once(read_once, read_environment);
    int f = forced[static_cast<size_t>(k)];
    rc = WEFT_SUCCESS;
    if (f != unknown) return f;
    const coll_algorithms &t = table[static_cast<size_t>(k)];
    std::string names;
    for (int i = 0; t.names[i] != nullptr; ++i) names += std::string(i ? ", " : "") + t.names[i];
    rc = fail(WEFT_ERR_ARG, "%s: %s=%s is not an algorithm of this collective; use auto or one of: %s", fn,
              t.variable, std::getenv(t.variable), names.c_str());
    return unset;
}

int coll_choose(coll_kind k, const coll_shape &s, int forced) {
    int n = s.procs;
    int automatic = 0;
    switch (k) {
    case coll_kind::bcast: automatic = s.bytes < 16384 || n < 3 ? 0 : 1; break;
    case coll_kind::allreduce: {
        int pof2 = 1;
        while (pof2 * 2 <= n) pof2 *= 2;
        bool large = s.bytes > 8192 && s.count >= static_cast<size_t>(pof2);
        automatic = large ? 1 : 0;
        break;
    }
    case coll_kind::gather:
    case coll_kind::scatter: automatic = s.bytes >= 65536 ? 1 : 0; break;
    case coll_kind::allgather: automatic = s.bytes * static_cast<size_t>(n) < 81920 ? 1 : 0; break;
    // alltoallv: block sizes differ between ranks, so the automatic choice must not use them.
    case coll_kind::alltoall: automatic = s.bytes < 32768 ? 1 : 0; break;
    case coll_kind::alltoallv: automatic = 1; break;
    case coll_kind::reduce_scatter_block: automatic = s.bytes >= 512 && s.commutative ? 1 : 0; break;
    default: break;
    }
    int alg = forced >= 0 ? forced : automatic;
    switch (k) {
    case coll_kind::allreduce:
        if (!s.commutative || s.count < static_cast<size_t>(n)) alg = 0;  // the others reorder operands
        break;
    case coll_kind::reduce_scatter_block:
        if (!s.commutative) alg = 0;
        break;
    // The binomial tree forwards whole subtrees: uniform, densely packed blocks only.
    case coll_kind::gather:
    case coll_kind::scatter: alg = alg == 0 && s.dense ? 0 : 1; break;
    case coll_kind::allgather: alg = alg == 1 && s.dense ? 1 : 0; break;
    default: break;
    }
    return alg;
}

}  // namespace weft
