// The group table (with WEFT_GROUP_EMPTY) and MPI's set operations on groups.
#include "base/group.hpp"

#include <algorithm>

#include "weft/weft.h"

namespace weft {

group::group(std::vector<int> members) : world_ranks(std::move(members)) {
    by_world.reserve(world_ranks.size());
    for (size_t i = 0; i < world_ranks.size(); ++i) by_world.emplace_back(world_ranks[i], static_cast<int>(i));
    std::sort(by_world.begin(), by_world.end());
}

int group::rank_of(int world_rank) const {
    auto it = std::lower_bound(by_world.begin(), by_world.end(), std::make_pair(world_rank, -1));
    return it != by_world.end() && it->first == world_rank ? it->second : -1;
}

handle_table<group> g_group_table(handle_kind::group, 16);

namespace {
// WEFT_GROUP_EMPTY exists from program start (defined after the table in this file, so
// constructed after it): a group names world ranks only and needs nothing of weft_init.
struct install_empty {
    install_empty() {
        g_group_table.put_predefined(handle_slot(WEFT_GROUP_EMPTY), std::make_shared<group>(std::vector<int>{}));
    }
} installed_empty;
}  // namespace

int group_insert(std::vector<int> world_ranks) {
    return g_group_table.insert(std::make_shared<group>(std::move(world_ranks)));
}

std::vector<int> group_union(const group &a, const group &b) {
    std::vector<int> out = a.world_ranks;
    for (int w : b.world_ranks)
        if (a.rank_of(w) < 0) out.push_back(w);
    return out;
}

std::vector<int> group_intersection(const group &a, const group &b) {
    std::vector<int> out;
    for (int w : a.world_ranks)
        if (b.rank_of(w) >= 0) out.push_back(w);
    return out;
}

std::vector<int> group_difference(const group &a, const group &b) {
    std::vector<int> out;
    for (int w : a.world_ranks)
        if (b.rank_of(w) < 0) out.push_back(w);
    return out;
}

int group_relation(const std::vector<int> &a, const std::vector<int> &b) {
    if (a == b) return 0;
    if (a.size() != b.size()) return 2;
    std::vector<int> sa = a, sb = b;
    std::sort(sa.begin(), sa.end());
    std::sort(sb.begin(), sb.end());
    return sa == sb ? 1 : 2;
}

}  // namespace weft
