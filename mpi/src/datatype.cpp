// Derived datatypes, sizes and extents, pack/unpack, element counts (MPI 4.0 chapter 5), with
// int and MPI-4 large-count (_c) forms.
#include "handles.hpp"

using namespace weft_mpi;

namespace {
// The result is read by reference: after the call that wrote it.
int out_type(int rc, const weft_datatype &t, MPI_Datatype *newtype) {
    if (rc == WEFT_SUCCESS) *newtype = mtype(t);
    return merr(rc);
}
int bad(const char *fn, const char *what) { return fail(WEFT_COMM_SELF, WEFT_ERR_COUNT, "%s: %s", fn, what); }
int null_out(const char *fn) { return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "%s: an output argument is NULL", fn); }

template <class C>
int contiguous(const char *fn, C count, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    if (bad_count(count)) return bad(fn, "negative count");
    if (newtype == nullptr) return null_out(fn);
    weft_datatype t = WEFT_DATATYPE_NULL;
    return out_type(weft_type_contiguous(static_cast<size_t>(count), wtype(oldtype), &t), t, newtype);
}
template <class C, class S>
int vector(const char *fn, bool bytes, C count, C blocklength, S stride, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    if (bad_count(count) || bad_count(blocklength)) return bad(fn, "negative count or block length");
    if (newtype == nullptr) return null_out(fn);
    weft_datatype t = WEFT_DATATYPE_NULL;
    auto f = bytes ? weft_type_create_hvector : weft_type_vector;
    return out_type(f(static_cast<size_t>(count), static_cast<size_t>(blocklength), static_cast<ptrdiff_t>(stride),
                      wtype(oldtype), &t),
                    t, newtype);
}
// indexed (displacements in extents) and hindexed (bytes): the same Weft shape.
template <class C, class B, class D>
int indexed(const char *fn, bool bytes, C count, const B blocklengths[], const D displs[], MPI_Datatype oldtype,
            MPI_Datatype *newtype) {
    if (bad_count(count)) return bad(fn, "negative count");
    if (newtype == nullptr || (count > 0 && (blocklengths == nullptr || displs == nullptr))) return null_out(fn);
    size_t n = static_cast<size_t>(count);
    scratch<size_t> b(n);
    scratch<ptrdiff_t> d(n);
    if (!to_sizes(blocklengths, n, b.get())) return bad(fn, "negative block length");
    to_diffs(displs, n, d.get());
    weft_datatype t = WEFT_DATATYPE_NULL;
    auto f = bytes ? weft_type_create_hindexed : weft_type_indexed;
    return out_type(f(n, b.get(), d.get(), wtype(oldtype), &t), t, newtype);
}
template <class C, class D>
int indexed_block(const char *fn, bool bytes, C count, C blocklength, const D displs[], MPI_Datatype oldtype,
                  MPI_Datatype *newtype) {
    if (bad_count(count) || bad_count(blocklength)) return bad(fn, "negative count or block length");
    if (newtype == nullptr || (count > 0 && displs == nullptr)) return null_out(fn);
    size_t n = static_cast<size_t>(count);
    scratch<ptrdiff_t> d(n);
    to_diffs(displs, n, d.get());
    weft_datatype t = WEFT_DATATYPE_NULL;
    auto f = bytes ? weft_type_create_hindexed_block : weft_type_create_indexed_block;
    return out_type(f(n, static_cast<size_t>(blocklength), d.get(), wtype(oldtype), &t), t, newtype);
}
template <class C, class B, class D>
int structure(const char *fn, C count, const B blocklengths[], const D displs[], const MPI_Datatype types[],
              MPI_Datatype *newtype) {
    if (bad_count(count)) return bad(fn, "negative count");
    if (newtype == nullptr || (count > 0 && (blocklengths == nullptr || displs == nullptr || types == nullptr)))
        return null_out(fn);
    size_t n = static_cast<size_t>(count);
    scratch<size_t> b(n);
    scratch<ptrdiff_t> d(n);
    scratch<weft_datatype> t(n);
    if (!to_sizes(blocklengths, n, b.get())) return bad(fn, "negative block length");
    to_diffs(displs, n, d.get());
    to_wtypes(types, n, t.get());
    weft_datatype nt = WEFT_DATATYPE_NULL;
    return out_type(weft_type_create_struct(n, b.get(), d.get(), t.get(), &nt), nt, newtype);
}
template <class C>
int subarray(const char *fn, int ndims, const C sizes[], const C subsizes[], const C starts[], int order,
             MPI_Datatype oldtype, MPI_Datatype *newtype) {
    if (ndims < 0) return bad(fn, "negative ndims");
    if (newtype == nullptr || (ndims > 0 && (sizes == nullptr || subsizes == nullptr || starts == nullptr)))
        return null_out(fn);
    size_t n = static_cast<size_t>(ndims);
    scratch<size_t> a(n), b(n), c(n);
    if (!to_sizes(sizes, n, a.get()) || !to_sizes(subsizes, n, b.get()) || !to_sizes(starts, n, c.get()))
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "%s: negative size, subsize or start", fn);
    weft_datatype t = WEFT_DATATYPE_NULL;
    return out_type(weft_type_create_subarray(n, a.get(), b.get(), c.get(), order, wtype(oldtype), &t), t, newtype);
}
template <class C>
int size_of(const char *fn, MPI_Datatype datatype, C *size) {
    if (size == nullptr) return null_out(fn);
    size_t s;
    if (int rc = weft_type_size(wtype(datatype), &s)) return merr(rc);
    if (s > static_cast<size_t>(std::numeric_limits<C>::max())) {
        *size = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    *size = static_cast<C>(s);
    return MPI_SUCCESS;
}
template <class C>
int extent_of(const char *fn, bool true_extent, MPI_Datatype datatype, C *lb, C *extent) {
    if (lb == nullptr || extent == nullptr) return null_out(fn);
    ptrdiff_t l, e;
    int rc = true_extent ? weft_type_get_true_extent(wtype(datatype), &l, &e)
                         : weft_type_get_extent(wtype(datatype), &l, &e);
    if (rc) return merr(rc);
    *lb = static_cast<C>(l);
    *extent = static_cast<C>(e);
    return MPI_SUCCESS;
}
// Elements in a status (MPI_Get_count: whole datatypes; MPI_Get_elements: basic elements).
template <class C>
int count_of(const char *fn, bool elements, const MPI_Status *status, MPI_Datatype datatype, C *count) {
    if (ignored(status) || count == nullptr) return null_out(fn);
    weft_status w = wstatus(status);
    size_t n;
    int rc = elements ? weft_get_elements(&w, wtype(datatype), &n) : weft_get_count(&w, wtype(datatype), &n);
    if (rc) return merr(rc);
    *count = n == WEFT_UNDEFINED || n > static_cast<size_t>(std::numeric_limits<C>::max()) ? MPI_UNDEFINED
                                                                                           : static_cast<C>(n);
    return MPI_SUCCESS;
}
template <class C>
int pack(const char *fn, const void *inbuf, C incount, MPI_Datatype datatype, void *outbuf, C outsize, C *position,
         MPI_Comm comm) {
    if (bad_count(incount) || bad_count(outsize)) return fail(wcomm(comm), WEFT_ERR_COUNT, "%s: negative count", fn);
    if (position == nullptr || *position < 0) return fail(wcomm(comm), WEFT_ERR_ARG, "%s: bad position", fn);
    size_t pos = static_cast<size_t>(*position);
    if (int rc = weft_pack(inbuf, static_cast<size_t>(incount), wtype(datatype), outbuf, static_cast<size_t>(outsize),
                           &pos, wcomm(comm)))
        return merr(rc);
    *position = static_cast<C>(pos);
    return MPI_SUCCESS;
}
template <class C>
int unpack(const char *fn, const void *inbuf, C insize, C *position, void *outbuf, C outcount, MPI_Datatype datatype,
           MPI_Comm comm) {
    if (bad_count(insize) || bad_count(outcount)) return fail(wcomm(comm), WEFT_ERR_COUNT, "%s: negative count", fn);
    if (position == nullptr || *position < 0) return fail(wcomm(comm), WEFT_ERR_ARG, "%s: bad position", fn);
    size_t pos = static_cast<size_t>(*position);
    if (int rc = weft_unpack(inbuf, static_cast<size_t>(insize), &pos, outbuf, static_cast<size_t>(outcount),
                             wtype(datatype), wcomm(comm)))
        return merr(rc);
    *position = static_cast<C>(pos);
    return MPI_SUCCESS;
}
template <class C>
int pack_size(const char *fn, C incount, MPI_Datatype datatype, MPI_Comm comm, C *size) {
    if (bad_count(incount)) return fail(wcomm(comm), WEFT_ERR_COUNT, "%s: negative count", fn);
    if (size == nullptr) return null_out(fn);
    size_t s;
    if (int rc = weft_pack_size(static_cast<size_t>(incount), wtype(datatype), wcomm(comm), &s)) return merr(rc);
    if (s > static_cast<size_t>(std::numeric_limits<C>::max()))
        return fail(wcomm(comm), WEFT_ERR_COUNT, "%s: the size does not fit the int result (use the _c form)", fn);
    *size = static_cast<C>(s);
    return MPI_SUCCESS;
}
}  // namespace

extern "C" int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return contiguous("MPI_Type_contiguous", count, oldtype, newtype);
}
extern "C" int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return contiguous("MPI_Type_contiguous_c", count, oldtype, newtype);
}
extern "C" int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return vector("MPI_Type_vector", false, count, blocklength, stride, oldtype, newtype);
}
extern "C" int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                                  MPI_Datatype *newtype) {
    return vector("MPI_Type_vector_c", false, count, blocklength, stride, oldtype, newtype);
}
extern "C" int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                                        MPI_Datatype *newtype) {
    return vector("MPI_Type_create_hvector", true, count, blocklength, stride, oldtype, newtype);
}
extern "C" int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                          MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return vector("MPI_Type_create_hvector_c", true, count, blocklength, stride, oldtype, newtype);
}
extern "C" int PMPI_Type_indexed(int count, const int bl[], const int d[], MPI_Datatype oldtype,
                                 MPI_Datatype *newtype) {
    return indexed("MPI_Type_indexed", false, count, bl, d, oldtype, newtype);
}
extern "C" int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count bl[], const MPI_Count d[], MPI_Datatype oldtype,
                                   MPI_Datatype *newtype) {
    return indexed("MPI_Type_indexed_c", false, count, bl, d, oldtype, newtype);
}
extern "C" int PMPI_Type_create_hindexed(int count, const int bl[], const MPI_Aint d[], MPI_Datatype oldtype,
                                         MPI_Datatype *newtype) {
    return indexed("MPI_Type_create_hindexed", true, count, bl, d, oldtype, newtype);
}
extern "C" int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count bl[], const MPI_Count d[],
                                           MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return indexed("MPI_Type_create_hindexed_c", true, count, bl, d, oldtype, newtype);
}
extern "C" int PMPI_Type_create_indexed_block(int count, int blocklength, const int d[], MPI_Datatype oldtype,
                                              MPI_Datatype *newtype) {
    return indexed_block("MPI_Type_create_indexed_block", false, count, blocklength, d, oldtype, newtype);
}
extern "C" int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count d[],
                                                MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return indexed_block("MPI_Type_create_indexed_block_c", false, count, blocklength, d, oldtype, newtype);
}
extern "C" int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint d[], MPI_Datatype oldtype,
                                               MPI_Datatype *newtype) {
    return indexed_block("MPI_Type_create_hindexed_block", true, count, blocklength, d, oldtype, newtype);
}
extern "C" int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count d[],
                                                 MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return indexed_block("MPI_Type_create_hindexed_block_c", true, count, blocklength, d, oldtype, newtype);
}
extern "C" int PMPI_Type_create_struct(int count, const int bl[], const MPI_Aint d[], const MPI_Datatype types[],
                                       MPI_Datatype *newtype) {
    return structure("MPI_Type_create_struct", count, bl, d, types, newtype);
}
extern "C" int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count bl[], const MPI_Count d[],
                                         const MPI_Datatype types[], MPI_Datatype *newtype) {
    return structure("MPI_Type_create_struct_c", count, bl, d, types, newtype);
}
extern "C" int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype) {
    if (newtype == nullptr) return null_out("MPI_Type_create_resized");
    weft_datatype t = WEFT_DATATYPE_NULL;
    return out_type(weft_type_create_resized(wtype(oldtype), lb, extent, &t), t, newtype);
}
extern "C" int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype) {
    return PMPI_Type_create_resized(oldtype, lb, extent, newtype);
}
extern "C" int PMPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[],
                                         int order, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return subarray("MPI_Type_create_subarray", ndims, sizes, subsizes, starts, order, oldtype, newtype);
}
extern "C" int PMPI_Type_create_subarray_c(int ndims, const MPI_Count sizes[], const MPI_Count subsizes[],
                                           const MPI_Count starts[], int order, MPI_Datatype oldtype,
                                           MPI_Datatype *newtype) {
    return subarray("MPI_Type_create_subarray_c", ndims, sizes, subsizes, starts, order, oldtype, newtype);
}
extern "C" int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype) {
    if (newtype == nullptr) return null_out("MPI_Type_dup");
    weft_datatype t = WEFT_DATATYPE_NULL;
    return out_type(weft_type_dup(wtype(oldtype), &t), t, newtype);
}
extern "C" int PMPI_Type_commit(MPI_Datatype *datatype) {
    if (datatype == nullptr) return null_out("MPI_Type_commit");
    weft_datatype t = wtype(*datatype);
    return merr(weft_type_commit(&t));
}
extern "C" int PMPI_Type_free(MPI_Datatype *datatype) {
    if (datatype == nullptr) return null_out("MPI_Type_free");
    weft_datatype t = wtype(*datatype);
    if (int rc = weft_type_free(&t)) return merr(rc);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}
extern "C" int PMPI_Type_size(MPI_Datatype datatype, int *size) { return size_of("MPI_Type_size", datatype, size); }
extern "C" int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size) {
    return size_of("MPI_Type_size_c", datatype, size);
}
extern "C" int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size) {
    return size_of("MPI_Type_size_x", datatype, size);
}
extern "C" int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent) {
    return extent_of("MPI_Type_get_extent", false, datatype, lb, extent);
}
extern "C" int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent) {
    return extent_of("MPI_Type_get_extent_c", false, datatype, lb, extent);
}
extern "C" int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent) {
    return extent_of("MPI_Type_get_extent_x", false, datatype, lb, extent);
}
extern "C" int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent) {
    return extent_of("MPI_Type_get_true_extent", true, datatype, lb, extent);
}
extern "C" int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent) {
    return extent_of("MPI_Type_get_true_extent_c", true, datatype, lb, extent);
}
extern "C" int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent) {
    return extent_of("MPI_Type_get_true_extent_x", true, datatype, lb, extent);
}
extern "C" int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count) {
    return count_of("MPI_Get_count", false, status, datatype, count);
}
extern "C" int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count) {
    return count_of("MPI_Get_count_c", false, status, datatype, count);
}
extern "C" int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count) {
    return count_of("MPI_Get_elements", true, status, datatype, count);
}
extern "C" int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count) {
    return count_of("MPI_Get_elements_c", true, status, datatype, count);
}
extern "C" int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count) {
    return count_of("MPI_Get_elements_x", true, status, datatype, count);
}
extern "C" int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
                         int *position, MPI_Comm comm) {
    return pack("MPI_Pack", inbuf, incount, datatype, outbuf, outsize, position, comm);
}
extern "C" int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                           MPI_Count *position, MPI_Comm comm) {
    return pack("MPI_Pack_c", inbuf, incount, datatype, outbuf, outsize, position, comm);
}
extern "C" int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                           MPI_Datatype datatype, MPI_Comm comm) {
    return unpack("MPI_Unpack", inbuf, insize, position, outbuf, outcount, datatype, comm);
}
extern "C" int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
                             MPI_Datatype datatype, MPI_Comm comm) {
    return unpack("MPI_Unpack_c", inbuf, insize, position, outbuf, outcount, datatype, comm);
}
extern "C" int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size) {
    return pack_size("MPI_Pack_size", incount, datatype, comm, size);
}
extern "C" int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size) {
    return pack_size("MPI_Pack_size_c", incount, datatype, comm, size);
}

#define WEFT_MPI_FAMILY_datatype 1
#include "alias.hpp"
