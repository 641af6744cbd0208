// Groups (MPI 4.0 section 7.3).
#include "handles.hpp"

using namespace weft_mpi;

namespace {
// The result is read by reference: after the call that wrote it.
int out_group(int rc, const weft_group &g, MPI_Group *newgroup) {
    if (rc == WEFT_SUCCESS) *newgroup = mgroup(g);
    return merr(rc);
}
// Weft gives (int)WEFT_UNDEFINED, -1, for "not a member": MPI says MPI_UNDEFINED.
int mrank_or_undefined(int r) { return r == -1 ? MPI_UNDEFINED : r == WEFT_PROC_NULL ? MPI_PROC_NULL : r; }
}  // namespace

extern "C" int PMPI_Group_size(MPI_Group group, int *size) { return merr(weft_group_size(wgroup(group), size)); }
extern "C" int PMPI_Group_rank(MPI_Group group, int *rank) {
    if (rank == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Group_rank: rank is NULL");
    int r;
    if (int rc = weft_group_rank(wgroup(group), &r)) return merr(rc);
    *rank = mrank_or_undefined(r);
    return MPI_SUCCESS;
}

// incl and excl take ranks (const int[]), range_incl and range_excl triplets (int[][3]).
#define WEFT_MPI_GROUP_SUBSET(Name, wname, array)                                                          \
    extern "C" int PMPI_##Name(MPI_Group group, int n, array, MPI_Group *newgroup) {                       \
        if (n < 0 || newgroup == nullptr)                                                                  \
            return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_" #Name ": n must be >= 0 and newgroup valid"); \
        weft_group g = WEFT_GROUP_NULL;                                                                    \
        return out_group(wname(wgroup(group), static_cast<size_t>(n), ranks, &g), g, newgroup);            \
    }
WEFT_MPI_GROUP_SUBSET(Group_incl, weft_group_incl, const int ranks[])
WEFT_MPI_GROUP_SUBSET(Group_excl, weft_group_excl, const int ranks[])
WEFT_MPI_GROUP_SUBSET(Group_range_incl, weft_group_range_incl, int ranks[][3])
WEFT_MPI_GROUP_SUBSET(Group_range_excl, weft_group_range_excl, int ranks[][3])

#define WEFT_MPI_GROUP_SET(Name, wname)                                                                        \
    extern "C" int PMPI_##Name(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) {                      \
        if (newgroup == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_" #Name ": newgroup is NULL"); \
        weft_group g = WEFT_GROUP_NULL;                                                                        \
        return out_group(wname(wgroup(group1), wgroup(group2), &g), g, newgroup);                              \
    }
WEFT_MPI_GROUP_SET(Group_union, weft_group_union)
WEFT_MPI_GROUP_SET(Group_intersection, weft_group_intersection)
WEFT_MPI_GROUP_SET(Group_difference, weft_group_difference)

extern "C" int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]) {
    if (n < 0 || (n > 0 && (ranks1 == nullptr || ranks2 == nullptr)))
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Group_translate_ranks: bad n or NULL arrays");
    scratch<int> in(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) in[i] = ranks1[i] == MPI_PROC_NULL ? WEFT_PROC_NULL : ranks1[i];
    if (int rc = weft_group_translate_ranks(wgroup(group1), static_cast<size_t>(n), in.get(), wgroup(group2), ranks2))
        return merr(rc);
    for (int i = 0; i < n; ++i) ranks2[i] = mrank_or_undefined(ranks2[i]);
    return MPI_SUCCESS;
}
extern "C" int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result) {
    return merr(weft_group_compare(wgroup(group1), wgroup(group2), result));
}
extern "C" int PMPI_Group_free(MPI_Group *group) {
    if (group == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Group_free: group is NULL");
    weft_group g = wgroup(*group);
    if (int rc = weft_group_free(&g)) return merr(rc);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

#define WEFT_MPI_FAMILY_group 1
#include "alias.hpp"
