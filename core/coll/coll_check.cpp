#include "coll/coll_check.hpp"

#include <string>
#include <vector>

#include "comm/comm_allgather.hpp"
#include "base/error.hpp"

namespace weft {

bool g_coll_check = false;

namespace {

// "weft_bcast".
std::string kind_name(uint32_t kind) {
    if (kind >= static_cast<uint32_t>(coll_kind::count_)) return "collective " + std::to_string(kind);
    return std::string("weft_") + coll_kind_name(static_cast<coll_kind>(kind));
}

std::string describe(int rank, const coll_check_record &r) {
    std::string s = "rank " + std::to_string(rank) + " called " + kind_name(r.kind);
    if (r.root >= 0) s += " with root " + std::to_string(r.root);
    switch (static_cast<coll_check_rule>(r.rule)) {
        case coll_check_rule::equal: s += ", " + std::to_string(r.a) + " bytes"; break;
        case coll_check_rule::rooted_block:
            s += ", " + std::to_string(r.a) + " bytes its own";
            if (r.b != 0 || r.root == rank) s += ", " + std::to_string(r.b) + " bytes per process at the root";
            break;
        case coll_check_rule::equal_ab:
            s += ", blocks of " + std::to_string(r.a) + " bytes sent and " + std::to_string(r.b) + " received";
            break;
        case coll_check_rule::none: break;
    }
    return s;
}

// The first process whose record disagrees with the others, or -1.
int first_odd(const std::vector<coll_check_record> &all) {
    const coll_check_record &r0 = all[0];
    for (size_t i = 0; i < all.size(); ++i) {
        const coll_check_record &r = all[i];
        if (r.kind != r0.kind || r.root != r0.root || r.rule != r0.rule) return static_cast<int>(i);
    }
    switch (static_cast<coll_check_rule>(r0.rule)) {
        case coll_check_rule::equal:
            for (size_t i = 0; i < all.size(); ++i)
                if (all[i].a != r0.a) return static_cast<int>(i);
            break;
        case coll_check_rule::rooted_block: {
            if (r0.root < 0 || static_cast<size_t>(r0.root) >= all.size()) return 0;
            uint64_t block = all[static_cast<size_t>(r0.root)].b;
            for (size_t i = 0; i < all.size(); ++i)
                if (all[i].a != block) return static_cast<int>(i);
            break;
        }
        case coll_check_rule::equal_ab:
            for (size_t i = 0; i < all.size(); ++i)
                if (all[i].a != r0.a || all[i].b != r0.a) return static_cast<int>(i);
            break;
        case coll_check_rule::none: break;
    }
    return -1;
}

}  // namespace

int coll_check(comm &c, const char *fn, const coll_check_record &mine) {
    std::vector<coll_check_record> all(static_cast<size_t>(c.size));
    if (int rc = comm_internal_allgather(c, &mine, sizeof mine, all.data())) return rc;
    int odd = first_odd(all);
    if (odd < 0) return WEFT_SUCCESS;
    // Compare with a process that agrees with rank 0 where possible (the root for rooted_block).
    int other = odd == 0 ? 1 : 0;
    if (static_cast<coll_check_rule>(all[0].rule) == coll_check_rule::rooted_block && all[0].root >= 0 &&
        all[0].root < c.size && all[0].root != odd)
        other = all[0].root;
    return fail(WEFT_ERR_ARG, "%s: the processes passed mismatched arguments (WEFT_COLL_CHECK): %s; %s", fn,
                describe(odd, all[static_cast<size_t>(odd)]).c_str(),
                describe(other, all[static_cast<size_t>(other)]).c_str());
}

}  // namespace weft
