// Error classes: every predefined WEFT_ERR_* code with its MPI error class (the one table
// docs/errors.md shows; tests/errhandler checks that the two agree), and the classes, codes
// and strings a program adds (weft_add_error_class/code/string).
#pragma once
#include <cstddef>

namespace weft {

struct error_class_row {
    int code;               // WEFT_ERR_*: each predefined code is its own class
    const char *name;       // "WEFT_ERR_RANK"
    const char *mpi_class;  // "MPI_ERR_RANK": the class an MPI front end reports for it
};

// Every predefined code, WEFT_SUCCESS first, in increasing order without gaps.
const error_class_row *error_class_rows(size_t *count);

// The text weft_add_error_string gave code, or nullptr (copied into out, which holds
// WEFT_MAX_ERROR_STRING bytes, since another thread may replace it).
bool error_user_string(int code, char *out);

}  // namespace weft
