// Group entry points (groups are local: nothing here communicates), weft_comm_group,
// weft_comm_compare and communicator names.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/group.hpp"
#include "comm/comm.hpp"
#include "transport/runtime.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

constexpr int undefined_rank = static_cast<int>(WEFT_UNDEFINED);

int check_group(const char *fn, const char *what, weft_group h, group *&g) {
    g = group_get(h);
    if (g == nullptr)
        return fail(WEFT_ERR_GROUP, "%s: %s 0x%x is not a valid group%s", fn, what, h,
                    h == WEFT_GROUP_NULL ? " (it is WEFT_GROUP_NULL)" : " (freed, or not a group handle)");
    return WEFT_SUCCESS;
}

int check_out(const char *fn, const void *out, const char *what) {
    if (out == nullptr) return fail(WEFT_ERR_ARG, "%s: %s must not be NULL", fn, what);
    return WEFT_SUCCESS;
}

int make_group(const char *fn, std::vector<int> members, weft_group *newgroup) {
    int h = group_insert(std::move(members));
    if (h == 0) return fail(WEFT_ERR_NO_MEM, "%s: too many groups (free some with weft_group_free)", fn);
    *newgroup = h;
    return WEFT_SUCCESS;
}

// Checks ranks[0..n) are valid in g and distinct; marks them in `named`.
int check_ranks(const char *fn, const group &g, size_t n, const int *ranks, std::vector<char> &named) {
    named.assign(g.world_ranks.size(), 0);
    if (n != 0 && ranks == nullptr) return fail(WEFT_ERR_ARG, "%s: ranks is NULL but n is %zu", fn, n);
    if (n > g.world_ranks.size())
        return fail(WEFT_ERR_RANK, "%s: n = %zu distinct ranks asked of a group of %d", fn, n, g.size());
    for (size_t i = 0; i < n; ++i) {
        int r = ranks[i];
        if (r < 0 || r >= g.size())
            return fail(WEFT_ERR_RANK, "%s: ranks[%zu] = %d is outside the group's 0..%d", fn, i, r, g.size() - 1);
        if (named[static_cast<size_t>(r)])
            return fail(WEFT_ERR_RANK, "%s: ranks[%zu] = %d appears twice (ranks must be distinct)", fn, i, r);
        named[static_cast<size_t>(r)] = 1;
    }
    return WEFT_SUCCESS;
}

// The ranks the triplets name, in order; checks each is valid and named once.
int expand_ranges(const char *fn, const group &g, size_t n, const int ranges[][3], std::vector<int> &out,
                  std::vector<char> &named) {
    named.assign(g.world_ranks.size(), 0);
    out.clear();
    if (n != 0 && ranges == nullptr) return fail(WEFT_ERR_ARG, "%s: ranges is NULL but n is %zu", fn, n);
    const int size = g.size();
    for (size_t i = 0; i < n; ++i) {
        const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0) return fail(WEFT_ERR_ARG, "%s: ranges[%zu] has stride 0", fn, i);
        if (first < 0 || first >= size || last < 0 || last >= size)
            return fail(WEFT_ERR_RANK, "%s: ranges[%zu] = (%d, %d, %d) leaves the group's ranks 0..%d", fn, i, first,
                        last, stride, size - 1);
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            return fail(WEFT_ERR_ARG, "%s: ranges[%zu] = (%d, %d, %d) runs away from its last rank", fn, i, first, last,
                        stride);
        for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            if (named[static_cast<size_t>(r)])
                return fail(WEFT_ERR_RANK, "%s: rank %ld is named twice (ranges[%zu] = (%d, %d, %d))", fn, r, i, first,
                            last, stride);
            named[static_cast<size_t>(r)] = 1;
            out.push_back(static_cast<int>(r));
        }
    }
    return WEFT_SUCCESS;
}

std::vector<int> members_at(const group &g, const std::vector<int> &ranks) {
    std::vector<int> out;
    out.reserve(ranks.size());
    for (int r : ranks) out.push_back(g.world_ranks[static_cast<size_t>(r)]);
    return out;
}

std::vector<int> members_not_named(const group &g, const std::vector<char> &named) {
    std::vector<int> out;
    for (size_t r = 0; r < g.world_ranks.size(); ++r)
        if (!named[r]) out.push_back(g.world_ranks[r]);
    return out;
}

int compare_result(int relation) {
    static const int results[] = {WEFT_IDENT, WEFT_SIMILAR, WEFT_UNEQUAL};
    return results[relation];
}

// Names are read and written rarely, by any thread.
std::mutex g_name_mutex;

}  // namespace
}  // namespace weft

using namespace weft;

static int comm_group_impl(weft_comm handle, weft_group *newgroup) {
    static const char fn[] = "weft_comm_group";
    if (int rc = runtime_check(fn)) return rc;
    comm *c = comm_get(handle);
    if (c == nullptr) return fail(WEFT_ERR_COMM, "%s: invalid communicator handle 0x%x", fn, handle);
    if (int rc = check_out(fn, newgroup, "group")) return rc;
    return make_group(fn, c->world_ranks, newgroup);
}

extern "C" int weft_comm_group(weft_comm handle, weft_group *newgroup) {
    return comm_entry(handle, "weft_comm_group", [&] { return comm_group_impl(handle, newgroup); });
}

static int group_size_impl(weft_group handle, int *size) {
    static const char fn[] = "weft_group_size";
    if (int rc = runtime_check(fn)) return rc;
    group *g;
    if (int rc = check_group(fn, "group", handle, g)) return rc;
    if (int rc = check_out(fn, size, "size")) return rc;
    *size = g->size();
    return WEFT_SUCCESS;
}

extern "C" int weft_group_size(weft_group handle, int *size) {
    return self_entry("weft_group_size", [&] { return group_size_impl(handle, size); });
}

static int group_rank_impl(weft_group handle, int *rank) {
    static const char fn[] = "weft_group_rank";
    if (int rc = runtime_check(fn)) return rc;
    group *g;
    if (int rc = check_group(fn, "group", handle, g)) return rc;
    if (int rc = check_out(fn, rank, "rank")) return rc;
    int r = g->rank_of(rt().world_rank);
    *rank = r >= 0 ? r : undefined_rank;
    return WEFT_SUCCESS;
}

extern "C" int weft_group_rank(weft_group handle, int *rank) {
    return self_entry("weft_group_rank", [&] { return group_rank_impl(handle, rank); });
}

static int group_incl_impl(weft_group handle, size_t n, const int ranks[], weft_group *newgroup) {
    static const char fn[] = "weft_group_incl";
    if (int rc = runtime_check(fn)) return rc;
    group *g;
    if (int rc = check_group(fn, "group", handle, g)) return rc;
    if (int rc = check_out(fn, newgroup, "newgroup")) return rc;
    std::vector<char> named;
    if (int rc = check_ranks(fn, *g, n, ranks, named)) return rc;
    return make_group(fn, members_at(*g, std::vector<int>(ranks, ranks + n)), newgroup);
}

extern "C" int weft_group_incl(weft_group handle, size_t n, const int ranks[], weft_group *newgroup) {
    return self_entry("weft_group_incl", [&] { return group_incl_impl(handle, n, ranks, newgroup); });
}

static int group_excl_impl(weft_group handle, size_t n, const int ranks[], weft_group *newgroup) {
    static const char fn[] = "weft_group_excl";
    if (int rc = runtime_check(fn)) return rc;
    group *g;
    if (int rc = check_group(fn, "group", handle, g)) return rc;
    if (int rc = check_out(fn, newgroup, "newgroup")) return rc;
    std::vector<char> named;
    if (int rc = check_ranks(fn, *g, n, ranks, named)) return rc;
    return make_group(fn, members_not_named(*g, named), newgroup);
}

extern "C" int weft_group_excl(weft_group handle, size_t n, const int ranks[], weft_group *newgroup) {
    return self_entry("weft_group_excl", [&] { return group_excl_impl(handle, n, ranks, newgroup); });
}

static int group_range_incl_impl(weft_group handle, size_t n, int ranges[][3], weft_group *newgroup) {
    static const char fn[] = "weft_group_range_incl";
    if (int rc = runtime_check(fn)) return rc;
    group *g;
    if (int rc = check_group(fn, "group", handle, g)) return rc;
    if (int rc = check_out(fn, newgroup, "newgroup")) return rc;
    std::vector<int> ranks;
    std::vector<char> named;
    if (int rc = expand_ranges(fn, *g, n, ranges, ranks, named)) return rc;
    return make_group(fn, members_at(*g, ranks), newgroup);
}

extern "C" int weft_group_range_incl(weft_group handle, size_t n, int ranges[][3], weft_group *newgroup) {
    return self_entry("weft_group_range_incl", [&] { return group_range_incl_impl(handle, n, ranges, newgroup); });
}

static int group_range_excl_impl(weft_group handle, size_t n, int ranges[][3], weft_group *newgroup) {
    static const char fn[] = "weft_group_range_excl";
    if (int rc = runtime_check(fn)) return rc;
    group *g;
    if (int rc = check_group(fn, "group", handle, g)) return rc;
    if (int rc = check_out(fn, newgroup, "newgroup")) return rc;
    std::vector<int> ranks;
    std::vector<char> named;
    if (int rc = expand_ranges(fn, *g, n, ranges, ranks, named)) return rc;
    return make_group(fn, members_not_named(*g, named), newgroup);
}

extern "C" int weft_group_range_excl(weft_group handle, size_t n, int ranges[][3], weft_group *newgroup) {
    return self_entry("weft_group_range_excl", [&] { return group_range_excl_impl(handle, n, ranges, newgroup); });
}

namespace {

// The entry points of the two-group operations differ only in the operation.
int two_groups(const char *fn, weft_group h1, weft_group h2, weft_group *newgroup,
               std::vector<int> (*op)(const group &, const group &)) {
    if (int rc = runtime_check(fn)) return rc;
    group *g1, *g2;
    if (int rc = check_group(fn, "group1", h1, g1)) return rc;
    if (int rc = check_group(fn, "group2", h2, g2)) return rc;
    if (int rc = check_out(fn, newgroup, "newgroup")) return rc;
    return make_group(fn, op(*g1, *g2), newgroup);
}

}  // namespace

static int group_union_impl(weft_group group1, weft_group group2, weft_group *newgroup) {
    return two_groups("weft_group_union", group1, group2, newgroup, group_union);
}

extern "C" int weft_group_union(weft_group group1, weft_group group2, weft_group *newgroup) {
    return self_entry("weft_group_union", [&] { return group_union_impl(group1, group2, newgroup); });
}

static int group_intersection_impl(weft_group group1, weft_group group2, weft_group *newgroup) {
    return two_groups("weft_group_intersection", group1, group2, newgroup, group_intersection);
}

extern "C" int weft_group_intersection(weft_group group1, weft_group group2, weft_group *newgroup) {
    return self_entry("weft_group_intersection", [&] { return group_intersection_impl(group1, group2, newgroup); });
}

static int group_difference_impl(weft_group group1, weft_group group2, weft_group *newgroup) {
    return two_groups("weft_group_difference", group1, group2, newgroup, group_difference);
}

extern "C" int weft_group_difference(weft_group group1, weft_group group2, weft_group *newgroup) {
    return self_entry("weft_group_difference", [&] { return group_difference_impl(group1, group2, newgroup); });
}

static int group_translate_ranks_impl(weft_group group1, size_t n, const int ranks1[], weft_group group2,
                                      int ranks2[]) {
    static const char fn[] = "weft_group_translate_ranks";
    if (int rc = runtime_check(fn)) return rc;
    group *g1, *g2;
    if (int rc = check_group(fn, "group1", group1, g1)) return rc;
    if (int rc = check_group(fn, "group2", group2, g2)) return rc;
    if (n != 0 && (ranks1 == nullptr || ranks2 == nullptr))
        return fail(WEFT_ERR_ARG, "%s: ranks1 and ranks2 must not be NULL when n (%zu) is not 0", fn, n);
    for (size_t i = 0; i < n; ++i) {
        int r = ranks1[i];
        if (r != WEFT_PROC_NULL && (r < 0 || r >= g1->size()))
            return fail(WEFT_ERR_RANK, "%s: ranks1[%zu] = %d is outside group1's 0..%d", fn, i, r, g1->size() - 1);
    }
    for (size_t i = 0; i < n; ++i) {
        int r = ranks1[i];
        if (r == WEFT_PROC_NULL) {
            ranks2[i] = WEFT_PROC_NULL;
            continue;
        }
        int t = g2->rank_of(g1->world_ranks[static_cast<size_t>(r)]);
        ranks2[i] = t >= 0 ? t : undefined_rank;
    }
    return WEFT_SUCCESS;
}

extern "C" int weft_group_translate_ranks(weft_group group1, size_t n, const int ranks1[], weft_group group2,
                                          int ranks2[]) {
    return self_entry("weft_group_translate_ranks",
                      [&] { return group_translate_ranks_impl(group1, n, ranks1, group2, ranks2); });
}

static int group_compare_impl(weft_group group1, weft_group group2, int *result) {
    static const char fn[] = "weft_group_compare";
    if (int rc = runtime_check(fn)) return rc;
    group *g1, *g2;
    if (int rc = check_group(fn, "group1", group1, g1)) return rc;
    if (int rc = check_group(fn, "group2", group2, g2)) return rc;
    if (int rc = check_out(fn, result, "result")) return rc;
    *result = compare_result(group_relation(g1->world_ranks, g2->world_ranks));
    return WEFT_SUCCESS;
}

extern "C" int weft_group_compare(weft_group group1, weft_group group2, int *result) {
    return self_entry("weft_group_compare", [&] { return group_compare_impl(group1, group2, result); });
}

static int group_free_impl(weft_group *handle) {
    static const char fn[] = "weft_group_free";
    if (int rc = runtime_check(fn)) return rc;
    if (int rc = check_out(fn, handle, "group")) return rc;
    group *g;
    if (int rc = check_group(fn, "group", *handle, g)) return rc;
    if (handle_generation(*handle) == 0)
        return fail(WEFT_ERR_GROUP, "%s: WEFT_GROUP_EMPTY is predefined and cannot be freed", fn);
    g_group_table.erase(*handle);
    *handle = WEFT_GROUP_NULL;
    return WEFT_SUCCESS;
}

extern "C" int weft_group_free(weft_group *handle) {
    return self_entry("weft_group_free", [&] { return group_free_impl(handle); });
}

static int comm_compare_impl(weft_comm comm1, weft_comm comm2, int *result) {
    static const char fn[] = "weft_comm_compare";
    if (int rc = runtime_check(fn)) return rc;
    comm *c1 = comm_get(comm1), *c2 = comm_get(comm2);
    if (c1 == nullptr) return fail(WEFT_ERR_COMM, "%s: comm1 0x%x is not a valid communicator", fn, comm1);
    if (c2 == nullptr) return fail(WEFT_ERR_COMM, "%s: comm2 0x%x is not a valid communicator", fn, comm2);
    if (int rc = check_out(fn, result, "result")) return rc;
    if (c1 == c2) {
        *result = WEFT_IDENT;
        return WEFT_SUCCESS;
    }
    static const int results[] = {WEFT_CONGRUENT, WEFT_SIMILAR, WEFT_UNEQUAL};
    *result = results[group_relation(c1->world_ranks, c2->world_ranks)];
    return WEFT_SUCCESS;
}

extern "C" int weft_comm_compare(weft_comm comm1, weft_comm comm2, int *result) {
    return comm_entry(comm1, "weft_comm_compare", [&] { return comm_compare_impl(comm1, comm2, result); });
}

static int comm_set_name_impl(weft_comm handle, const char *name) {
    static const char fn[] = "weft_comm_set_name";
    if (int rc = runtime_check(fn)) return rc;
    comm *c = comm_get(handle);
    if (c == nullptr) return fail(WEFT_ERR_COMM, "%s: invalid communicator handle 0x%x", fn, handle);
    if (int rc = check_out(fn, name, "name")) return rc;
    std::lock_guard lock(g_name_mutex);
    c->name.text.assign(name, strnlen(name, WEFT_MAX_OBJECT_NAME - 1));
    c->name.set = true;
    return WEFT_SUCCESS;
}

extern "C" int weft_comm_set_name(weft_comm handle, const char *name) {
    return comm_entry(handle, "weft_comm_set_name", [&] { return comm_set_name_impl(handle, name); });
}

static int comm_get_name_impl(weft_comm handle, char *name, size_t *resultlen) {
    static const char fn[] = "weft_comm_get_name";
    if (int rc = runtime_check(fn)) return rc;
    comm *c = comm_get(handle);
    if (c == nullptr) return fail(WEFT_ERR_COMM, "%s: invalid communicator handle 0x%x", fn, handle);
    if (name == nullptr || resultlen == nullptr)
        return fail(WEFT_ERR_ARG, "%s: name and resultlen must not be NULL", fn);
    std::string text;
    {
        std::lock_guard lock(g_name_mutex);
        if (c->name.set)
            text = c->name.text;
        else if (handle == WEFT_COMM_WORLD)
            text = "WEFT_COMM_WORLD";
        else if (handle == WEFT_COMM_SELF)
            text = "WEFT_COMM_SELF";
    }
    std::memcpy(name, text.c_str(), text.size() + 1);
    *resultlen = text.size();
    return WEFT_SUCCESS;
}

extern "C" int weft_comm_get_name(weft_comm handle, char *name, size_t *resultlen) {
    return comm_entry(handle, "weft_comm_get_name", [&] { return comm_get_name_impl(handle, name, resultlen); });
}
