// Communicators (MPI 4.0 chapter 7): queries, dup, split, creation from groups, names.
#include "handles.hpp"

using namespace weft_mpi;

namespace {
// The result is read by reference: after the call that wrote it.
int out_comm(int rc, const weft_comm &c, MPI_Comm *newcomm) {
    if (rc == WEFT_SUCCESS) *newcomm = mcomm(c);
    return merr(rc);
}
}  // namespace

extern "C" int PMPI_Comm_rank(MPI_Comm comm, int *rank) { return merr(weft_comm_rank(wcomm(comm), rank)); }
extern "C" int PMPI_Comm_size(MPI_Comm comm, int *size) { return merr(weft_comm_size(wcomm(comm), size)); }

extern "C" int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
    if (newcomm == nullptr) return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Comm_dup: newcomm is NULL");
    weft_comm c = WEFT_COMM_NULL;
    return out_comm(weft_comm_dup(wcomm(comm), &c), c, newcomm);
}
extern "C" int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request) {
    if (newcomm == nullptr || request == nullptr)
        return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Comm_idup: newcomm and request must not be NULL");
    weft_comm c = WEFT_COMM_NULL;
    weft_request r = WEFT_REQUEST_NULL;
    int rc = weft_comm_idup(wcomm(comm), &c, &r);
    if (rc == WEFT_SUCCESS) *newcomm = mcomm(c), *request = mreq(r);
    return merr(rc);
}
extern "C" int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
    if (newcomm == nullptr) return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Comm_split: newcomm is NULL");
    weft_comm c = WEFT_COMM_NULL;
    // MPI_UNDEFINED (-32766) and any other negative color: no communicator, as in Weft.
    return out_comm(weft_comm_split(wcomm(comm), color, key, &c), c, newcomm);
}
extern "C" int PMPI_Comm_free(MPI_Comm *comm) {
    if (comm == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Comm_free: comm is NULL");
    weft_comm c = wcomm(*comm);
    if (int rc = weft_comm_free(&c)) return merr(rc);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
extern "C" int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result) {
    return merr(weft_comm_compare(wcomm(comm1), wcomm(comm2), result));
}
extern "C" int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
    if (newcomm == nullptr) return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Comm_create: newcomm is NULL");
    weft_comm c = WEFT_COMM_NULL;
    return out_comm(weft_comm_create(wcomm(comm), wgroup(group), &c), c, newcomm);
}
extern "C" int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) {
    if (newcomm == nullptr) return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Comm_create_group: newcomm is NULL");
    weft_comm c = WEFT_COMM_NULL;
    return out_comm(weft_comm_create_group(wcomm(comm), wgroup(group), tag, &c), c, newcomm);
}
extern "C" int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group) {
    if (group == nullptr) return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Comm_group: group is NULL");
    weft_group g = WEFT_GROUP_NULL;
    if (int rc = weft_comm_group(wcomm(comm), &g)) return merr(rc);
    *group = mgroup(g);
    return MPI_SUCCESS;
}
extern "C" int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name) {
    return merr(weft_comm_set_name(wcomm(comm), comm_name));
}
extern "C" int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen) {
    if (resultlen == nullptr) return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Comm_get_name: resultlen is NULL");
    size_t n = 0;
    if (int rc = weft_comm_get_name(wcomm(comm), comm_name, &n)) return merr(rc);
    // The predefined communicators carry MPI's names, as a program expects.
    if (comm == MPI_COMM_WORLD && std::strcmp(comm_name, "WEFT_COMM_WORLD") == 0)
        n = std::strlen(std::strcpy(comm_name, "MPI_COMM_WORLD"));
    else if (comm == MPI_COMM_SELF && std::strcmp(comm_name, "WEFT_COMM_SELF") == 0)
        n = std::strlen(std::strcpy(comm_name, "MPI_COMM_SELF"));
    *resultlen = static_cast<int>(n);
    return MPI_SUCCESS;
}
// Weft has intracommunicators only.
extern "C" int PMPI_Comm_test_inter(MPI_Comm comm, int *flag) {
    if (flag == nullptr) return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Comm_test_inter: flag is NULL");
    int size;
    if (int rc = weft_comm_size(wcomm(comm), &size)) return merr(rc);  // checks the handle
    *flag = 0;
    return MPI_SUCCESS;
}

#define WEFT_MPI_FAMILY_comm 1
#include "alias.hpp"
