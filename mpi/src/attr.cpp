// Attribute caching on communicators (MPI 4.0 section 7.7): keyvals with copy and delete
// callbacks, attributes per communicator, copied by MPI_Comm_dup / MPI_Comm_idup and deleted by
// MPI_Comm_free and MPI_Finalize; and the predefined attributes (MPI_TAG_UB, MPI_HOST, MPI_IO,
// MPI_WTIME_IS_GLOBAL, MPI_UNIVERSE_SIZE, MPI_APPNUM, MPI_LASTUSEDCODE), on every communicator.
// Weft has no attributes: this is the front end's own table, under one lock (none of these
// calls is on a communication path).  Callbacks run without the lock held.
#include "attr.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "handles.hpp"

namespace weft_mpi {
namespace {
struct keyval {
    MPI_Comm_copy_attr_function *copy;
    MPI_Comm_delete_attr_function *del;
    void *extra;
    bool freed;  // MPI_Comm_free_keyval: no new attributes; existing ones still work
};
struct attribute {
    int key;
    void *value;
};
constexpr int keyval_base = 0x24800000;  // dynamic keyvals: keyval_base + index (never predefined)
std::mutex lock;
std::vector<keyval> keyvals;
std::map<MPI_Comm, std::vector<attribute>> attrs;  // in the order they were set

const keyval *find_keyval(int key) {  // under the lock
    size_t i = static_cast<size_t>(key - keyval_base);
    return key >= keyval_base && i < keyvals.size() ? &keyvals[i] : nullptr;
}
bool predefined(int key) { return key >= MPI_TAG_UB && key <= MPI_APPNUM && (key & 1); }

// The values the predefined attributes point to.
int tag_ub = WEFT_TAG_UB, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_is_global = 0, universe_size = 0, appnum = 0;
}  // namespace

int last_used_code = MPI_ERR_LASTCODE;  // raised by MPI_Add_error_class / MPI_Add_error_code

int attr_copy(MPI_Comm oldcomm, MPI_Comm newcomm) {
    std::vector<std::pair<attribute, keyval>> todo;
    {
        std::lock_guard<std::mutex> g(lock);
        auto it = attrs.find(oldcomm);
        if (it == attrs.end()) return MPI_SUCCESS;
        for (const attribute &a : it->second)
            if (const keyval *k = find_keyval(a.key)) todo.push_back({a, *k});
    }
    std::vector<attribute> copied;
    for (auto &[a, k] : todo) {
        if (k.copy == nullptr) continue;  // MPI_COMM_NULL_COPY_FN
        void *out = nullptr;
        int flag = 0;
        if (int rc = k.copy(oldcomm, a.key, k.extra, a.value, &out, &flag)) return rc;
        if (flag) copied.push_back({a.key, out});
    }
    if (!copied.empty()) {
        std::lock_guard<std::mutex> g(lock);
        attrs[newcomm] = std::move(copied);
    }
    return MPI_SUCCESS;
}

int attr_delete_all(MPI_Comm comm) {
    std::vector<std::pair<attribute, keyval>> todo;
    {
        std::lock_guard<std::mutex> g(lock);
        auto it = attrs.find(comm);
        if (it == attrs.end()) return MPI_SUCCESS;
        for (auto a = it->second.rbegin(); a != it->second.rend(); ++a)
            if (const keyval *k = find_keyval(a->key)) todo.push_back({*a, *k});
        attrs.erase(it);
    }
    for (auto &[a, k] : todo)
        if (k.del != nullptr)
            if (int rc = k.del(comm, a.key, a.value, k.extra)) return rc;
    return MPI_SUCCESS;
}
}  // namespace weft_mpi

using namespace weft_mpi;

extern "C" int MPIR_Dup_fn(MPI_Comm, int, void *, void *attribute_val_in, void *attribute_val_out, int *flag) {
    *static_cast<void **>(attribute_val_out) = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

extern "C" int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                                       int *comm_keyval, void *extra_state) {
    if (comm_keyval == nullptr)
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Comm_create_keyval: comm_keyval is NULL");
    std::lock_guard<std::mutex> g(lock);
    keyvals.push_back({copy, del, extra_state, false});
    *comm_keyval = keyval_base + static_cast<int>(keyvals.size() - 1);
    return MPI_SUCCESS;
}

extern "C" int PMPI_Comm_free_keyval(int *comm_keyval) {
    if (comm_keyval == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Comm_free_keyval: comm_keyval is NULL");
    {
        std::lock_guard<std::mutex> g(lock);
        const keyval *k = find_keyval(*comm_keyval);
        if (k != nullptr && !k->freed) {
            keyvals[static_cast<size_t>(*comm_keyval - keyval_base)].freed = true;
            *comm_keyval = MPI_KEYVAL_INVALID;
            return MPI_SUCCESS;
        }
    }
    return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Comm_free_keyval: %d is not a keyval (or a predefined one)",
                *comm_keyval);
}

namespace {
// The communicator must be valid: Weft says so.
int check_comm(MPI_Comm comm, const char *fn) {
    int size;
    if (comm == MPI_COMM_NULL || weft_comm_size(wcomm(comm), &size) != WEFT_SUCCESS)
        return fail(WEFT_COMM_SELF, WEFT_ERR_COMM, "%s: invalid communicator 0x%x", fn, comm);
    return MPI_SUCCESS;
}
// Removes comm's attribute key (the caller holds no lock); runs its delete callback.
int remove(MPI_Comm comm, int key, bool &found) {
    attribute old{};
    keyval k{};
    found = false;
    {
        std::lock_guard<std::mutex> g(lock);
        auto it = attrs.find(comm);
        if (it == attrs.end()) return MPI_SUCCESS;
        auto a = std::find_if(it->second.begin(), it->second.end(), [&](const attribute &x) { return x.key == key; });
        if (a == it->second.end()) return MPI_SUCCESS;
        old = *a, k = *find_keyval(key), found = true;
        it->second.erase(a);
    }
    return k.del != nullptr ? k.del(comm, key, old.value, k.extra) : MPI_SUCCESS;
}
}  // namespace

extern "C" int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val) {
    if (int rc = check_comm(comm, "MPI_Comm_set_attr")) return rc;
    {
        std::lock_guard<std::mutex> g(lock);
        const keyval *k = find_keyval(comm_keyval);
        if (k == nullptr || k->freed)
            return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Comm_set_attr: %d is not a keyval of MPI_Comm_create_keyval",
                        comm_keyval);
    }
    bool found;
    if (int rc = remove(comm, comm_keyval, found)) return rc;  // the old value's delete callback
    std::lock_guard<std::mutex> g(lock);
    attrs[comm].push_back({comm_keyval, attribute_val});
    return MPI_SUCCESS;
}

extern "C" int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag) {
    if (int rc = check_comm(comm, "MPI_Comm_get_attr")) return rc;
    if (attribute_val == nullptr || flag == nullptr)
        return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Comm_get_attr: attribute_val and flag must not be NULL");
    void **out = static_cast<void **>(attribute_val);
    *flag = 0;
    if (predefined(comm_keyval)) {
        int *p = nullptr;
        switch (comm_keyval) {
            case MPI_TAG_UB: p = &tag_ub; break;
            case MPI_HOST: p = &host; break;
            case MPI_IO: p = &io; break;
            case MPI_WTIME_IS_GLOBAL: p = &wtime_is_global; break;
            case MPI_UNIVERSE_SIZE:
                if (weft_comm_size(WEFT_COMM_WORLD, &universe_size) != WEFT_SUCCESS) return MPI_SUCCESS;
                p = &universe_size;
                break;
            case MPI_APPNUM: p = &appnum; break;
            case MPI_LASTUSEDCODE: p = &last_used_code; break;
        }
        if (p != nullptr) *out = p, *flag = 1;
        return MPI_SUCCESS;
    }
    std::lock_guard<std::mutex> g(lock);
    if (find_keyval(comm_keyval) == nullptr)
        return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Comm_get_attr: %d is not a keyval", comm_keyval);
    auto it = attrs.find(comm);
    if (it == attrs.end()) return MPI_SUCCESS;
    for (const attribute &a : it->second)
        if (a.key == comm_keyval) *out = a.value, *flag = 1;
    return MPI_SUCCESS;
}

extern "C" int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
    if (int rc = check_comm(comm, "MPI_Comm_delete_attr")) return rc;
    {
        std::lock_guard<std::mutex> g(lock);
        if (find_keyval(comm_keyval) == nullptr)
            return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Comm_delete_attr: %d is not a keyval", comm_keyval);
    }
    bool found;
    return remove(comm, comm_keyval, found);
}

#define WEFT_MPI_FAMILY_attr 1
#include "alias.hpp"
