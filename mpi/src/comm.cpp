// Communicators (MPI 4.0 chapter 7): queries, dup, split, creation from groups, names.
#include <map>
#include <mutex>

#include "attr.hpp"
#include "handles.hpp"
#include "topo.hpp"

using namespace weft_mpi;

namespace {
// Info hints of communicators (MPI_Comm_set_info, the _with_info creations): Weft acts on none
// of them (MPI lets an implementation ignore hints), and MPI_Comm_get_info returns those set, as
// a new info object.  A copy of each, dropped with the communicator.
std::mutex hints_lock;
std::map<MPI_Comm, weft_info> hints;
int set_hints(MPI_Comm comm, MPI_Info info) {
    weft_info copy = WEFT_INFO_NULL;
    if (info != MPI_INFO_NULL) {
        if (int rc = weft_info_dup(winfo(info), &copy)) return merr(rc);
    }
    weft_info old = WEFT_INFO_NULL;
    {
        std::lock_guard<std::mutex> g(hints_lock);
        auto it = hints.find(comm);
        if (it != hints.end()) old = it->second, hints.erase(it);
        if (copy != WEFT_INFO_NULL) hints[comm] = copy;
    }
    if (old != WEFT_INFO_NULL) weft_info_free(&old);
    return MPI_SUCCESS;
}

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
    if (int rc = out_comm(weft_comm_dup(wcomm(comm), &c), c, newcomm)) return rc;
    topo_copy(comm, *newcomm);  // a dup keeps the topology
    return attr_copy(
        comm,
        *newcomm);  // and runs the copy callbacks of comm's attributes  // the copy callbacks of comm's attributes
}
extern "C" int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request) {
    if (newcomm == nullptr || request == nullptr)
        return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Comm_idup: newcomm and request must not be NULL");
    weft_comm c = WEFT_COMM_NULL;
    weft_request r = WEFT_REQUEST_NULL;
    int rc = weft_comm_idup(wcomm(comm), &c, &r);
    if (rc != WEFT_SUCCESS) return merr(rc);
    *newcomm = mcomm(c), *request = mreq(r);
    topo_copy(comm, *newcomm);
    return attr_copy(comm, *newcomm);
}
extern "C" int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
    if (newcomm == nullptr) return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Comm_split: newcomm is NULL");
    weft_comm c = WEFT_COMM_NULL;
    // MPI_UNDEFINED (-32766) and any other negative color: no communicator, as in Weft.
    return out_comm(weft_comm_split(wcomm(comm), color, key, &c), c, newcomm);
}
// MPI_Comm_split_type: the processes that share memory are those of one node, which Weft knows
// by its processor name (the host).  MPI_COMM_TYPE_SHARED splits by node;
// MPI_COMM_TYPE_HW_GUIDED does the same for info "mpi_hw_resource_type" = "mpi_shared_memory",
// the one hardware resource Weft knows, and gives MPI_COMM_NULL for any other or none (MPI 4.0
// 7.4.2); MPI_COMM_TYPE_HW_UNGUIDED gives the node communicator where it is strictly smaller
// than comm, else MPI_COMM_NULL; MPI_UNDEFINED gives MPI_COMM_NULL.  Collective over comm.
extern "C" int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm) {
    weft_comm c = wcomm(comm);
    if (newcomm == nullptr) return fail(c, WEFT_ERR_ARG, "MPI_Comm_split_type: newcomm is NULL");
    bool by_node;
    switch (split_type) {
        case MPI_UNDEFINED: by_node = false; break;
        case MPI_COMM_TYPE_SHARED:
        case MPI_COMM_TYPE_HW_UNGUIDED: by_node = true; break;
        case MPI_COMM_TYPE_HW_GUIDED: {
            char value[64] = "";
            int flag = 0;
            if (info != MPI_INFO_NULL) {
                if (int rc = weft_info_get(winfo(info), "mpi_hw_resource_type", sizeof value - 1, value, &flag))
                    return merr(rc);
            }
            by_node = flag && std::strcmp(value, "mpi_shared_memory") == 0;
            break;
        }
        default:
            return fail(c, WEFT_ERR_ARG,
                        "MPI_Comm_split_type: unknown split_type %d (MPI_COMM_TYPE_SHARED, "
                        "MPI_COMM_TYPE_HW_GUIDED, MPI_COMM_TYPE_HW_UNGUIDED or MPI_UNDEFINED)",
                        split_type);
    }
    int size = 0, rank = 0;
    if (int rc = weft_comm_size(c, &size)) return merr(rc);
    if (int rc = weft_comm_rank(c, &rank)) return merr(rc);
    // Every process takes part in the exchange and the split, whatever its own split type.
    constexpr size_t len = WEFT_MAX_PROCESSOR_NAME;
    std::unique_ptr<char[]> names(new char[len * static_cast<size_t>(size) + len]());
    char *mine = names.get() + len * static_cast<size_t>(size);
    size_t n = 0;
    if (int rc = weft_get_processor_name(mine, &n)) return merr(rc);
    if (int rc = weft_allgather(mine, len, WEFT_BYTE, names.get(), len, WEFT_BYTE, c)) return merr(rc);
    int color = -1;  // no communicator
    if (by_node) {
        for (int r = 0; r <= rank && color < 0; ++r)
            if (std::strncmp(names.get() + len * static_cast<size_t>(r), mine, len) == 0) color = r;
    }
    weft_comm out = WEFT_COMM_NULL;
    if (int rc = weft_comm_split(c, color, key, &out)) return merr(rc);
    if (split_type == MPI_COMM_TYPE_HW_UNGUIDED && out != WEFT_COMM_NULL) {
        int outsize = 0;
        if (int rc = weft_comm_size(out, &outsize)) return merr(rc);
        if (outsize == size) {  // not strictly smaller: no such split
            if (int rc = weft_comm_free(&out)) return merr(rc);
            out = WEFT_COMM_NULL;
        }
    }
    *newcomm = mcomm(out);
    return MPI_SUCCESS;
}

extern "C" int PMPI_Comm_free(MPI_Comm *comm) {
    if (comm == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Comm_free: comm is NULL");
    if (int rc = attr_delete_all(*comm)) return rc;  // the delete callbacks of its attributes
    weft_comm c = wcomm(*comm);
    if (int rc = weft_comm_free(&c)) return merr(rc);
    set_hints(*comm, MPI_INFO_NULL);  // drops its hints
    topo_forget(*comm);
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

extern "C" int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
    if (int rc = PMPI_Comm_dup(comm, newcomm)) return rc;
    return set_hints(*newcomm, info);
}
extern "C" int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request) {
    if (int rc = PMPI_Comm_idup(comm, newcomm, request)) return rc;
    return set_hints(*newcomm, info);
}
extern "C" int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
    int size;
    if (int rc = weft_comm_size(wcomm(comm), &size)) return merr(rc);  // checks the handle
    return set_hints(comm, info);
}
extern "C" int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used) {
    if (info_used == nullptr) return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Comm_get_info: info_used is NULL");
    int size;
    if (int rc = weft_comm_size(wcomm(comm), &size)) return merr(rc);
    weft_info out = WEFT_INFO_NULL;
    {
        std::lock_guard<std::mutex> g(hints_lock);
        auto it = hints.find(comm);
        int rc = it != hints.end() ? weft_info_dup(it->second, &out) : weft_info_create(&out);
        if (rc) return merr(rc);
    }
    *info_used = minfo(out);
    return MPI_SUCCESS;
}

// Weft never spawns processes (MPI_Comm_spawn is not provided), so no process has a parent.
extern "C" int PMPI_Comm_get_parent(MPI_Comm *parent) {
    int init = 0;
    weft_initialized(&init);
    if (!init) return merr(WEFT_ERR_NOT_INITIALIZED);
    if (parent == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Comm_get_parent: parent is NULL");
    *parent = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#define WEFT_MPI_FAMILY_comm 1
#include "alias.hpp"
