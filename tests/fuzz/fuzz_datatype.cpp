// Fuzz target: the derived-datatype engine (core/base/datatype*.cpp).  The input picks a type
// tree (every constructor, nested, negative strides and displacements: tests/common/
// dtype_ref.hpp's random_tree, its choices read from the input), a count and a cut.
//
// Invariants, against the reference model (an element-by-element typemap expansion that uses
// no part of the engine):
//  - the constructors accept the tree; size, lb, extent, true lb and true extent are the model's;
//  - pack gives the model's bytes and writes no further; the iovec of the same elements holds
//    the same bytes in order, in no more runs than the typemap, adjacent runs merged;
//  - unpack, whole or cut short at any byte, writes what the model writes and nothing else;
//  - the basic-element count of any prefix is the model's (undefined exactly when the prefix
//    ends inside a basic element).
#include <cstdint>
#include <vector>

#include "base/datatype.hpp"
#include "dtype_ref.hpp"
#include "fuzz_common.hpp"

namespace {

struct input_chooser : dtref::chooser {
    fuzz::input &in;
    explicit input_chooser(fuzz::input &i) : in(i) {}
    uint32_t next() override { return in.u8() | uint32_t{in.u8()} << 8; }
};

std::vector<unsigned char> background(size_t n, uint32_t seed) {
    std::vector<unsigned char> b(n);
    for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>((i * 2654435761u + seed) >> 7);
    return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz::input in(data, size);
    size_t count = in.below(4);
    uint32_t cut_pick = in.u16();
    input_chooser c(in);
    dtref::node_ptr tree = dtref::random_tree(c, 5);
    if (dtref::elements(*tree) * (count + 1) > 20000) return 0;  // keep each input quick
    dtref::layout l = dtref::expand(*tree);
    weft_datatype h = dtref::build(*tree);
    FUZZ_CHECK(h != WEFT_DATATYPE_NULL);
    const weft::datatype *t = weft::datatype_get(h);
    FUZZ_CHECK(t != nullptr);

    size_t tsize = 0;
    for (const dtref::entry &e : l.map) tsize += e.len;
    FUZZ_CHECK(t->size == tsize);
    FUZZ_CHECK(t->lb == l.lb && t->extent == l.ub - l.lb);
    FUZZ_CHECK(t->basic_count == l.map.size());
    if (!l.map.empty()) {
        ptrdiff_t lo, hi;
        dtref::span(l, 1, lo, hi);
        FUZZ_CHECK(t->true_lb == lo && t->true_ub == hi);
    }

    // A buffer around count elements, its origin inside.
    ptrdiff_t lo, hi;
    dtref::span(l, count, lo, hi);
    ptrdiff_t origin = 8 - (lo < 0 ? lo : 0);
    size_t n = static_cast<size_t>(origin + (hi > 0 ? hi : 0) + 8);
    std::vector<unsigned char> src = background(n, 1);
    std::vector<unsigned char> expect = dtref::pack(l, src.data() + origin, count);
    FUZZ_CHECK(expect.size() == count * tsize);
    std::vector<unsigned char> got(expect.size() + 1, 0xEE);
    weft::datatype_pack(*t, src.data() + origin, count, got.data());
    FUZZ_CHECK(got.back() == 0xEE);
    got.pop_back();
    FUZZ_CHECK(got == expect);

    std::vector<weft::datatype_iov> iov(l.map.size() * count + 1);
    size_t runs = weft::datatype_iovec(*t, src.data() + origin, count, iov.data(), iov.size());
    FUZZ_CHECK(runs <= l.map.size() * count);
    std::vector<unsigned char> joined;
    for (size_t i = 0; i < runs; ++i) {
        auto *b = static_cast<unsigned char *>(iov[i].base);
        FUZZ_CHECK(iov[i].len > 0);
        FUZZ_CHECK(i == 0 || static_cast<unsigned char *>(iov[i - 1].base) + iov[i - 1].len != b);
        FUZZ_CHECK(b >= src.data() && b + iov[i].len <= src.data() + src.size());
        joined.insert(joined.end(), b, b + iov[i].len);
    }
    FUZZ_CHECK(joined == expect);

    size_t cut = expect.empty() ? 0 : cut_pick % (expect.size() + 1);
    for (size_t bytes : {expect.size(), cut}) {
        std::vector<unsigned char> a = background(n, 2), b = a;
        dtref::unpack(l, expect.data(), bytes, a.data() + origin, count);
        weft::datatype_unpack(*t, expect.data(), bytes, b.data() + origin, count);
        FUZZ_CHECK(a == b);
    }

    // Element counts of the prefix of `cut` bytes.
    size_t done = 0, elems = 0;
    bool boundary = cut == 0;
    for (size_t i = 0; i < count && done < cut; ++i)
        for (const dtref::entry &e : l.map) {
            if (done >= cut) break;
            done += e.len;
            ++elems;
            if (done == cut) boundary = true;
        }
    bool exact;
    size_t got_elems = weft::datatype_count_basic(*t, cut, &exact);
    FUZZ_CHECK(exact == boundary);
    if (exact) FUZZ_CHECK(got_elems == elems);

    if (tree->k != dtref::kind::builtin) FUZZ_CHECK(weft_type_free(&h) == WEFT_SUCCESS);
    return 0;
}
