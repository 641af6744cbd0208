// weft-bootstrap-check EXPECTED_NAME EXPECTED_SIZE [--abort-rank R]
// Opens the bootstrap the launcher provides, checks which one it is and the job size, puts two
// binary values (a short one with separators and NULs, and 3000 bytes), fences, reads and
// checks every rank's values, checks that a missing key is an error, fences and finalizes.
// With --abort-rank R, rank R calls abort(5) after the first fence instead.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "weft/weft.h"

namespace {

int my_rank = -1;

int die(const char *what, int rc) {
    char detail[WEFT_MAX_ERROR_STRING];
    size_t len = 0;
    weft_error_detail(detail, &len);
    std::fprintf(stderr, "weft-bootstrap-check[%d]: %s failed (code %d): %s\n", my_rank, what, rc, detail);
    return 1;
}

std::string small_value(int rank) {
    std::string v("a\0b=c d\n", 8);  // NUL, '=', space, newline: everything a text protocol dislikes
    return v + "rank" + std::to_string(rank);
}

std::string big_value(int rank) {
    std::string v(3000, '\0');
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<char>((i * 7 + static_cast<size_t>(rank) * 13) & 0xff);
    return v;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: weft-bootstrap-check EXPECTED_NAME EXPECTED_SIZE [--abort-rank R]\n");
        return 2;
    }
    const std::string want_name = argv[1];
    const int want_size = std::atoi(argv[2]);
    int abort_rank = -1;
    if (argc >= 5 && std::strcmp(argv[3], "--abort-rank") == 0) abort_rank = std::atoi(argv[4]);

    std::unique_ptr<weft::bootstrap> b;
    if (int rc = weft::bootstrap_open(b)) return die("bootstrap_open", rc);
    my_rank = b->rank();
    if (want_name != b->name()) {
        std::fprintf(stderr, "weft-bootstrap-check[%d]: bootstrap is '%s', expected '%s'\n", my_rank, b->name(),
                     want_name.c_str());
        return 1;
    }
    if (b->size() != want_size || b->rank() < 0 || b->rank() >= b->size()) {
        std::fprintf(stderr, "weft-bootstrap-check: rank %d size %d, expected size %d\n", b->rank(), b->size(),
                     want_size);
        return 1;
    }
    if (int rc = b->put("check.small", small_value(my_rank))) return die("put check.small", rc);
    if (int rc = b->put("check.big", big_value(my_rank))) return die("put check.big", rc);
    if (int rc = b->fence()) return die("fence", rc);
    if (my_rank == abort_rank) b->abort(5, "weft-bootstrap-check aborts on purpose");

    for (int r = 0; r < b->size(); ++r) {
        std::string v;
        if (int rc = b->get(r, "check.small", v)) return die("get check.small", rc);
        if (v != small_value(r)) {
            std::fprintf(stderr, "weft-bootstrap-check[%d]: rank %d's small value differs (%zu bytes)\n", my_rank, r,
                         v.size());
            return 1;
        }
        if (int rc = b->get(r, "check.big", v)) return die("get check.big", rc);
        if (v != big_value(r)) {
            std::fprintf(stderr, "weft-bootstrap-check[%d]: rank %d's 3000-byte value differs (%zu bytes)\n", my_rank,
                         r, v.size());
            return 1;
        }
    }
    std::string v;
    if (b->get((my_rank + 1) % b->size(), "check.never-put", v) == WEFT_SUCCESS) {
        std::fprintf(stderr, "weft-bootstrap-check[%d]: get of a key never put succeeded\n", my_rank);
        return 1;
    }
    if (int rc = b->fence()) return die("second fence", rc);
    if (int rc = b->finalize()) return die("finalize", rc);
    std::printf("weft-bootstrap-check: rank %d of %d (%s) ok\n", my_rank, b->size(), b->name());
    return 0;
}
