// Data-movement collectives (barrier, bcast, gather(v), scatter(v), allgather(v), alltoall(v))
// on every communicator kind, with counts 0, 1, 7, 1000 and a large one, every rank as root,
// blocking and nonblocking (completed by weft_wait and by a weft_test loop), in place where MPI
// allows it, and with derived datatypes.
//
// Every element a process sends is a dval(seed, source, destination, index), so a wrong value
// in a failure message says which rank's which element arrived instead.
#include <algorithm>
#include <chrono>
#include <thread>

#include "coll_env.hpp"

using namespace coll_test;

namespace {

class Data : public comm_fixture {};

// Per-rank count for gather-like collectives: the large total is split over the ranks.
size_t per_rank(size_t count, int n) { return count == large_count ? large_count / n + 3 : count; }

// Non-uniform counts of the v variants from a base count: every third rank contributes
// nothing, the others different amounts.
size_t vcount(size_t base, int r) {
    if (base == 0 || r % 3 == 1) return 0;
    return base + static_cast<size_t>(r) * (base > 100 ? 17 : 1);
}

// Displacements placing the blocks in reverse rank order with a gap of `gap` elements before
// each (gaps must stay untouched); returns the total buffer length.
size_t reverse_layout(const std::vector<size_t> &counts, size_t gap, std::vector<size_t> &displs) {
    size_t n = counts.size(), pos = 0;
    displs.assign(n, 0);
    for (size_t k = n; k-- > 0;) {
        pos += gap;
        displs[k] = pos;
        pos += counts[k];
    }
    return pos + gap;
}

constexpr size_t guard = 2;  // sentinel elements after every receive buffer

// ------------------------------------------------------------------------------- barrier

// A barrier is checked by time, on one host's monotonic clock: no process may leave it before
// the last one entered.  Each round, one rank enters late.
TEST_P(Data, Barrier) {
    const int n = cu.size, me = cu.rank;
    struct times {
        int64_t enter, exit;
    };
    std::vector<times> mine;
    auto now_ns = [] {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    };
    std::vector<mode> used;
    for (int late = 0; late < n; ++late)
        for (mode m : modes_for(late)) {
            step(at("weft_barrier")("late rank", late)(m));
            if (me == late) std::this_thread::sleep_for(std::chrono::milliseconds(4));
            times t{now_ns(), 0};
            int rc = barrier(m, cu.c);
            t.exit = now_ns();
            COLL_RC(rc, at("weft_barrier")("late rank", late)(m));
            mine.push_back(t);
            used.push_back(m);
        }
    // A few more without delays, back to back (sequence numbers, reuse of internal state).
    for (int i = 0; i < 20; ++i) {
        int rc = barrier(all_modes[i % 3], cu.c);
        COLL_RC(rc, at("weft_barrier")("repeat", i)(all_modes[i % 3]));
    }
    // Exchange the times over WEFT_COMM_WORLD point to point; compare within one communicator.
    const int wn = world_size(), wr = world_rank();
    const int color = cu.k == kind::split ? wr % 2 : 0;
    // Fixed length: the two halves of a split can differ in size, hence in rounds.
    const size_t rounds = mine.size(), max_rounds = 3 * static_cast<size_t>(wn) + 1;
    std::vector<int64_t> packed(1 + 2 * max_rounds, 0);
    packed[0] = color;
    for (size_t i = 0; i < rounds; ++i) packed[1 + 2 * i] = mine[i].enter, packed[2 + 2 * i] = mine[i].exit;
    std::vector<std::vector<int64_t>> all(wn);
    std::vector<weft_request> reqs;
    for (int p = 0; p < wn; ++p) {
        all[p].resize(packed.size());
        if (p == wr) {
            all[p] = packed;
            continue;
        }
        reqs.emplace_back();
        ASSERT_EQ(weft_irecv(all[p].data(), packed.size(), WEFT_INT64_T, p, 5, WEFT_COMM_WORLD, &reqs.back()), 0);
        reqs.emplace_back();
        ASSERT_EQ(weft_isend(packed.data(), packed.size(), WEFT_INT64_T, p, 5, WEFT_COMM_WORLD, &reqs.back()), 0);
    }
    ASSERT_EQ(weft_waitall(reqs.size(), reqs.data(), WEFT_STATUSES_IGNORE), 0) << detail();
    for (size_t i = 0; i < rounds; ++i) {
        int64_t last_enter = INT64_MIN;
        int last_who = -1;
        for (int p = 0; p < wn; ++p)
            if (all[p][0] == color && all[p][1 + 2 * i] > last_enter) last_enter = all[p][1 + 2 * i], last_who = p;
        if (mine[i].exit < last_enter)
            COLL_FAIL(at("weft_barrier")("round", i)(used[i]),
                      "left the barrier " + std::to_string((last_enter - mine[i].exit) / 1000) +
                          " us before world rank " + std::to_string(last_who) + " entered it");
    }
}

// --------------------------------------------------------------------------------- bcast

TEST_P(Data, Bcast) {
    const int n = cu.size, me = cu.rank;
    int seed = 0;
    size_t k = 0;
    for (size_t count : counts())
        for (int root : roots_for(count))
            for (mode m : modes_for(k++)) {
                ++seed;
                std::vector<int> buf(count + guard, sentinel), expected(count + guard, sentinel);
                for (size_t i = 0; i < count; ++i) expected[i] = dval(seed, root, any_dst, i);
                if (me == root) std::copy(expected.begin(), expected.end(), buf.begin());
                auto w = at("weft_bcast")("count", count)("root", root)(m);
                step(w);
                if (COLL_RC(bcast(m, buf.data(), count, WEFT_INT, root, cu.c), w)) {
                    std::string bad = compare_dvals(buf.data(), expected.data(), count + guard);
                    if (!bad.empty()) COLL_FAIL(w, bad);
                }
            }
    // Doubles, to see the byte count follows the datatype.
    for (int root = 0; root < n; ++root) {
        std::vector<double> d(333, -1.0);
        if (me == root)
            for (size_t i = 0; i < d.size(); ++i) d[i] = root * 1000.0 + i + 0.25;
        auto w = at("weft_bcast")("type", "WEFT_DOUBLE")("count", d.size())("root", root);
        step(w);
        if (COLL_RC(weft_bcast(d.data(), d.size(), WEFT_DOUBLE, root, cu.c), w))
            for (size_t i = 0; i < d.size(); ++i)
                if (d[i] != root * 1000.0 + i + 0.25) {
                    COLL_FAIL(w, "index " + std::to_string(i) + ": got " + std::to_string(d[i]));
                    break;
                }
    }
}

// A vector datatype (4 blocks of 2 ints, stride 3: extent 11 ints) in bcast: only the blocks
// are written at the receivers; the holes keep their sentinels.
TEST_P(Data, BcastVectorDatatype) {
    const int n = cu.size, me = cu.rank;
    weft_datatype vt = WEFT_DATATYPE_NULL;
    ASSERT_EQ(weft_type_vector(4, 2, 3, WEFT_INT, &vt), 0) << detail();
    ASSERT_EQ(weft_type_commit(&vt), 0) << detail();
    constexpr size_t ext = 11;
    auto selected = [](size_t pos) { return (pos % ext) % 3 < 2; };
    int seed = 0;
    size_t k = 0;
    for (size_t count : {size_t(0), size_t(1), size_t(3), size_t(1000)})
        for (int root = 0; root < n; ++root)
            for (mode m : modes_for(k++)) {
                ++seed;
                const size_t len = count * ext + guard;
                std::vector<int> buf(len, sentinel), expected(len, sentinel);
                for (size_t i = 0; i < count * ext; ++i)
                    if (selected(i)) expected[i] = dval(seed, root, any_dst, i);
                if (me == root)
                    for (size_t i = 0; i < count * ext; ++i) buf[i] = dval(seed, root, any_dst, i);  // holes too
                auto w = at("weft_bcast")("type", "vector(4,2,3,INT)")("count", count)("root", root)(m);
                step(w);
                if (COLL_RC(bcast(m, buf.data(), count, vt, root, cu.c), w) && me != root) {
                    std::string bad = compare_dvals(buf.data(), expected.data(), len);
                    if (!bad.empty()) COLL_FAIL(w, bad);
                }
            }
    EXPECT_EQ(weft_type_free(&vt), 0);
}

// -------------------------------------------------------------------------------- gather

TEST_P(Data, Gather) {
    const int n = cu.size, me = cu.rank;
    int seed = 0;
    size_t k = 0;
    for (size_t count0 : counts()) {
        const size_t count = per_rank(count0, n);
        for (int root : roots_for(count0))
            for (bool in_place : {false, true})
                for (mode m : modes_for(k++)) {
                    ++seed;
                    std::vector<int> send(count);
                    for (size_t i = 0; i < count; ++i) send[i] = dval(seed, me, root, i);
                    const size_t len = count * n + guard;
                    std::vector<int> recv(len, sentinel), expected(len, sentinel);
                    for (int r = 0; r < n; ++r)
                        for (size_t i = 0; i < count; ++i) expected[r * count + i] = dval(seed, r, root, i);
                    const void *sbuf = send.data();
                    if (in_place && me == root) {
                        std::copy(send.begin(), send.end(), recv.begin() + me * count);
                        sbuf = WEFT_IN_PLACE;
                    }
                    auto w = at("weft_gather")("count", count)("root", root)(m);
                    if (in_place) w << " WEFT_IN_PLACE at root";
                    step(w);
                    if (COLL_RC(gather(m, sbuf, count, WEFT_INT, recv.data(), count, WEFT_INT, root, cu.c), w) &&
                        me == root) {
                        std::string bad = compare_dvals(recv.data(), expected.data(), len);
                        if (!bad.empty()) COLL_FAIL(w, bad);
                    }
                }
    }
}

// Gather with a vector send type into ints at the root, and ints into a vector receive type.
TEST_P(Data, GatherVectorDatatype) {
    const int n = cu.size, me = cu.rank;
    weft_datatype vt = WEFT_DATATYPE_NULL;
    ASSERT_EQ(weft_type_vector(4, 2, 3, WEFT_INT, &vt), 0) << detail();
    ASSERT_EQ(weft_type_commit(&vt), 0) << detail();
    constexpr size_t ext = 11, per = 8;  // 8 ints selected out of 11
    auto selected = [](size_t pos) { return (pos % ext) % 3 < 2; };
    int seed = 0;
    for (int root = 0; root < n; ++root) {
        mode m = all_modes[root % 3];
        // (a) vector -> ints: rank r's selected elements, packed, land at r * 8.
        {
            ++seed;
            std::vector<int> send(ext), recv(per * n + guard, sentinel), expected(per * n + guard, sentinel);
            for (size_t i = 0; i < ext; ++i) send[i] = dval(seed, me, root, i);
            for (int r = 0; r < n; ++r)
                for (size_t i = 0, j = 0; i < ext; ++i)
                    if (selected(i)) expected[r * per + j++] = dval(seed, r, root, i);
            auto w = at("weft_gather")("sendtype", "vector(4,2,3,INT)")("recvtype", "INT")("root", root)(m);
            step(w);
            if (COLL_RC(gather(m, send.data(), 1, vt, recv.data(), per, WEFT_INT, root, cu.c), w) && me == root) {
                std::string bad = compare_dvals(recv.data(), expected.data(), recv.size());
                if (!bad.empty()) COLL_FAIL(w, bad);
            }
        }
        // (b) ints -> vector: rank r's 8 ints fill the blocks of element r, holes untouched.
        {
            ++seed;
            std::vector<int> send(per), recv(ext * n + guard, sentinel), expected(ext * n + guard, sentinel);
            for (size_t i = 0; i < per; ++i) send[i] = dval(seed, me, root, i);
            for (int r = 0; r < n; ++r)
                for (size_t i = 0, j = 0; i < ext; ++i)
                    if (selected(i)) expected[r * ext + i] = dval(seed, r, root, j++);
            auto w = at("weft_gather")("sendtype", "INT")("recvtype", "vector(4,2,3,INT)")("root", root)(m);
            step(w);
            if (COLL_RC(gather(m, send.data(), per, WEFT_INT, recv.data(), 1, vt, root, cu.c), w) && me == root) {
                std::string bad = compare_dvals(recv.data(), expected.data(), recv.size());
                if (!bad.empty()) COLL_FAIL(w, bad);
            }
        }
    }
    EXPECT_EQ(weft_type_free(&vt), 0);
}

// ------------------------------------------------------------------------------- gatherv

TEST_P(Data, Gatherv) {
    const int n = cu.size, me = cu.rank;
    int seed = 0;
    size_t k = 0;
    for (size_t base0 : counts()) {
        const size_t base = per_rank(base0, n);
        std::vector<size_t> counts(n), displs;
        for (int r = 0; r < n; ++r) counts[r] = vcount(base, r);
        const size_t len = reverse_layout(counts, 3, displs) + guard;
        for (int root : roots_for(base0))
            for (bool in_place : {false, true})
                for (mode m : modes_for(k++)) {
                    ++seed;
                    std::vector<int> send(counts[me]);
                    for (size_t i = 0; i < counts[me]; ++i) send[i] = dval(seed, me, root, i);
                    std::vector<int> recv(len, sentinel), expected(len, sentinel);
                    for (int r = 0; r < n; ++r)
                        for (size_t i = 0; i < counts[r]; ++i) expected[displs[r] + i] = dval(seed, r, root, i);
                    const void *sbuf = send.data();
                    if (in_place && me == root) {
                        std::copy(send.begin(), send.end(), recv.begin() + displs[me]);
                        sbuf = WEFT_IN_PLACE;
                    }
                    auto w = at("weft_gatherv")("base count", base)("root", root)(m);
                    if (in_place) w << " WEFT_IN_PLACE at root";
                    step(w);
                    if (COLL_RC(gatherv(m, sbuf, counts[me], WEFT_INT, recv.data(), counts.data(), displs.data(),
                                        WEFT_INT, root, cu.c),
                                w) &&
                        me == root) {
                        std::string bad = compare_dvals(recv.data(), expected.data(), len);
                        if (!bad.empty()) COLL_FAIL(w, bad);
                    }
                }
    }
}

// ------------------------------------------------------------------------------- scatter

TEST_P(Data, Scatter) {
    const int n = cu.size, me = cu.rank;
    int seed = 0;
    size_t k = 0;
    for (size_t count0 : counts()) {
        const size_t count = per_rank(count0, n);
        for (int root : roots_for(count0))
            for (bool in_place : {false, true})
                for (mode m : modes_for(k++)) {
                    ++seed;
                    std::vector<int> send(count * n);
                    for (int r = 0; r < n; ++r)
                        for (size_t i = 0; i < count; ++i) send[r * count + i] = dval(seed, root, r, i);
                    const std::vector<int> send_before = send;
                    std::vector<int> recv(count + guard, sentinel), expected(count + guard, sentinel);
                    for (size_t i = 0; i < count; ++i) expected[i] = dval(seed, root, me, i);
                    void *rbuf = recv.data();
                    const bool ip = in_place && me == root;
                    if (ip) rbuf = WEFT_IN_PLACE;
                    auto w = at("weft_scatter")("count", count)("root", root)(m);
                    if (in_place) w << " WEFT_IN_PLACE at root";
                    step(w);
                    if (COLL_RC(scatter(m, send.data(), count, WEFT_INT, rbuf, count, WEFT_INT, root, cu.c), w)) {
                        std::string bad = ip ? compare_dvals(send.data(), send_before.data(), send.size())
                                             : compare_dvals(recv.data(), expected.data(), count + guard);
                        if (!bad.empty()) COLL_FAIL(w, (ip ? "root's send buffer changed: " : "") + bad);
                    }
                }
    }
}

// ------------------------------------------------------------------------------ scatterv

TEST_P(Data, Scatterv) {
    const int n = cu.size, me = cu.rank;
    int seed = 0;
    size_t k = 0;
    for (size_t base0 : counts()) {
        const size_t base = per_rank(base0, n);
        std::vector<size_t> counts(n), displs;
        for (int r = 0; r < n; ++r) counts[r] = vcount(base, r);
        const size_t len = reverse_layout(counts, 3, displs);
        for (int root : roots_for(base0))
            for (bool in_place : {false, true})
                for (mode m : modes_for(k++)) {
                    ++seed;
                    std::vector<int> send(len, sentinel);
                    for (int r = 0; r < n; ++r)
                        for (size_t i = 0; i < counts[r]; ++i) send[displs[r] + i] = dval(seed, root, r, i);
                    const std::vector<int> send_before = send;
                    const size_t mine = counts[me];
                    std::vector<int> recv(mine + guard, sentinel), expected(mine + guard, sentinel);
                    for (size_t i = 0; i < mine; ++i) expected[i] = dval(seed, root, me, i);
                    const bool ip = in_place && me == root;
                    auto w = at("weft_scatterv")("base count", base)("root", root)("my count", mine)(m);
                    if (in_place) w << " WEFT_IN_PLACE at root";
                    step(w);
                    if (COLL_RC(scatterv(m, send.data(), counts.data(), displs.data(), WEFT_INT,
                                         ip ? WEFT_IN_PLACE : recv.data(), mine, WEFT_INT, root, cu.c),
                                w)) {
                        std::string bad = ip ? compare_dvals(send.data(), send_before.data(), send.size())
                                             : compare_dvals(recv.data(), expected.data(), mine + guard);
                        if (!bad.empty()) COLL_FAIL(w, (ip ? "root's send buffer changed: " : "") + bad);
                    }
                }
    }
}

// ----------------------------------------------------------------------------- allgather

TEST_P(Data, Allgather) {
    const int n = cu.size, me = cu.rank;
    int seed = 0;
    size_t k = 0;
    for (size_t count0 : counts()) {
        const size_t count = per_rank(count0, n);
        for (bool in_place : {false, true})
            for (mode m : modes_all(k++)) {
                if (count0 == large_count && m == mode::test && n > 2) continue;  // large: fewer runs
                ++seed;
                std::vector<int> send(count);
                for (size_t i = 0; i < count; ++i) send[i] = dval(seed, me, any_dst, i);
                const size_t len = count * n + guard;
                std::vector<int> recv(len, sentinel), expected(len, sentinel);
                for (int r = 0; r < n; ++r)
                    for (size_t i = 0; i < count; ++i) expected[r * count + i] = dval(seed, r, any_dst, i);
                if (in_place) std::copy(send.begin(), send.end(), recv.begin() + me * count);
                auto w = at("weft_allgather")("count", count)(m);
                if (in_place) w << " WEFT_IN_PLACE";
                step(w);
                if (COLL_RC(allgather(m, in_place ? WEFT_IN_PLACE : send.data(), count, WEFT_INT, recv.data(), count,
                                      WEFT_INT, cu.c),
                            w)) {
                    std::string bad = compare_dvals(recv.data(), expected.data(), len);
                    if (!bad.empty()) COLL_FAIL(w, bad);
                }
            }
    }
    // A contiguous derived type of 5 ints sent, received as ints.
    weft_datatype ct = WEFT_DATATYPE_NULL;
    ASSERT_EQ(weft_type_contiguous(5, WEFT_INT, &ct), 0);
    ASSERT_EQ(weft_type_commit(&ct), 0);
    ++seed;
    std::vector<int> send(10), recv(10 * n + guard, sentinel), expected(10 * n + guard, sentinel);
    for (size_t i = 0; i < 10; ++i) send[i] = dval(seed, me, any_dst, i);
    for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < 10; ++i) expected[r * 10 + i] = dval(seed, r, any_dst, i);
    auto w = at("weft_allgather")("sendtype", "contiguous(5,INT) x2")("recvtype", "INT x10");
    step(w);
    if (COLL_RC(weft_allgather(send.data(), 2, ct, recv.data(), 10, WEFT_INT, cu.c), w)) {
        std::string bad = compare_dvals(recv.data(), expected.data(), recv.size());
        if (!bad.empty()) COLL_FAIL(w, bad);
    }
    EXPECT_EQ(weft_type_free(&ct), 0);
}

// ---------------------------------------------------------------------------- allgatherv

TEST_P(Data, Allgatherv) {
    const int n = cu.size, me = cu.rank;
    int seed = 0;
    size_t k = 0;
    for (size_t base0 : counts()) {
        const size_t base = per_rank(base0, n);
        std::vector<size_t> counts(n), displs;
        for (int r = 0; r < n; ++r) counts[r] = vcount(base, r);
        const size_t len = reverse_layout(counts, 3, displs) + guard;
        for (bool in_place : {false, true})
            for (mode m : modes_all(k++)) {
                if (base0 == large_count && m == mode::test && n > 2) continue;
                ++seed;
                std::vector<int> send(counts[me]);
                for (size_t i = 0; i < counts[me]; ++i) send[i] = dval(seed, me, any_dst, i);
                std::vector<int> recv(len, sentinel), expected(len, sentinel);
                for (int r = 0; r < n; ++r)
                    for (size_t i = 0; i < counts[r]; ++i) expected[displs[r] + i] = dval(seed, r, any_dst, i);
                if (in_place) std::copy(send.begin(), send.end(), recv.begin() + displs[me]);
                auto w = at("weft_allgatherv")("base count", base)(m);
                if (in_place) w << " WEFT_IN_PLACE";
                step(w);
                if (COLL_RC(allgatherv(m, in_place ? WEFT_IN_PLACE : send.data(), counts[me], WEFT_INT, recv.data(),
                                       counts.data(), displs.data(), WEFT_INT, cu.c),
                            w)) {
                    std::string bad = compare_dvals(recv.data(), expected.data(), len);
                    if (!bad.empty()) COLL_FAIL(w, bad);
                }
            }
    }
}

// ------------------------------------------------------------------------------ alltoall

TEST_P(Data, Alltoall) {
    const int n = cu.size, me = cu.rank;
    int seed = 0;
    size_t k = 0;
    for (size_t count0 : counts()) {
        const size_t count = per_rank(count0, n);  // per pair
        for (bool in_place : {false, true})
            for (mode m : modes_all(k++)) {
                if (count0 == large_count && m == mode::test && n > 2) continue;
                ++seed;
                std::vector<int> send(count * n);
                for (int d = 0; d < n; ++d)
                    for (size_t i = 0; i < count; ++i) send[d * count + i] = dval(seed, me, d, i);
                const size_t len = count * n + guard;
                std::vector<int> recv(len, sentinel), expected(len, sentinel);
                for (int s = 0; s < n; ++s)
                    for (size_t i = 0; i < count; ++i) expected[s * count + i] = dval(seed, s, me, i);
                if (in_place) std::copy(send.begin(), send.end(), recv.begin());
                auto w = at("weft_alltoall")("count", count)(m);
                if (in_place) w << " WEFT_IN_PLACE";
                step(w);
                if (COLL_RC(alltoall(m, in_place ? WEFT_IN_PLACE : send.data(), count, WEFT_INT, recv.data(), count,
                                     WEFT_INT, cu.c),
                            w)) {
                    std::string bad = compare_dvals(recv.data(), expected.data(), len);
                    if (!bad.empty()) COLL_FAIL(w, bad);
                }
            }
    }
}

// ----------------------------------------------------------------------------- alltoallv

// Count from rank i to rank j for base b; zero for some pairs.  The in-place form needs
// symmetric counts (what i sends j is what j expects from i, both read from recvcounts).
size_t a2a_count(size_t b, int i, int j, bool symmetric) {
    if (b == 0) return 0;
    if (symmetric) return (i + j) % 4 == 1 ? 0 : b + (i + j) % 5;
    return (i + 2 * j) % 4 == 1 ? 0 : b + (3 * i + j) % 5;
}

TEST_P(Data, Alltoallv) {
    const int n = cu.size, me = cu.rank;
    int seed = 0;
    size_t k = 0;
    for (size_t base0 : counts()) {
        const size_t base = base0 == large_count ? large_count / n : base0;
        for (bool in_place : {false, true})
            for (mode m : modes_all(k++)) {
                if (base0 == large_count && m == mode::test && n > 2) continue;
                ++seed;
                std::vector<size_t> scounts(n), rcounts(n), sdispls, rdispls;
                for (int j = 0; j < n; ++j) {
                    scounts[j] = a2a_count(base, me, j, in_place);
                    rcounts[j] = a2a_count(base, j, me, in_place);
                }
                const size_t slen = reverse_layout(scounts, 2, sdispls);
                const size_t rlen = reverse_layout(rcounts, 3, rdispls) + guard;
                std::vector<int> send(slen, sentinel), recv(rlen, sentinel), expected(rlen, sentinel);
                for (int j = 0; j < n; ++j)
                    for (size_t i = 0; i < scounts[j]; ++i) send[sdispls[j] + i] = dval(seed, me, j, i);
                for (int s = 0; s < n; ++s)
                    for (size_t i = 0; i < rcounts[s]; ++i) expected[rdispls[s] + i] = dval(seed, s, me, i);
                if (in_place)  // the data to send sits where the data received will go
                    for (int j = 0; j < n; ++j)
                        for (size_t i = 0; i < rcounts[j]; ++i) recv[rdispls[j] + i] = dval(seed, me, j, i);
                auto w = at("weft_alltoallv")("base count", base)(m);
                if (in_place) w << " WEFT_IN_PLACE";
                step(w);
                if (COLL_RC(alltoallv(m, in_place ? WEFT_IN_PLACE : send.data(), scounts.data(), sdispls.data(),
                                      WEFT_INT, recv.data(), rcounts.data(), rdispls.data(), WEFT_INT, cu.c),
                            w)) {
                    std::string bad = compare_dvals(recv.data(), expected.data(), rlen);
                    if (!bad.empty()) COLL_FAIL(w, bad);
                }
            }
    }
}

INSTANTIATE_TEST_SUITE_P(Comm, Data, ::testing::ValuesIn(all_kinds), kind_param_name);

}  // namespace
