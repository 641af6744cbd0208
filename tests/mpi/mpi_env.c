/* The environment, error and info calls of the MPI front end: init and thread level, versions,
 * time, processor name, addresses, GPU queries, error classes/codes/strings and handlers (MPI's
 * default MPI_ERRORS_ARE_FATAL on MPI_COMM_WORLD), info objects. */
#include <string.h>

#include "mpi_check.h"

static int handler_calls, handler_last_code;
static MPI_Comm handler_last_comm;
static void count_errors(MPI_Comm *comm, int *code, ...) {
    ++handler_calls;
    handler_last_code = *code;
    handler_last_comm = *comm;
}

int main(int argc, char **argv) {
    int flag = -1;
    CHECK_RC(MPI_Initialized(&flag));
    CHECK(flag == 0);
    int provided = -1;
    CHECK_RC(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE);
    print_banner("mpi_env");
    int q = -1;
    CHECK_RC(MPI_Query_thread(&q));
    CHECK(q == provided);
    CHECK_RC(MPI_Initialized(&flag));
    CHECK(flag == 1);
    CHECK_RC(MPI_Is_thread_main(&flag));
    CHECK(flag == 1);

    int version = 0, subversion = -1;
    CHECK_RC(MPI_Get_version(&version, &subversion));
    CHECK(version == MPI_VERSION && subversion == MPI_SUBVERSION);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    CHECK_RC(MPI_Get_library_version(lib, &len));
    CHECK(len == (int)strlen(lib) && strstr(lib, "Weft") != NULL && strstr(lib, "bootstrap=") != NULL);
    char name[MPI_MAX_PROCESSOR_NAME];
    CHECK_RC(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME && len == (int)strlen(name));

    double t0 = MPI_Wtime(), tick = MPI_Wtick();
    CHECK(tick > 0 && tick < 1);
    CHECK(MPI_Wtime() >= t0);
    CHECK(PMPI_Wtime() >= t0); /* the profiling name reaches the same function */
    CHECK_RC(MPI_Pcontrol(1));

    double arr[4];
    MPI_Aint a0, a2;
    CHECK_RC(MPI_Get_address(&arr[0], &a0));
    CHECK_RC(MPI_Get_address(&arr[2], &a2));
    CHECK(MPI_Aint_diff(a2, a0) == 2 * (MPI_Aint)sizeof(double));
    CHECK(MPI_Aint_add(a0, 2 * sizeof(double)) == a2);

    CHECK(MPIX_Query_cuda_support() == 0 && MPIX_Query_hip_support() == 0 && MPIX_Query_ze_support() == 0);
    int sup = -1;
    CHECK_RC(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &sup));
    CHECK(sup == 0);

    /* MPI's default handler on MPI_COMM_WORLD (Weft's own default is to return). */
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    CHECK_RC(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL);
    CHECK_RC(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    /* Calls without a (valid) communicator report on MPI_COMM_SELF. */
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    /* Errors come back as codes whose class is MPI's. */
    int x = 0, cls = -1, rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS);
    CHECK_RC(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_RANK);
    char text[MPI_MAX_ERROR_STRING];
    CHECK_RC(MPI_Error_string(rc, text, &len));
    CHECK(len > 0 && len == (int)strlen(text));
    rc = MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    CHECK_RC(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_COUNT);
    rc = MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
    CHECK_RC(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_TAG);
    rc = MPI_Send(&x, 1, (MPI_Datatype)0x4c0004ff, 0, 0, MPI_COMM_WORLD);
    CHECK_RC(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_TYPE);
    rc = MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
    CHECK_RC(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_COMM);
    CHECK_RC(MPI_Error_class(MPI_ERR_TRUNCATE, &cls));
    CHECK(cls == MPI_ERR_TRUNCATE);

    /* User error classes, codes and strings. */
    int myclass, mycode;
    CHECK_RC(MPI_Add_error_class(&myclass));
    CHECK_RC(MPI_Add_error_code(myclass, &mycode));
    CHECK_RC(MPI_Add_error_string(mycode, "the test's own error"));
    CHECK_RC(MPI_Error_class(mycode, &cls));
    CHECK(cls == myclass);
    CHECK_RC(MPI_Error_string(mycode, text, &len));
    CHECK(strcmp(text, "the test's own error") == 0);

    /* A user handler runs with MPI's communicator and code, on a dup that inherits it. */
    MPI_Errhandler mine;
    CHECK_RC(MPI_Comm_create_errhandler(count_errors, &mine));
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_RC(MPI_Comm_set_errhandler(dup, mine));
    CHECK_RC(MPI_Errhandler_free(&mine));
    rc = MPI_Send(&x, 1, MPI_INT, size + 5, 0, dup);
    CHECK(handler_calls == 1 && handler_last_code == rc && handler_last_comm == dup);
    CHECK_RC(MPI_Comm_call_errhandler(dup, mycode));
    CHECK(handler_calls == 2 && handler_last_code == mycode);
    MPI_Comm dup2;
    CHECK_RC(MPI_Comm_dup(dup, &dup2));
    rc = MPI_Recv(&x, -3, MPI_INT, 0, 0, dup2, MPI_STATUS_IGNORE); /* found by the front end */
    CHECK(handler_calls == 3 && handler_last_comm == dup2);
    CHECK_RC(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_COUNT);
    CHECK_RC(MPI_Comm_free(&dup2));
    CHECK_RC(MPI_Comm_free(&dup));

    /* Info objects and MPICH's hex values. */
    MPI_Info info, info2;
    CHECK_RC(MPI_Info_create(&info));
    CHECK_RC(MPI_Info_set(info, "alpha", "one"));
    CHECK_RC(MPI_Info_set(info, "beta", "twenty-two"));
    int nkeys = 0;
    CHECK_RC(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys == 2);
    char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
    CHECK_RC(MPI_Info_get_nthkey(info, 1, key));
    CHECK(strcmp(key, "beta") == 0);
    int vlen = 0;
    CHECK_RC(MPI_Info_get_valuelen(info, "beta", &vlen, &flag));
    CHECK(flag && vlen == 10);
    CHECK_RC(MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && strcmp(val, "one") == 0);
    int buflen = 4;
    CHECK_RC(MPI_Info_get_string(info, "beta", &buflen, val, &flag));
    CHECK(flag && buflen == 11 && strcmp(val, "twe") == 0);
    CHECK_RC(MPI_Info_dup(info, &info2));
    CHECK_RC(MPI_Info_delete(info2, "alpha"));
    CHECK_RC(MPI_Info_get(info2, "alpha", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag == 0);
    rc = MPI_Info_delete(info2, "alpha");
    CHECK_RC(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_INFO_NOKEY);
    unsigned char bytes[3] = {0xab, 0x01, 0xff};
    CHECK_RC(MPIX_Info_set_hex(info2, "hex", bytes, 3));
    CHECK_RC(MPI_Info_get(info2, "hex", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && strcmp(val, "ab01ff") == 0);
    CHECK_RC(MPI_Info_free(&info2));
    CHECK_RC(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL);

    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    CHECK_RC(MPI_Finalized(&flag));
    CHECK(flag == 0);
    CHECK_RC(MPI_Finalize());
    CHECK(MPI_Finalized(&flag) == MPI_SUCCESS && flag == 1);
    return 0;
}
