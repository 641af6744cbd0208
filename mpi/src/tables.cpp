// The translation tables of handles.hpp: MPICH's predefined datatypes and Weft's error codes.
#include "handles.hpp"

namespace weft_mpi {

namespace {
constexpr weft_datatype invalid_type = static_cast<weft_datatype>(0x5fffffff);
constexpr basic_type_table make_basic() {
    basic_type_table t{};
    {
        auto &rows = t.rows;
        for (auto &r : rows) r = {static_cast<MPI_Datatype>(0x0badbad0), invalid_type};
        const type_row known[] = {
            {MPI_CHAR, WEFT_CHAR},
            {MPI_UNSIGNED_CHAR, WEFT_UNSIGNED_CHAR},
            {MPI_SHORT, WEFT_SHORT},
            {MPI_UNSIGNED_SHORT, WEFT_UNSIGNED_SHORT},
            {MPI_INT, WEFT_INT},
            {MPI_UNSIGNED, WEFT_UNSIGNED},
            {MPI_LONG, WEFT_LONG},
            {MPI_UNSIGNED_LONG, WEFT_UNSIGNED_LONG},
            {MPI_LONG_LONG_INT, WEFT_LONG_LONG},
            {MPI_FLOAT, WEFT_FLOAT},
            {MPI_DOUBLE, WEFT_DOUBLE},
            {MPI_LONG_DOUBLE, WEFT_LONG_DOUBLE},
            {MPI_BYTE, WEFT_BYTE},
            {MPI_WCHAR, WEFT_INT32_T},  // wchar_t: a 32-bit signed integer on Linux
            {MPI_PACKED, WEFT_BYTE},
            {MPI_2INT, WEFT_2INT},
            {MPI_SIGNED_CHAR, WEFT_SIGNED_CHAR},
            {MPI_UNSIGNED_LONG_LONG, WEFT_UNSIGNED_LONG_LONG},
            {MPI_CHARACTER, WEFT_CHAR},
            {MPI_INTEGER, WEFT_INT32_T},
            {MPI_REAL, WEFT_FLOAT},
            {MPI_LOGICAL, WEFT_INT32_T},
            {MPI_DOUBLE_PRECISION, WEFT_DOUBLE},
            {MPI_2INTEGER, WEFT_2INT},
            {MPI_REAL4, WEFT_FLOAT},
            {MPI_REAL8, WEFT_DOUBLE},
            {MPI_INTEGER1, WEFT_INT8_T},
            {MPI_INTEGER2, WEFT_INT16_T},
            {MPI_INTEGER4, WEFT_INT32_T},
            {MPI_INTEGER8, WEFT_INT64_T},
            {MPI_CXX_BOOL, WEFT_C_BOOL},
            {MPI_INT8_T, WEFT_INT8_T},
            {MPI_INT16_T, WEFT_INT16_T},
            {MPI_INT32_T, WEFT_INT32_T},
            {MPI_INT64_T, WEFT_INT64_T},
            {MPI_UINT8_T, WEFT_UINT8_T},
            {MPI_UINT16_T, WEFT_UINT16_T},
            {MPI_UINT32_T, WEFT_UINT32_T},
            {MPI_UINT64_T, WEFT_UINT64_T},
            {MPI_C_BOOL, WEFT_C_BOOL},
            {MPI_AINT, WEFT_LONG},
            {MPI_OFFSET, WEFT_LONG},
            {MPI_COUNT, WEFT_LONG},
        };
        for (const type_row &k : known) rows[static_cast<uint32_t>(k.mpi) & 0xffu] = k;
    }
    return t;
}

// Weft's built-in types (0x500000nn) back to the MPI type a program would name.
constexpr reverse_type_table make_reverse() {
    reverse_type_table t{};
    {
        auto &rows = t.rows;
        const type_row known[] = {
            {MPI_BYTE, WEFT_BYTE},
            {MPI_CHAR, WEFT_CHAR},
            {MPI_INT8_T, WEFT_INT8_T},
            {MPI_UINT8_T, WEFT_UINT8_T},
            {MPI_INT16_T, WEFT_INT16_T},
            {MPI_UINT16_T, WEFT_UINT16_T},
            {MPI_INT32_T, WEFT_INT32_T},
            {MPI_UINT32_T, WEFT_UINT32_T},
            {MPI_INT64_T, WEFT_INT64_T},
            {MPI_UINT64_T, WEFT_UINT64_T},
            {MPI_INT, WEFT_INT},
            {MPI_LONG, WEFT_LONG},
            {MPI_FLOAT, WEFT_FLOAT},
            {MPI_DOUBLE, WEFT_DOUBLE},
            {MPI_UNSIGNED, WEFT_UNSIGNED},
            {MPI_UNSIGNED_LONG, WEFT_UNSIGNED_LONG},
            {MPI_SHORT, WEFT_SHORT},
            {MPI_UNSIGNED_SHORT, WEFT_UNSIGNED_SHORT},
            {MPI_LONG_LONG_INT, WEFT_LONG_LONG},
            {MPI_UNSIGNED_LONG_LONG, WEFT_UNSIGNED_LONG_LONG},
            {MPI_SIGNED_CHAR, WEFT_SIGNED_CHAR},
            {MPI_UNSIGNED_CHAR, WEFT_UNSIGNED_CHAR},
            {MPI_C_BOOL, WEFT_C_BOOL},
            {MPI_LONG_DOUBLE, WEFT_LONG_DOUBLE},
            {MPI_FLOAT_INT, WEFT_FLOAT_INT},
            {MPI_DOUBLE_INT, WEFT_DOUBLE_INT},
            {MPI_LONG_INT, WEFT_LONG_INT},
            {MPI_2INT, WEFT_2INT},
            {MPI_SHORT_INT, WEFT_SHORT_INT},
        };
        for (const type_row &k : known) rows[static_cast<uint32_t>(k.weft) & 0x1fu] = k.mpi;
    }
    return t;
}

// Weft code -> MPI error class (docs/errors.md; MPICH 4.0 has no MPI_ERR_ERRHANDLER: MPI_ERR_ARG).
constexpr class_table make_classes() {
    class_table t{};
    {
        auto &rows = t.rows;
        for (auto &r : rows) r = MPI_ERR_INTERN;
        const int known[][2] = {
            {WEFT_SUCCESS, MPI_SUCCESS},
            {WEFT_ERR_ARG, MPI_ERR_ARG},
            {WEFT_ERR_COMM, MPI_ERR_COMM},
            {WEFT_ERR_RANK, MPI_ERR_RANK},
            {WEFT_ERR_TAG, MPI_ERR_TAG},
            {WEFT_ERR_COUNT, MPI_ERR_COUNT},
            {WEFT_ERR_TYPE, MPI_ERR_TYPE},
            {WEFT_ERR_OP, MPI_ERR_OP},
            {WEFT_ERR_REQUEST, MPI_ERR_REQUEST},
            {WEFT_ERR_INFO, MPI_ERR_INFO},
            {WEFT_ERR_INFO_KEY, MPI_ERR_INFO_KEY},
            {WEFT_ERR_INFO_VALUE, MPI_ERR_INFO_VALUE},
            {WEFT_ERR_INFO_NOKEY, MPI_ERR_INFO_NOKEY},
            {WEFT_ERR_BUFFER, MPI_ERR_BUFFER},
            {WEFT_ERR_TRUNCATE, MPI_ERR_TRUNCATE},
            {WEFT_ERR_NOT_INITIALIZED, MPI_ERR_OTHER},
            {WEFT_ERR_FINALIZED, MPI_ERR_OTHER},
            {WEFT_ERR_ALREADY_INITIALIZED, MPI_ERR_OTHER},
            {WEFT_ERR_NO_MEM, MPI_ERR_NO_MEM},
            {WEFT_ERR_PLUGIN, MPI_ERR_OTHER},
            {WEFT_ERR_BOOTSTRAP, MPI_ERR_OTHER},
            {WEFT_ERR_FABRIC, MPI_ERR_OTHER},
            {WEFT_ERR_IN_STATUS, MPI_ERR_IN_STATUS},
            {WEFT_ERR_STREAM, MPI_ERR_OTHER},
            {WEFT_ERR_NO_ENDPOINT, MPI_ERR_OTHER},
            {WEFT_ERR_BUSY, MPI_ERR_OTHER},
            {WEFT_ERR_PROC_FAILED, MPIX_ERR_PROC_FAILED},
            {WEFT_ERR_UNSUPPORTED, MPI_ERR_UNSUPPORTED_OPERATION},
            {WEFT_ERR_THREAD, MPI_ERR_OTHER},
            {WEFT_ERR_INTERNAL, MPI_ERR_INTERN},
            {WEFT_ERR_NO_DEVICE, MPI_ERR_OTHER},
            {WEFT_ERR_GROUP, MPI_ERR_GROUP},
            {WEFT_ERR_ERRHANDLER, MPI_ERR_ARG},
        };
        for (const auto &k : known) rows[k[0]] = static_cast<unsigned char>(k[1]);
    }
    return t;
}
static_assert(WEFT_ERR_LASTCODE < 64, "Weft codes must fit the front end's class table");
}  // namespace

constinit const basic_type_table basic_types = make_basic();
constexpr basic_type_index make_index() {
    basic_type_index x{};
    for (auto &w : x.weft) w = invalid_type;
    for (const type_row &r : make_basic().rows)
        if ((static_cast<uint32_t>(r.mpi) >> 16) == 0x4c00u) x.weft[static_cast<uint32_t>(r.mpi) & 0xffffu] = r.weft;
    return x;
}
constinit const basic_type_index basic_type_of = make_index();
constinit const pair_type_table pair_types = {{{MPI_FLOAT_INT, WEFT_FLOAT_INT},
                                               {MPI_DOUBLE_INT, WEFT_DOUBLE_INT},
                                               {MPI_LONG_INT, WEFT_LONG_INT},
                                               {MPI_SHORT_INT, WEFT_SHORT_INT}}};
constinit const reverse_type_table weft_to_mpi_type = make_reverse();
constinit const class_table weft_code_class = make_classes();
}  // namespace weft_mpi
