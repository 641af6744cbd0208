/* Communicators, groups, derived datatypes, pack/unpack and reduction operations through the
 * MPI front end: every call of those families, int and _c forms, user operations (both
 * MPI_User_function kinds) and MPI's special values (MPI_UNDEFINED, MPI_GROUP_EMPTY, ...). */
#include <stdint.h>
#include <string.h>

#include "mpi_check.h"

static int rank, size;

static void int_sum(void *in, void *inout, int *len, MPI_Datatype *t) {
    CHECK(*t == MPI_INT);
    for (int i = 0; i < *len; ++i) ((int *)inout)[i] += ((int *)in)[i];
}
static void long_max_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *t) {
    CHECK(*t == MPI_LONG);
    for (MPI_Count i = 0; i < *len; ++i)
        if (((long *)in)[i] > ((long *)inout)[i]) ((long *)inout)[i] = ((long *)in)[i];
}
/* Associative, not commutative: 2x2 matrix products, inout = in x inout (in: the lower ranks). */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)t;
    for (int k = 0; k < *len; ++k) {
        long *a = (long *)in + 4 * k, *b = (long *)inout + 4 * k, c[4];
        c[0] = a[0] * b[0] + a[1] * b[2], c[1] = a[0] * b[1] + a[1] * b[3];
        c[2] = a[2] * b[0] + a[3] * b[2], c[3] = a[2] * b[1] + a[3] * b[3];
        memcpy(b, c, sizeof c);
    }
}

/* Attribute callbacks: count calls, copy the value + 1 (so a copy is visible). */
static int copies, deletes, self_deleted;
static int copy_plus_one(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag) {
    (void)comm, (void)key;
    CHECK(extra == (void *)&copies);
    ++copies;
    *(void **)out = (void *)((char *)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}
static int count_delete(MPI_Comm comm, int key, void *value, void *extra) {
    (void)comm, (void)key, (void)value, (void)extra;
    ++deletes;
    return MPI_SUCCESS;
}
static int self_delete(MPI_Comm comm, int key, void *value, void *extra) {
    (void)key, (void)value, (void)extra;
    CHECK(comm == MPI_COMM_SELF);
    self_deleted = 1;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    print_banner("mpi_objects");

    /* ---- communicators ---- */
    MPI_Comm dup, idup, split, none, created, grouped;
    int res = -1, n = -1, r = -1, flag = -1;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
    CHECK(res == MPI_CONGRUENT);
    CHECK_RC(MPI_Comm_compare(dup, dup, &res));
    CHECK(res == MPI_IDENT);
    MPI_Request req;
    CHECK_RC(MPI_Comm_idup(dup, &idup, &req));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Comm_size(idup, &n));
    CHECK(n == size);
    CHECK_RC(MPI_Comm_test_inter(idup, &flag));
    CHECK(flag == 0);
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &split)); /* reversed order */
    CHECK_RC(MPI_Comm_rank(split, &r));
    CHECK_RC(MPI_Comm_size(split, &n));
    CHECK(n == (size - rank % 2 + 1) / 2 && r == n - 1 - rank / 2);
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &none));
    CHECK((rank == 0) == (none != MPI_COMM_NULL));
    if (none != MPI_COMM_NULL) CHECK_RC(MPI_Comm_free(&none));
    /* split by node: one node here */
    MPI_Comm node;
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL, &node));
    CHECK_RC(MPI_Comm_size(node, &n));
    CHECK_RC(MPI_Comm_rank(node, &r));
    CHECK(n == size && r == size - 1 - rank);
    CHECK_RC(MPI_Comm_free(&node));
    CHECK_RC(
        MPI_Comm_split_type(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    CHECK((rank == 0) == (node == MPI_COMM_NULL));
    if (node != MPI_COMM_NULL) {
        CHECK_RC(MPI_Comm_size(node, &n));
        CHECK(n == size - 1);
        CHECK_RC(MPI_Comm_free(&node));
    }
#ifdef WEFT_MPI /* the hardware split types as Weft defines them (docs/mpi.md) */
    MPI_Info hw;
    CHECK_RC(MPI_Info_create(&hw));
    CHECK_RC(MPI_Info_set(hw, "mpi_hw_resource_type", "mpi_shared_memory"));
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, hw, &node));
    CHECK_RC(MPI_Comm_size(node, &n));
    CHECK(n == size);
    CHECK_RC(MPI_Comm_free(&node));
    CHECK_RC(MPI_Info_set(hw, "mpi_hw_resource_type", "a-resource-weft-does-not-know"));
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, hw, &node));
    CHECK(node == MPI_COMM_NULL);
    CHECK_RC(MPI_Info_free(&hw));
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &node));
    CHECK(node == MPI_COMM_NULL); /* one node: no strictly smaller split */
#endif
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    CHECK_RC(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14);
    CHECK_RC(MPI_Comm_set_name(dup, "the dup"));
    CHECK_RC(MPI_Comm_get_name(dup, name, &len));
    CHECK(strcmp(name, "the dup") == 0 && len == 7);

    /* ---- memory, parent, statuses filled by hand ---- */
    double *mem = NULL;
    CHECK_RC(MPI_Alloc_mem(100 * sizeof(double), MPI_INFO_NULL, &mem));
    for (int i = 0; i < 100; ++i) mem[i] = i;
    CHECK(mem[99] == 99.0);
    CHECK_RC(MPI_Free_mem(mem));
#ifdef WEFT_MPI /* Weft's own promise: a page or more starts on a page, less on a cache line */
    char *big = NULL;
    CHECK_RC(MPI_Alloc_mem(65536, MPI_INFO_NULL, &big));
    CHECK(((uintptr_t)big & 4095) == 0);
    big[65535] = 1;
    CHECK_RC(MPI_Free_mem(big));
    CHECK_RC(MPI_Alloc_mem(100, MPI_INFO_NULL, &big));
    CHECK(((uintptr_t)big & 63) == 0);
    CHECK_RC(MPI_Free_mem(big));
#endif
    MPI_Comm parent;
    CHECK_RC(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL);
    MPI_Status fake;
    memset(&fake, 0, sizeof fake);
    CHECK_RC(MPI_Status_set_elements(&fake, MPI_DOUBLE, 7));
    int got = -1;
    CHECK_RC(MPI_Get_count(&fake, MPI_DOUBLE, &got));
    CHECK(got == 7);
#ifdef WEFT_MPI /* not in MPICH 4.0.2 */
    CHECK_RC(MPI_Status_set_elements_c(&fake, MPI_INT, (MPI_Count)5));
    CHECK_RC(MPI_Get_elements(&fake, MPI_INT, &got));
    CHECK(got == 5);
#endif
    CHECK_RC(MPI_Status_set_elements_x(&fake, MPI_BYTE, (MPI_Count)3));
    CHECK_RC(MPI_Status_set_cancelled(&fake, 1));
    CHECK_RC(MPI_Test_cancelled(&fake, &flag));
    CHECK(flag == 1);
    CHECK_RC(MPI_Get_count(&fake, MPI_BYTE, &got));
    CHECK(got == 3); /* the cancelled bit leaves the count alone */

    /* ---- hints on communicators ---- */
    {
        MPI_Info hints, used;
        MPI_Comm hinted, ihinted;
        char val[MPI_MAX_INFO_VAL + 1];
        int nk = -1;
        CHECK_RC(MPI_Info_create(&hints));
        CHECK_RC(MPI_Info_set(hints, "mpi_assert_no_any_tag", "true"));
        CHECK_RC(MPI_Comm_dup_with_info(MPI_COMM_WORLD, hints, &hinted));
        CHECK_RC(MPI_Comm_size(hinted, &n));
        CHECK(n == size);
        CHECK_RC(MPI_Comm_get_info(hinted, &used));
        CHECK(used != MPI_INFO_NULL);
#ifdef WEFT_MPI /* Weft returns the hints set; MPICH returns those it knows, in its own spelling */
        CHECK_RC(MPI_Info_get(used, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, val, &flag));
        CHECK(flag && strcmp(val, "true") == 0);
#endif
        CHECK_RC(MPI_Info_free(&used));
        CHECK_RC(MPI_Info_set(hints, "mpi_assert_no_any_tag", "false"));
        CHECK_RC(MPI_Comm_set_info(hinted, hints));
        CHECK_RC(MPI_Comm_idup_with_info(hinted, hints, &ihinted, &req));
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Comm_get_info(ihinted, &used));
#ifdef WEFT_MPI
        CHECK_RC(MPI_Info_get(used, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, val, &flag));
        CHECK(flag && strcmp(val, "false") == 0);
#endif
        CHECK_RC(MPI_Info_free(&used));
        CHECK_RC(MPI_Comm_get_info(split, &used)); /* no hints set */
        CHECK_RC(MPI_Info_get_nkeys(used, &nk));
#ifdef WEFT_MPI
        CHECK(nk == 0);
#endif
        CHECK_RC(MPI_Info_free(&used));
        CHECK_RC(MPI_Info_free(&hints));
        int one = 1, sum = 0;
        CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, ihinted));
        CHECK(sum == size);
        CHECK_RC(MPI_Comm_free(&ihinted));
        CHECK_RC(MPI_Comm_free(&hinted));
    }

    /* ---- attributes ---- */
    int *ub = NULL;
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    CHECK(flag == 1 && *ub >= 32767);
    int *wg = NULL;
    CHECK_RC(MPI_Comm_get_attr(dup, MPI_WTIME_IS_GLOBAL, &wg, &flag));
    CHECK(flag == 0 || (*wg == 0 || *wg == 1));
#ifdef WEFT_MPI
    int *host, *io, *usize, *last;
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &host, &flag));
    CHECK(flag && *host == MPI_PROC_NULL);
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &io, &flag));
    CHECK(flag && *io == MPI_ANY_SOURCE);
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag));
    CHECK(flag && *usize == size);
    int cls;
    CHECK_RC(MPI_Add_error_class(&cls));
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last >= cls);
#endif
    int key_copy, key_dup, key_none, key_self;
    CHECK_RC(MPI_Comm_create_keyval(copy_plus_one, count_delete, &key_copy, &copies));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key_dup, NULL));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &key_none, NULL));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &key_self, NULL));
    static char base[8];
    CHECK_RC(MPI_Comm_set_attr(dup, key_copy, base));
    CHECK_RC(MPI_Comm_set_attr(dup, key_dup, base + 4));
    CHECK_RC(MPI_Comm_set_attr(dup, key_none, base));
    CHECK_RC(MPI_Comm_set_attr(dup, key_none, base + 2)); /* replaces: the old value's delete runs */
    CHECK(deletes == 1);
    MPI_Comm dup3;
    CHECK_RC(MPI_Comm_dup(dup, &dup3));
    CHECK(copies == 1);
    void *v = NULL;
    CHECK_RC(MPI_Comm_get_attr(dup3, key_copy, &v, &flag));
    CHECK(flag && v == base + 1);
    CHECK_RC(MPI_Comm_get_attr(dup3, key_dup, &v, &flag));
    CHECK(flag && v == base + 4);
    CHECK_RC(MPI_Comm_get_attr(dup3, key_none, &v, &flag));
    CHECK(flag == 0); /* MPI_COMM_NULL_COPY_FN: not copied */
    CHECK_RC(MPI_Comm_get_attr(dup, key_none, &v, &flag));
    CHECK(flag && v == base + 2);
    CHECK_RC(MPI_Comm_delete_attr(dup, key_none));
    CHECK(deletes == 2);
    CHECK_RC(MPI_Comm_get_attr(dup, key_none, &v, &flag));
    CHECK(flag == 0);
    CHECK_RC(MPI_Comm_free(&dup3)); /* key_copy's delete runs; key_dup has none */
    CHECK(deletes == 3);
    CHECK_RC(MPI_Comm_free_keyval(&key_dup));
    CHECK(key_dup == MPI_KEYVAL_INVALID);
    CHECK_RC(MPI_Comm_free_keyval(&key_none));
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_SELF, key_self, base)); /* deleted by MPI_Finalize */
    CHECK_RC(MPI_Comm_free_keyval(&key_self));

    /* ---- groups ---- */
    MPI_Group world, evens, odds, first, u, x, d, empty, rgrp;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_RC(MPI_Group_size(world, &n));
    CHECK(n == size);
    CHECK_RC(MPI_Group_rank(world, &r));
    CHECK(r == rank);
    int ranges[1][3] = {{0, size - 1, 2}};
    CHECK_RC(MPI_Group_range_incl(world, 1, ranges, &evens));
    CHECK_RC(MPI_Group_range_excl(world, 1, ranges, &odds));
    int zero = 0;
    CHECK_RC(MPI_Group_incl(world, 1, &zero, &first));
    CHECK_RC(MPI_Group_excl(world, 1, &zero, &x));
    CHECK_RC(MPI_Group_size(x, &n));
    CHECK(n == size - 1);
    CHECK_RC(MPI_Group_free(&x));
    CHECK_RC(MPI_Group_union(evens, odds, &u));
    CHECK_RC(MPI_Group_compare(u, world, &res));
    CHECK(res == (size > 2 ? MPI_SIMILAR : MPI_IDENT));
    CHECK_RC(MPI_Group_intersection(evens, odds, &x));
    CHECK_RC(MPI_Group_compare(x, MPI_GROUP_EMPTY, &res));
    CHECK(res == MPI_IDENT);
    CHECK_RC(MPI_Group_difference(world, evens, &d));
    CHECK_RC(MPI_Group_compare(d, odds, &res));
    CHECK(res == MPI_IDENT);
    CHECK_RC(MPI_Group_rank(odds, &r));
    CHECK(rank % 2 == 1 ? r == rank / 2 : r == MPI_UNDEFINED);
    int in3[3] = {0, MPI_PROC_NULL, size - 1}, out3[3];
    CHECK_RC(MPI_Group_translate_ranks(world, 3, in3, first, out3));
    CHECK(out3[0] == 0 && out3[1] == MPI_PROC_NULL && (size == 1 ? out3[2] == 0 : out3[2] == MPI_UNDEFINED));
    empty = MPI_GROUP_EMPTY;
    CHECK_RC(MPI_Group_size(empty, &n));
    CHECK(n == 0);
    /* Communicators from groups: collective over the world, and over the group only. */
    CHECK_RC(MPI_Comm_create(MPI_COMM_WORLD, evens, &created));
    CHECK((rank % 2 == 0) == (created != MPI_COMM_NULL));
    if (rank % 2 == 0) {
        CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 7, &grouped));
        CHECK_RC(MPI_Comm_group(grouped, &rgrp));
        CHECK_RC(MPI_Group_compare(rgrp, evens, &res));
        CHECK(res == MPI_IDENT);
        int s = 0, one = 1;
        CHECK_RC(MPI_Allreduce(&one, &s, 1, MPI_INT, MPI_SUM, grouped));
        CHECK(s == (size + 1) / 2);
        CHECK_RC(MPI_Group_free(&rgrp));
        CHECK_RC(MPI_Comm_free(&grouped));
        CHECK_RC(MPI_Comm_free(&created));
    }
    MPI_Group *gs[] = {&world, &evens, &odds, &first, &u, &x, &d};
    for (unsigned i = 0; i < sizeof gs / sizeof gs[0]; ++i) {
        CHECK_RC(MPI_Group_free(gs[i]));
        CHECK(*gs[i] == MPI_GROUP_NULL);
    }

    /* ---- derived datatypes: build, commit, send through a ring, compare ---- */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int src[64], dst[64];
    for (int i = 0; i < 64; ++i) src[i] = rank * 100 + i;
    MPI_Datatype t[16];
    int nt = 0;
    int bl[3] = {2, 1, 3}, di[3] = {0, 5, 9};
    MPI_Aint bd[3] = {0, 5 * sizeof(int), 9 * sizeof(int)};
    MPI_Count cbl[3] = {2, 1, 3}, cdi[3] = {0, 5, 9}, cbd[3] = {0, 5 * sizeof(int), 9 * sizeof(int)};
    CHECK_RC(MPI_Type_contiguous(3, MPI_INT, &t[nt++]));                         /* 0 */
    CHECK_RC(MPI_Type_contiguous_c(3, MPI_INT, &t[nt++]));                       /* 1 */
    CHECK_RC(MPI_Type_vector(3, 2, 4, MPI_INT, &t[nt++]));                       /* 2 */
    CHECK_RC(MPI_Type_vector_c(3, 2, 4, MPI_INT, &t[nt++]));                     /* 3 */
    CHECK_RC(MPI_Type_create_hvector(3, 2, 4 * sizeof(int), MPI_INT, &t[nt++])); /* 4 */
    CHECK_RC(MPI_Type_create_hvector_c(3, 2, 4 * sizeof(int), MPI_INT, &t[nt++]));
    CHECK_RC(MPI_Type_indexed(3, bl, di, MPI_INT, &t[nt++])); /* 6 */
    CHECK_RC(MPI_Type_indexed_c(3, cbl, cdi, MPI_INT, &t[nt++]));
    CHECK_RC(MPI_Type_create_hindexed(3, bl, bd, MPI_INT, &t[nt++])); /* 8 */
    CHECK_RC(MPI_Type_create_hindexed_c(3, cbl, cbd, MPI_INT, &t[nt++]));
    CHECK_RC(MPI_Type_create_indexed_block(3, 2, di, MPI_INT, &t[nt++])); /* 10 */
    CHECK_RC(MPI_Type_create_indexed_block_c(3, 2, cdi, MPI_INT, &t[nt++]));
    CHECK_RC(MPI_Type_create_hindexed_block(3, 2, bd, MPI_INT, &t[nt++])); /* 12 */
    CHECK_RC(MPI_Type_create_hindexed_block_c(3, 2, cbd, MPI_INT, &t[nt++]));
    MPI_Datatype ty3[3] = {MPI_INT, MPI_INT, MPI_INT};
    CHECK_RC(MPI_Type_create_struct(3, bl, bd, ty3, &t[nt++])); /* 14 */
    CHECK_RC(MPI_Type_create_struct_c(3, cbl, cbd, ty3, &t[nt++]));
    for (int k = 0; k < nt; ++k) {
        CHECK_RC(MPI_Type_commit(&t[k]));
        memset(dst, 0xff, sizeof dst);
        MPI_Status st;
        CHECK_RC(MPI_Sendrecv(src, 1, t[k], right, k, dst, 1, t[k], left, k, MPI_COMM_WORLD, &st));
        /* the same elements of the left neighbour's array, the others untouched */
        MPI_Aint lb, ext, tlb, text;
        CHECK_RC(MPI_Type_get_extent(t[k], &lb, &ext));
        CHECK_RC(MPI_Type_get_true_extent(t[k], &tlb, &text));
        int tsize;
        CHECK_RC(MPI_Type_size(t[k], &tsize));
        int elems = 0;
        for (int i = 0; i < 64; ++i) {
            if (dst[i] != -1) {
                CHECK(dst[i] == left * 100 + i);
                ++elems;
            }
        }
        CHECK(elems * (int)sizeof(int) == tsize);
        int cnt = -1;
        CHECK_RC(MPI_Get_count(&st, t[k], &cnt));
        CHECK(cnt == 1);
        CHECK_RC(MPI_Get_elements(&st, t[k], &cnt));
        CHECK(cnt == elems);
        CHECK(text <= ext || k >= 14 || k == 6 || k == 7 || k == 8 || k == 9);
        (void)lb;
        (void)tlb;
    }
    /* resized, dup, subarray, sizes and extents in every form */
    MPI_Datatype rs, rsc, dp, sa, sac;
    CHECK_RC(MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &rs));
    CHECK_RC(MPI_Type_create_resized_c(MPI_INT, 0, 3 * sizeof(int), &rsc));
    CHECK_RC(MPI_Type_commit(&rs));
    CHECK_RC(MPI_Type_commit(&rsc));
    MPI_Aint lb, ext;
    MPI_Count clb, cext, csz;
    CHECK_RC(MPI_Type_get_extent(rs, &lb, &ext));
    CHECK(lb == 0 && ext == 3 * (MPI_Aint)sizeof(int));
    CHECK_RC(MPI_Type_get_extent_c(rsc, &clb, &cext));
    CHECK(clb == 0 && cext == 3 * (MPI_Count)sizeof(int));
    CHECK_RC(MPI_Type_get_extent_x(rsc, &clb, &cext));
    CHECK(cext == 3 * (MPI_Count)sizeof(int));
    CHECK_RC(MPI_Type_get_true_extent_c(rsc, &clb, &cext));
    CHECK(clb == 0 && cext == (MPI_Count)sizeof(int));
    CHECK_RC(MPI_Type_get_true_extent_x(rsc, &clb, &cext));
    CHECK(cext == (MPI_Count)sizeof(int));
    CHECK_RC(MPI_Type_size_c(rs, &csz));
    CHECK(csz == sizeof(int));
    CHECK_RC(MPI_Type_size_x(rs, &csz));
    CHECK(csz == sizeof(int));
    CHECK_RC(MPI_Type_dup(t[2], &dp));
    int sizes[2] = {4, 6}, subs[2] = {2, 3}, starts[2] = {1, 2};
    MPI_Count csizes[2] = {4, 6}, csubs[2] = {2, 3}, cstarts[2] = {1, 2};
    CHECK_RC(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sa));
    CHECK_RC(MPI_Type_create_subarray_c(2, csizes, csubs, cstarts, MPI_ORDER_C, MPI_INT, &sac));
    CHECK_RC(MPI_Type_commit(&sa));
    CHECK_RC(MPI_Type_commit(&sac));
    memset(dst, 0xff, sizeof dst);
    CHECK_RC(MPI_Sendrecv(src, 1, sa, right, 50, dst, 1, sac, left, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 6; ++j) {
            int inside = i >= 1 && i < 3 && j >= 2 && j < 5;
            CHECK(dst[i * 6 + j] == (inside ? left * 100 + i * 6 + j : -1));
        }
    /* MPI_Type_dup keeps the layout: one dup'd vector = 6 ints */
    int dsz;
    CHECK_RC(MPI_Type_size(dp, &dsz));
    CHECK(dsz == 6 * (int)sizeof(int));

    /* ---- pack / unpack, int and _c ---- */
    char packed[1024];
    int pos = 0, psize = 0;
    CHECK_RC(MPI_Pack_size(2, t[2], MPI_COMM_WORLD, &psize));
    CHECK(psize >= 12 * (int)sizeof(int));
    CHECK_RC(MPI_Pack(src, 1, t[2], packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK_RC(MPI_Pack(src + 1, 1, MPI_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == 7 * (int)sizeof(int));
    memset(dst, 0xff, sizeof dst);
    int upos = 0;
    CHECK_RC(MPI_Unpack(packed, pos, &upos, dst, 7, MPI_INT, MPI_COMM_WORLD));
    int expect_pk[7] = {0, 1, 4, 5, 8, 9, 1};
    for (int i = 0; i < 7; ++i) CHECK(dst[i] == rank * 100 + expect_pk[i]);
    MPI_Count cpos = 0, cps = 0, cupos = 0;
    CHECK_RC(MPI_Pack_size_c(1, t[6], MPI_COMM_WORLD, &cps));
    CHECK(cps >= 6 * (MPI_Count)sizeof(int));
    CHECK_RC(MPI_Pack_c(src, 1, t[6], packed, sizeof packed, &cpos, MPI_COMM_WORLD));
    memset(dst, 0xff, sizeof dst);
    CHECK_RC(MPI_Unpack_c(packed, cpos, &cupos, dst, 1, t[7], MPI_COMM_WORLD));
    CHECK(cupos == cpos && dst[0] == rank * 100 && dst[5] == rank * 100 + 5 && dst[9] == rank * 100 + 9 &&
          dst[2] == -1);

    for (int k = 0; k < nt; ++k) CHECK_RC(MPI_Type_free(&t[k]));
    MPI_Datatype *fr[] = {&rs, &rsc, &dp, &sa, &sac};
    for (unsigned i = 0; i < sizeof fr / sizeof fr[0]; ++i) {
        CHECK_RC(MPI_Type_free(fr[i]));
        CHECK(*fr[i] == MPI_DATATYPE_NULL);
    }

    /* ---- operations ---- */
    MPI_Op sum, maxc, cat;
    CHECK_RC(MPI_Op_create(int_sum, 1, &sum));
    CHECK_RC(MPI_Op_create_c(long_max_c, 1, &maxc));
    CHECK_RC(MPI_Op_create(matmul, 0, &cat));
    int commute = -1;
    CHECK_RC(MPI_Op_commutative(cat, &commute));
    CHECK(commute == 0);
    CHECK_RC(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK(commute == 1);
    int a[4] = {rank, rank, rank, rank}, b[4];
    CHECK_RC(MPI_Allreduce(a, b, 4, MPI_INT, sum, dup));
    for (int i = 0; i < 4; ++i) CHECK(b[i] == size * (size - 1) / 2);
    long la[3] = {rank * 3L, -rank, 5}, lb3[3];
    CHECK_RC(MPI_Allreduce(la, lb3, 3, MPI_LONG, maxc, dup));
    CHECK(lb3[0] == (size - 1) * 3L && lb3[1] == 0 && lb3[2] == 5);
    MPI_Datatype mat;
    CHECK_RC(MPI_Type_contiguous(4, MPI_LONG, &mat));
    CHECK_RC(MPI_Type_commit(&mat));
    long m[4] = {rank + 1, 1, 0, 1}, prod[4], want[4] = {1, 0, 0, 1};
    for (int q = 0; q < size; ++q) { /* want = M0 x M1 x ... x M(size-1) */
        long mq[4] = {q + 1, 1, 0, 1}, c[4];
        c[0] = want[0] * mq[0] + want[1] * mq[2], c[1] = want[0] * mq[1] + want[1] * mq[3];
        c[2] = want[2] * mq[0] + want[3] * mq[2], c[3] = want[2] * mq[1] + want[3] * mq[3];
        memcpy(want, c, sizeof c);
    }
    CHECK_RC(MPI_Reduce(m, prod, 1, mat, cat, 0, dup));
    if (rank == 0) CHECK(memcmp(prod, want, sizeof want) == 0);
    CHECK_RC(MPI_Allreduce(m, prod, 1, mat, cat, dup));
    CHECK(memcmp(prod, want, sizeof want) == 0);
    CHECK_RC(MPI_Type_free(&mat));
    int li[3] = {1, 2, 3}, lio[3] = {10, 20, 30};
    CHECK_RC(MPI_Reduce_local(li, lio, 3, MPI_INT, sum));
    CHECK(lio[0] == 11 && lio[1] == 22 && lio[2] == 33);
    CHECK_RC(MPI_Reduce_local_c(li, lio, 3, MPI_INT, MPI_PROD));
    CHECK(lio[0] == 11 && lio[1] == 44 && lio[2] == 99);
    CHECK_RC(MPI_Op_free(&sum));
    CHECK_RC(MPI_Op_free(&maxc));
    CHECK_RC(MPI_Op_free(&cat));
    CHECK(sum == MPI_OP_NULL);

    CHECK_RC(MPI_Comm_free(&split));
    CHECK_RC(MPI_Comm_free(&idup));
    CHECK_RC(MPI_Comm_free(&dup)); /* key_copy's value on dup: deleted */
    CHECK(dup == MPI_COMM_NULL);
    CHECK(deletes == 4);
    CHECK_RC(MPI_Comm_free_keyval(&key_copy));
    CHECK(self_deleted == 0);
    CHECK_RC(MPI_Finalize());
    if (!self_deleted) {
        fprintf(stderr, "mpi_objects: MPI_Finalize did not delete MPI_COMM_SELF's attribute\n");
        return 1;
    }
    if (rank == 0) printf("mpi_objects: OK\n");
    return 0;
}
