/* Weft public C API: groups and communicator creation from groups (MPI 4.0 chapter 7).
 * Same conventions as weft.h, which it extends: MPI names with the prefix weft_, counts size_t,
 * ranks int, every call returns an error code. */
#ifndef WEFT_WEFT_GROUP_H
#define WEFT_WEFT_GROUP_H

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Invalid group handle (null, freed, of another kind) or group argument (a group that is not a
 * subset of the communicator's, a predefined group given to weft_group_free). */
enum { WEFT_ERR_GROUP = 31 };

/* ---- Groups ----
 * A group is an ordered set of processes: rank i of the group is its i-th process.  Groups are
 * local objects: making and comparing them never communicates. */
typedef int weft_group;
#define WEFT_GROUP_NULL ((weft_group)0)
/* The group with no members.  It cannot be freed.  Operations whose result is empty return a
 * new handle of an empty group (weft_group_compare with WEFT_GROUP_EMPTY: WEFT_IDENT), which
 * the caller frees like any other, so that code freeing every group it made stays correct. */
#define WEFT_GROUP_EMPTY ((weft_group)0x90000001)

/* Results of weft_group_compare and weft_comm_compare (MPI's values). */
enum { WEFT_IDENT = 0, WEFT_CONGRUENT = 1, WEFT_SIMILAR = 2, WEFT_UNEQUAL = 3 };

/* Longest communicator name, with its terminating NUL (MPI_MAX_OBJECT_NAME). */
#define WEFT_MAX_OBJECT_NAME 128

/* Ranks that have no counterpart: weft_group_rank of a process outside the group, and
 * weft_group_translate_ranks of a process not in the second group, give (int)WEFT_UNDEFINED,
 * that is -1, as weft_comm_split takes WEFT_UNDEFINED converted to int for "no color".  In C
 * and C++ `rank == WEFT_UNDEFINED` holds for it (the int converts to SIZE_MAX). */

/* The group of comm's processes, in comm's rank order (a multiplex communicator: one member
 * per process, whatever the number of its streams). */
WEFT_API int weft_comm_group(weft_comm comm, weft_group *group);
WEFT_API int weft_group_size(weft_group group, int *size);
/* The calling process's rank in group, or (int)WEFT_UNDEFINED when it is not a member. */
WEFT_API int weft_group_rank(weft_group group, int *rank);
/* The members of group at ranks[0..n), in that order; the ranks must be valid and distinct
 * (WEFT_ERR_RANK).  n = 0 gives an empty group. */
WEFT_API int weft_group_incl(weft_group group, size_t n, const int ranks[], weft_group *newgroup);
/* The members of group not at ranks[0..n) (valid and distinct), in group's order. */
WEFT_API int weft_group_excl(weft_group group, size_t n, const int ranks[], weft_group *newgroup);
/* Triplets (first, last, stride): first, first + stride, ... up to last inclusive.  stride may
 * be negative, never 0; a triplet that runs away from last (first > last with stride > 0, or
 * first < last with stride < 0) is refused (WEFT_ERR_ARG), as MPICH refuses it.  Every rank
 * named must be valid and named once (WEFT_ERR_RANK). */
WEFT_API int weft_group_range_incl(weft_group group, size_t n, int ranges[][3], weft_group *newgroup);
WEFT_API int weft_group_range_excl(weft_group group, size_t n, int ranges[][3], weft_group *newgroup);
/* group1's members, then group2's members not in group1 (each in its group's order). */
WEFT_API int weft_group_union(weft_group group1, weft_group group2, weft_group *newgroup);
/* group1's members that are in group2, in group1's order. */
WEFT_API int weft_group_intersection(weft_group group1, weft_group group2, weft_group *newgroup);
/* group1's members that are not in group2, in group1's order. */
WEFT_API int weft_group_difference(weft_group group1, weft_group group2, weft_group *newgroup);
/* ranks2[i]: the rank in group2 of the process at ranks1[i] in group1; (int)WEFT_UNDEFINED
 * when it is not in group2; WEFT_PROC_NULL stays WEFT_PROC_NULL. */
WEFT_API int weft_group_translate_ranks(weft_group group1, size_t n, const int ranks1[], weft_group group2,
                                        int ranks2[]);
/* WEFT_IDENT: same members in the same order; WEFT_SIMILAR: same members, another order;
 * WEFT_UNEQUAL otherwise. */
WEFT_API int weft_group_compare(weft_group group1, weft_group group2, int *result);
/* Sets *group to WEFT_GROUP_NULL.  Communicators made from the group are unaffected.
 * WEFT_GROUP_EMPTY cannot be freed (WEFT_ERR_GROUP). */
WEFT_API int weft_group_free(weft_group *group);

/* ---- Communicators from groups ----
 * A communicator made from a stream or multiplex communicator (weft_comm_create,
 * weft_comm_create_group, weft_comm_idup) is one too: each member keeps the streams it
 * attached to the parent, with their indices, and its endpoints; only the context differs. */

/* Collective over comm: every process of comm calls it.  group must be a subset of comm's
 * group.  Members of group get a communicator over group (rank order: group's); the others get
 * WEFT_COMM_NULL.  As in MPI 2.2 and MPICH, processes may pass different, disjoint groups:
 * each group's members must pass the same group, and each disjoint group becomes its own
 * communicator. */
WEFT_API int weft_comm_create(weft_comm comm, weft_group group, weft_comm *newcomm);
/* Collective over group's members only: comm's other processes need not call it and may do
 * anything meanwhile (one that calls it, as with WEFT_GROUP_EMPTY, gets WEFT_COMM_NULL at once,
 * as in MPICH).  Concurrent calls on overlapping
 * groups, from different threads, must pass different tags (tags that differ in their low 18
 * bits: the agreement's messages carry those). */
WEFT_API int weft_comm_create_group(weft_comm comm, weft_group group, int tag, weft_comm *newcomm);
/* WEFT_IDENT: the same communicator; WEFT_CONGRUENT: same processes in the same rank order;
 * WEFT_SIMILAR: same processes, another order; WEFT_UNEQUAL otherwise. */
WEFT_API int weft_comm_compare(weft_comm comm1, weft_comm comm2, int *result);
/* Names are local, for tools and messages, and are not copied by dup, idup or create.
 * WEFT_COMM_WORLD and WEFT_COMM_SELF are named "WEFT_COMM_WORLD" and "WEFT_COMM_SELF" until
 * renamed; other communicators have the empty name.  A name longer than
 * WEFT_MAX_OBJECT_NAME - 1 characters is cut to that length. */
WEFT_API int weft_comm_set_name(weft_comm comm, const char *name);
/* name must hold WEFT_MAX_OBJECT_NAME bytes; *resultlen: its length without the NUL. */
WEFT_API int weft_comm_get_name(weft_comm comm, char *name, size_t *resultlen);
/* Nonblocking weft_comm_dup: returns at once with *newcomm set, usable once the request has
 * completed (weft_wait, weft_test, ...).  Collective over comm and ordered with comm's other
 * collectives; a process may communicate with others before they reach their own call. */
WEFT_API int weft_comm_idup(weft_comm comm, weft_comm *newcomm, weft_request *request);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_WEFT_GROUP_H */
