// weft_alltoallw and weft_ialltoallw on every communicator kind: a different datatype on each
// side of each pair (WEFT_INT; a contiguous type of 3 ints, used in place; a vector type of 3
// ints with holes, packed), blocks at byte displacements in scrambled order with gaps, empty
// blocks (some with WEFT_DATATYPE_NULL), a large exchange, and in place.  Every int of every
// block carries where it came from, and every byte outside the blocks (gaps, the vector's
// holes) must stay untouched.  The ctest entries force each algorithm (WEFT_COLL_ALLTOALLW).
#include <numeric>

#include "coll_env.hpp"
#include "weft/weft.h"

using namespace coll_test;

namespace {

inline int alltoallw(mode m, const void *s, const size_t *sc, const ptrdiff_t *sd, const weft_datatype *st, void *r,
                     const size_t *rc, const ptrdiff_t *rd, const weft_datatype *rt, weft_comm c) {
    return invoke(
        m, [&] { return weft_alltoallw(s, sc, sd, st, r, rc, rd, rt, c); },
        [&](weft_request *q) { return weft_ialltoallw(s, sc, sd, st, r, rc, rd, rt, c, q); });
}

// The three ways a block of ints is described.
enum class shape { ints, contig3, vec3 };

class Alltoallw : public comm_fixture {
  protected:
    weft_datatype contig3_ = WEFT_DATATYPE_NULL, vec3_ = WEFT_DATATYPE_NULL;
    static constexpr ptrdiff_t vec_extent = 20;  // vector(3, 1, 2, INT): ints at 0, 8, 16

    void SetUp() override {
        comm_fixture::SetUp();
        if (HasFatalFailure()) return;
        ASSERT_EQ(weft_type_contiguous(3, WEFT_INT, &contig3_), 0) << detail();
        ASSERT_EQ(weft_type_commit(&contig3_), 0) << detail();
        ASSERT_EQ(weft_type_vector(3, 1, 2, WEFT_INT, &vec3_), 0) << detail();
        ASSERT_EQ(weft_type_commit(&vec3_), 0) << detail();
    }
    void TearDown() override {
        if (contig3_ != WEFT_DATATYPE_NULL) {
            EXPECT_EQ(weft_type_free(&contig3_), 0);
        }
        if (vec3_ != WEFT_DATATYPE_NULL) {
            EXPECT_EQ(weft_type_free(&vec3_), 0);
        }
        comm_fixture::TearDown();
    }

    weft_datatype type_of(shape s) const {
        return s == shape::ints ? WEFT_INT : s == shape::contig3 ? contig3_ : vec3_;
    }
    static size_t count_of(shape s, size_t ints) { return s == shape::ints ? ints : ints / 3; }
    // Byte offset of int k of a block, and the block's footprint.
    static size_t int_at(shape s, size_t k) { return s == shape::vec3 ? (k / 3) * vec_extent + (k % 3) * 8 : k * 4; }
    static size_t footprint(shape s, size_t ints) { return s == shape::vec3 ? ints / 3 * vec_extent : ints * 4; }

    // One side of a process's call: per peer, ints, shape, and byte displacement.
    struct side {
        std::vector<size_t> ints, counts;
        std::vector<shape> shapes;
        std::vector<ptrdiff_t> displs;
        std::vector<weft_datatype> types;
        std::vector<int> buf;  // ints; sentinel outside the blocks
    };
    // Lays out the blocks in peer order (or reversed), each `gap` bytes after the previous one.
    side layout(const std::vector<size_t> &ints, const std::vector<shape> &shapes, bool reversed, size_t gap) const {
        size_t n = ints.size();
        side sd;
        sd.ints = ints;
        sd.shapes = shapes;
        sd.counts.resize(n);
        sd.displs.assign(n, 0);
        sd.types.resize(n);
        size_t pos = gap;
        for (size_t i = 0; i < n; ++i) {
            size_t p = reversed ? n - 1 - i : i;
            sd.counts[p] = count_of(shapes[p], ints[p]);
            sd.types[p] = type_of(shapes[p]);
            if (ints[p] == 0) {
                // Empty: the type and displacement are not looked at.
                if (p % 2) sd.types[p] = WEFT_DATATYPE_NULL;
                sd.displs[p] = -12345;
                continue;
            }
            sd.displs[p] = static_cast<ptrdiff_t>(pos);
            pos += footprint(shapes[p], ints[p]) + gap;
        }
        sd.buf.assign(pos / 4 + 1, sentinel);
        return sd;
    }
    static void put(side &sd, size_t peer, int seed, int src, int dst) {
        auto *base = reinterpret_cast<char *>(sd.buf.data()) + sd.displs[peer];
        for (size_t k = 0; k < sd.ints[peer]; ++k) {
            int v = dval(seed, src, dst, k);
            std::memcpy(base + int_at(sd.shapes[peer], k), &v, sizeof v);
        }
    }
    // Every block of rs holds what its sender put there; every other int is still sentinel.
    void verify(const std::string &w, const side &rs, int seed) {
        const int me = cu.rank;
        std::vector<int> want(rs.buf.size(), sentinel);
        side model = rs;
        model.buf = want;
        for (size_t i = 0; i < rs.ints.size(); ++i) put(model, i, seed, static_cast<int>(i), me);
        std::string bad = compare_dvals(rs.buf.data(), model.buf.data(), rs.buf.size());
        if (!bad.empty()) COLL_FAIL(w, bad + " (ints of the receive buffer)");
    }

    // Ints rank src sends rank dst: multiples of 6 (whole elements of every shape), some zero.
    static size_t pair_ints(int seed, int src, int dst, size_t scale) {
        return 6 * scale * static_cast<size_t>((src * 5 + dst * 3 + seed) % 4);
    }
    static shape send_shape(int seed, int src, int dst) { return static_cast<shape>((src + 2 * dst + seed) % 3); }
    static shape recv_shape(int seed, int src, int dst) { return static_cast<shape>((2 * src + dst + seed + 1) % 3); }

    void run(int seed, size_t scale, mode m) {
        const int me = cu.rank, n = cu.size;
        std::vector<size_t> sints(n), rints(n);
        std::vector<shape> sshape(n), rshape(n);
        for (int p = 0; p < n; ++p) {
            sints[p] = pair_ints(seed, me, p, scale);
            sshape[p] = send_shape(seed, me, p);
            rints[p] = pair_ints(seed, p, me, scale);
            rshape[p] = recv_shape(seed, p, me);
        }
        side ss = layout(sints, sshape, true, 12), rs = layout(rints, rshape, false, 8);
        for (int p = 0; p < n; ++p) put(ss, p, seed, me, p);
        std::string w = at("weft_alltoallw")("seed", seed)("scale", scale)(m);
        step(w);
        if (COLL_RC(alltoallw(m, ss.buf.data(), ss.counts.data(), ss.displs.data(), ss.types.data(), rs.buf.data(),
                              rs.counts.data(), rs.displs.data(), rs.types.data(), cu.c),
                    w))
            verify(w, rs, seed);
    }
};

// Mixed datatypes, byte displacements, empty blocks; every completion mode.
TEST_P(Alltoallw, MixedTypes) {
    size_t k = 0;
    for (int seed = 0; seed < 4; ++seed)
        for (mode m : modes_all(k++)) run(seed, 1, m);
}

// Blocks of 24-72 KB (rendezvous-sized on most fabrics), one mode each.
TEST_P(Alltoallw, Large) {
    for (int seed = 0; seed < 2; ++seed) run(seed, 1000, all_modes[seed % 3]);
}

// Every count zero: NULL buffers and WEFT_DATATYPE_NULL types are fine.
TEST_P(Alltoallw, AllEmpty) {
    const size_t n = static_cast<size_t>(cu.size);
    std::vector<size_t> zero(n, 0);
    std::vector<ptrdiff_t> d(n, 0);
    std::vector<weft_datatype> t(n, WEFT_DATATYPE_NULL);
    for (mode m : all_modes) {
        std::string w = at("weft_alltoallw with every count 0")(m);
        step(w);
        COLL_RC(alltoallw(m, nullptr, zero.data(), d.data(), t.data(), nullptr, zero.data(), d.data(), t.data(), cu.c),
                w);
    }
}

// WEFT_IN_PLACE: each block of recvbuf goes to its peer and is replaced by the peer's block for
// this rank.  Counts are symmetric (what i sends j equals what j sends i); shapes are not.
TEST_P(Alltoallw, InPlace) {
    const int me = cu.rank, n = cu.size;
    size_t k = 0;
    for (int seed = 0; seed < 3; ++seed)
        for (mode m : modes_all(k++)) {
            std::vector<size_t> ints(n);
            std::vector<shape> shapes(n);
            for (int p = 0; p < n; ++p) {
                ints[p] = 6 * static_cast<size_t>((me + p + seed) % 4);
                shapes[p] = static_cast<shape>((2 * me + p + seed) % 3);
            }
            side rs = layout(ints, shapes, seed % 2 == 0, 4);
            for (int p = 0; p < n; ++p) put(rs, p, seed, me, p);  // what this rank sends p
            std::string w = at("weft_alltoallw in place")("seed", seed)(m);
            step(w);
            // The send arguments are ignored: NULL arrays are fine.
            if (COLL_RC(alltoallw(m, WEFT_IN_PLACE, nullptr, nullptr, nullptr, rs.buf.data(), rs.counts.data(),
                                  rs.displs.data(), rs.types.data(), cu.c),
                        w))
                verify(w, rs, seed);
        }
}

// An ialltoallw and an ireduce_scatter in flight together, completed in reverse order; the
// derived types are freed while the alltoallw is in flight (it holds them).
TEST_P(Alltoallw, OverlapsReduceScatter) {
    const int me = cu.rank, n = cu.size;
    const int seed = 3;
    std::vector<size_t> sints(n), rints(n);
    std::vector<shape> sshape(n), rshape(n);
    for (int p = 0; p < n; ++p) {
        sints[p] = pair_ints(seed, me, p, 2);
        sshape[p] = send_shape(seed, me, p);
        rints[p] = pair_ints(seed, p, me, 2);
        rshape[p] = recv_shape(seed, p, me);
    }
    side ss = layout(sints, sshape, true, 12), rs = layout(rints, rshape, false, 8);
    for (int p = 0; p < n; ++p) put(ss, p, seed, me, p);
    std::vector<size_t> counts(n, 2);
    std::vector<int> in(2 * n), out(2, -1);
    for (int i = 0; i < 2 * n; ++i) in[i] = me * 100 + i;
    weft_request q[2] = {WEFT_REQUEST_NULL, WEFT_REQUEST_NULL};
    std::string w = at("weft_ialltoallw and weft_ireduce_scatter in flight");
    step(w);
    if (!COLL_RC(weft_ialltoallw(ss.buf.data(), ss.counts.data(), ss.displs.data(), ss.types.data(), rs.buf.data(),
                                 rs.counts.data(), rs.displs.data(), rs.types.data(), cu.c, &q[0]),
                 w))
        return;
    EXPECT_EQ(weft_type_free(&contig3_), 0);
    EXPECT_EQ(weft_type_free(&vec3_), 0);
    if (!COLL_RC(weft_ireduce_scatter(in.data(), out.data(), counts.data(), WEFT_INT, WEFT_SUM, cu.c, &q[1]), w)) {
        weft_wait(&q[0], WEFT_STATUS_IGNORE);
        return;
    }
    COLL_RC(weft_wait(&q[1], WEFT_STATUS_IGNORE), w + " (reduce_scatter)");
    COLL_RC(weft_wait(&q[0], WEFT_STATUS_IGNORE), w + " (alltoallw)");
    verify(w, rs, seed);
    for (int i = 0; i < 2; ++i) {
        int want = 0;
        for (int r = 0; r < n; ++r) want += r * 100 + 2 * me + i;
        if (out[i] != want)
            COLL_FAIL(w,
                      "reduce_scatter element " + std::to_string(i) + ": got " + std::to_string(out[i]) +
                          ", expected " + std::to_string(want));
    }
}

INSTANTIATE_TEST_SUITE_P(Comm, Alltoallw, ::testing::ValuesIn(all_kinds), kind_param_name);

}  // namespace
