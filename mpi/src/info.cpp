// Info objects (MPI 4.0 section 10) and MPICH's MPIX_Info_set_hex.
#include "handles.hpp"

using namespace weft_mpi;

extern "C" int PMPI_Info_create(MPI_Info *info) {
    if (info == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Info_create: info is NULL");
    weft_info i = WEFT_INFO_NULL;
    if (int rc = weft_info_create(&i)) return merr(rc);
    *info = minfo(i);
    return MPI_SUCCESS;
}
extern "C" int PMPI_Info_set(MPI_Info info, const char *key, const char *value) {
    if (value != nullptr && std::strlen(value) > MPI_MAX_INFO_VAL)
        return fail(WEFT_COMM_SELF, WEFT_ERR_INFO_VALUE, "MPI_Info_set: value longer than MPI_MAX_INFO_VAL (%d)",
                    MPI_MAX_INFO_VAL);
    return merr(weft_info_set(winfo(info), key, value));
}
extern "C" int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag) {
    if (valuelen < 0) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Info_get: negative valuelen %d", valuelen);
    return merr(weft_info_get(winfo(info), key, static_cast<size_t>(valuelen), value, flag));
}
extern "C" int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag) {
    if (valuelen == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Info_get_valuelen: valuelen is NULL");
    size_t n = 0;
    if (int rc = weft_info_get_valuelen(winfo(info), key, &n, flag)) return merr(rc);
    if (*flag) *valuelen = static_cast<int>(n);
    return MPI_SUCCESS;
}
// MPI 4.0: *buflen in: the buffer's size (with the NUL); out: the value's size with its NUL.
extern "C" int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag) {
    if (buflen == nullptr || flag == nullptr || *buflen < 0)
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Info_get_string: buflen and flag must be valid");
    size_t n = 0;
    if (int rc = weft_info_get_valuelen(winfo(info), key, &n, flag)) return merr(rc);
    if (!*flag) return MPI_SUCCESS;
    if (*buflen > 0 && value != nullptr) {
        int f = 0;
        if (int rc = weft_info_get(winfo(info), key, static_cast<size_t>(*buflen - 1), value, &f)) return merr(rc);
    }
    *buflen = static_cast<int>(n) + 1;
    return MPI_SUCCESS;
}
extern "C" int PMPI_Info_delete(MPI_Info info, const char *key) { return merr(weft_info_delete(winfo(info), key)); }
extern "C" int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo) {
    if (newinfo == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Info_dup: newinfo is NULL");
    weft_info i = WEFT_INFO_NULL;
    if (int rc = weft_info_dup(winfo(info), &i)) return merr(rc);
    *newinfo = minfo(i);
    return MPI_SUCCESS;
}
extern "C" int PMPI_Info_free(MPI_Info *info) {
    if (info == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Info_free: info is NULL");
    weft_info i = winfo(*info);
    if (int rc = weft_info_free(&i)) return merr(rc);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
extern "C" int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys) { return merr(weft_info_get_nkeys(winfo(info), nkeys)); }
extern "C" int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key) {
    return merr(weft_info_get_nthkey(winfo(info), n, key));
}
extern "C" int PMPIX_Info_set_hex(MPI_Info info, const char *key, const void *value, int value_size) {
    if (value_size < 0)
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPIX_Info_set_hex: negative value_size %d", value_size);
    return merr(weft_info_set_hex(winfo(info), key, value, static_cast<size_t>(value_size)));
}

#define WEFT_MPI_FAMILY_info 1
#include "alias.hpp"
