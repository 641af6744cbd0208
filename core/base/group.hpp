// Groups (MPI process groups): an ordered list of world ranks, group rank i being the i-th.
// Immutable once made, so any thread may read one through its handle without a lock.
#pragma once
#include <memory>
#include <utility>
#include <vector>

#include "base/handle.hpp"

namespace weft {

struct group {
    std::vector<int> world_ranks;  // group rank -> world rank
    // (world rank, group rank) sorted by world rank: membership and translation in log time.
    std::vector<std::pair<int, int>> by_world;

    explicit group(std::vector<int> members);
    int size() const { return static_cast<int>(world_ranks.size()); }
    // The group rank of a world rank, or -1 when it is not a member.
    int rank_of(int world_rank) const;
};

extern handle_table<group> g_group_table;
// nullptr for an invalid, freed or null handle (WEFT_GROUP_EMPTY is valid).
inline group *group_get(int handle) { return g_group_table.get(handle); }
// A new handle for a group of these members; 0 when the table is full.
int group_insert(std::vector<int> world_ranks);

// The set operations of MPI (each keeps the order MPI defines).
std::vector<int> group_union(const group &a, const group &b);
std::vector<int> group_intersection(const group &a, const group &b);
std::vector<int> group_difference(const group &a, const group &b);
// 0: same members in the same order, 1: same members, 2: different members.
int group_relation(const std::vector<int> &a, const std::vector<int> &b);

}  // namespace weft
