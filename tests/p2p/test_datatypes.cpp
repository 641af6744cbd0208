// Derived datatypes across processes: each rank sends to the next and receives from the
// previous one in a layout of its own with the same type signature (struct vs struct of
// another order and padding, subarray vs indexed, ...), at sizes on both sides of the
// fabric's eager/rendezvous threshold and of the iovec limit (WEFT_IOV_MAX, 1024 runs), on conventional,
// stream and multiplex communicators.  What arrived is checked against the reference model
// (tests/common/dtype_ref.hpp), holes included.  Then reductions on a vector of doubles,
// weft_pack/weft_unpack, element counts and misuse.
#include <cstring>
#include <numeric>
#include <vector>

#include "dtype_ref.hpp"
#include "error_detail.hpp"
#include "p2p_env.hpp"
#include "weft/weft.h"

using namespace p2p_test;
using dtref::kind;
using dtref::node;
using dtref::node_ptr;
using harness::detail;

namespace {

node_ptr leaf(weft_datatype t) {
    auto n = std::make_shared<node>();
    for (size_t i = 0; i < dtref::builtins().size(); ++i)
        if (dtref::builtins()[i].handle == t) n->builtin = static_cast<int>(i);
    return n;
}
node_ptr structure(std::vector<size_t> bl, std::vector<ptrdiff_t> displs, std::vector<node_ptr> kids) {
    auto n = std::make_shared<node>();
    n->k = kind::structure;
    n->blocklens = std::move(bl);
    n->displs = std::move(displs);
    n->children = std::move(kids);
    return n;
}
node_ptr resized(node_ptr c, ptrdiff_t lb, ptrdiff_t extent) {
    auto n = std::make_shared<node>();
    n->k = kind::resized;
    n->lb = lb;
    n->extent = extent;
    n->children = {std::move(c)};
    return n;
}
node_ptr subarray(std::vector<size_t> sizes, std::vector<size_t> subs, std::vector<size_t> starts, int order,
                  node_ptr c) {
    auto n = std::make_shared<node>();
    n->k = kind::subarray;
    n->sizes = std::move(sizes);
    n->subsizes = std::move(subs);
    n->starts = std::move(starts);
    n->order = order;
    n->children = {std::move(c)};
    return n;
}
node_ptr indexed(std::vector<size_t> bl, std::vector<ptrdiff_t> displs, node_ptr c) {
    auto n = std::make_shared<node>();
    n->k = kind::indexed;
    n->blocklens = std::move(bl);
    n->displs = std::move(displs);
    n->children = {std::move(c)};
    return n;
}
node_ptr vec(size_t count, size_t bl, ptrdiff_t stride, node_ptr c) {
    auto n = std::make_shared<node>();
    n->k = kind::vector;
    n->count = count;
    n->blocklen = bl;
    n->stride = stride;
    n->children = {std::move(c)};
    return n;
}

// {int a; double b[3]; short c} as the sender lays it out (48-byte elements) ...
node_ptr sender_struct() {
    return resized(structure({1, 3, 1}, {0, 8, 32}, {leaf(WEFT_INT), leaf(WEFT_DOUBLE), leaf(WEFT_SHORT)}), 0, 48);
}
// ... and as the receiver does: {short c; int a; double b[3]} packed into 36 bytes, fields
// listed in the sender's order.
node_ptr receiver_struct() {
    return resized(structure({1, 3, 1}, {4, 10, 0}, {leaf(WEFT_INT), leaf(WEFT_DOUBLE), leaf(WEFT_SHORT)}), 0, 36);
}

// rows x cols ints at (r0, c0) of a 2D array, and the same ints as an indexed type of rows
// blocks, each cols long, at staggered displacements.
node_ptr sub_ints(size_t rows, size_t cols, int order) {
    return subarray({rows + 7, cols + 5}, {rows, cols}, {3, 2}, order, leaf(WEFT_INT));
}
node_ptr staggered_ints(size_t rows, size_t cols) {
    std::vector<size_t> bl(rows, cols);
    std::vector<ptrdiff_t> d(rows);
    for (size_t i = 0; i < rows; ++i) d[i] = static_cast<ptrdiff_t>(i * (cols + 3) + i % 3);
    return indexed(std::move(bl), std::move(d), leaf(WEFT_INT));
}

struct pairing {
    const char *name;
    node_ptr send, recv;
    size_t count;  // elements of each side's type (a built-in side: as many as the other's basic elements)
};

std::vector<pairing> pairings() {
    return {
        // 30 bytes of data per element: 3 runs each (the sender's int and doubles are not adjacent).
        {"struct x1", sender_struct(), receiver_struct(), 1},
        {"struct x10 (iovec)", sender_struct(), receiver_struct(), 10},
        {"struct x1000 (rendezvous, 3000 runs: packed)", sender_struct(), receiver_struct(), 1000},
        {"struct x8000 (240 KB, packed)", sender_struct(), receiver_struct(), 8000},
        {"subarray C / indexed (iovec)", sub_ints(20, 40, WEFT_ORDER_C), staggered_ints(20, 40), 1},
        {"subarray Fortran / indexed", sub_ints(20, 40, WEFT_ORDER_FORTRAN), staggered_ints(40, 20), 1},
        {"subarray C / indexed (rendezvous, iovec)", sub_ints(32, 1024, WEFT_ORDER_C), staggered_ints(32, 1024), 1},
        {"subarray 200 rows / indexed (iovec)", sub_ints(200, 100, WEFT_ORDER_C), staggered_ints(200, 100), 1},
        {"subarray 2000 rows / indexed (packed)", sub_ints(2000, 10, WEFT_ORDER_C), staggered_ints(2000, 10), 1},
        {"vector / contiguous ints", vec(5000, 3, 4, leaf(WEFT_INT)), leaf(WEFT_INT), 1},
        {"ints / vector with negative stride", leaf(WEFT_INT), vec(64, 2, -3, leaf(WEFT_INT)), 2},
    };
}

// A buffer with room for count elements of l, its origin inside it.
struct buffer {
    std::vector<unsigned char> bytes;
    ptrdiff_t origin = 0;
    buffer(const dtref::layout &l, size_t count, unsigned seed) {
        ptrdiff_t lo, hi;
        dtref::span(l, count, lo, hi);
        origin = 8 - std::min<ptrdiff_t>(lo, 0);
        bytes.resize(static_cast<size_t>(origin + std::max<ptrdiff_t>(hi, 0) + 8));
        for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>((i * 131 + seed * 71) >> 3);
    }
    unsigned char *at() { return bytes.data() + origin; }
};

// The communicator a case runs on: WEFT_COMM_WORLD, a stream communicator, or a multiplex
// communicator with one stream per process.
enum class comm_kind { world, stream, multiplex };

struct comm_under_test {
    comm_kind k;
    weft_stream s = WEFT_STREAM_NULL;
    weft_comm c = WEFT_COMM_WORLD;
    explicit comm_under_test(comm_kind kind) : k(kind) {
        if (k == comm_kind::world) return;
        EXPECT_EQ(weft_stream_create(WEFT_INFO_NULL, &s), 0) << detail();
        int rc = k == comm_kind::stream ? weft_stream_comm_create(WEFT_COMM_WORLD, s, &c)
                                        : weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, 1, &s, &c);
        EXPECT_EQ(rc, 0) << detail();
    }
    ~comm_under_test() {
        if (k == comm_kind::world) return;
        EXPECT_EQ(weft_comm_free(&c), 0) << detail();
        EXPECT_EQ(weft_stream_free(&s), 0) << detail();
    }
    int isend(const void *b, size_t n, weft_datatype t, int to, int tag, weft_request *r) {
        return k == comm_kind::multiplex ? weft_stream_isend(b, n, t, to, tag, c, 0, 0, r)
                                         : weft_isend(b, n, t, to, tag, c, r);
    }
    int irecv(void *b, size_t n, weft_datatype t, int from, int tag, weft_request *r) {
        return k == comm_kind::multiplex ? weft_stream_irecv(b, n, t, from, tag, c, 0, 0, r)
                                         : weft_irecv(b, n, t, from, tag, c, r);
    }
    int send(const void *b, size_t n, weft_datatype t, int to, int tag) {
        return k == comm_kind::multiplex ? weft_stream_send(b, n, t, to, tag, c, 0, 0) : weft_send(b, n, t, to, tag, c);
    }
    int recv(void *b, size_t n, weft_datatype t, int from, int tag, weft_status *st) {
        return k == comm_kind::multiplex ? weft_stream_recv(b, n, t, from, tag, c, 0, 0, st)
                                         : weft_recv(b, n, t, from, tag, c, st);
    }
};

class Datatypes : public collective_test, public ::testing::WithParamInterface<comm_kind> {};

TEST_P(Datatypes, CompatibleLayoutsExchange) {
    comm_under_test cu(GetParam());
    ASSERT_FALSE(HasFailure());
    int me = world_rank(), n = world_size(), next = (me + 1) % n, prev = (me + n - 1) % n;
    int tag = 0;
    for (const pairing &p : pairings()) {
        for (bool blocking : {false, true}) {
            SCOPED_TRACE(std::string(p.name) + (blocking ? " blocking" : " nonblocking"));
            // Every rank both sends p.send and receives p.recv.
            dtref::layout ls = dtref::expand(*p.send), lr = dtref::expand(*p.recv);
            size_t send_count = p.count, recv_count = p.count;
            if (p.send->k == kind::builtin) send_count = lr.map.size() * p.count;  // ints vs a vector of ints
            if (p.recv->k == kind::builtin) recv_count = ls.map.size() * p.count;
            weft_datatype ts = dtref::build(*p.send), tr = dtref::build(*p.recv);
            ASSERT_NE(ts, WEFT_DATATYPE_NULL);
            ASSERT_NE(tr, WEFT_DATATYPE_NULL);
            if (p.send->k != kind::builtin) {
                ASSERT_EQ(weft_type_commit(&ts), 0);
            }
            if (p.recv->k != kind::builtin) {
                ASSERT_EQ(weft_type_commit(&tr), 0);
            }
            buffer out(ls, send_count, static_cast<unsigned>(me)), in(lr, recv_count, 99);
            buffer expect = in;
            buffer theirs(ls, send_count, static_cast<unsigned>(prev));
            std::vector<unsigned char> stream = dtref::pack(ls, theirs.at(), send_count);
            dtref::unpack(lr, stream.data(), stream.size(), expect.at(), recv_count);
            weft_status st{};
            if (blocking) {
                // Ranks alternate send-first / receive-first (eager or not, no deadlock for n >= 2).
                if (me % 2 == 0) {
                    ASSERT_EQ(cu.send(out.at(), send_count, ts, next, tag), 0) << detail();
                    ASSERT_EQ(cu.recv(in.at(), recv_count, tr, prev, tag, &st), 0) << detail();
                } else {
                    ASSERT_EQ(cu.recv(in.at(), recv_count, tr, prev, tag, &st), 0) << detail();
                    ASSERT_EQ(cu.send(out.at(), send_count, ts, next, tag), 0) << detail();
                }
            } else {
                weft_request r[2];
                ASSERT_EQ(cu.irecv(in.at(), recv_count, tr, prev, tag, &r[0]), 0) << detail();
                ASSERT_EQ(cu.isend(out.at(), send_count, ts, next, tag, &r[1]), 0) << detail();
                // The pending operations hold their types.
                if (p.send->k != kind::builtin) {
                    ASSERT_EQ(weft_type_free(&ts), 0);
                }
                if (p.recv->k != kind::builtin) {
                    ASSERT_EQ(weft_type_free(&tr), 0);
                }
                weft_status sts[2];
                ASSERT_EQ(weft_waitall(2, r, sts), 0) << detail();
                st = sts[0];
            }
            EXPECT_TRUE(in.bytes == expect.bytes) << "received data or holes differ from the reference";
            size_t elems = 0;
            if (tr != WEFT_DATATYPE_NULL) {
                ASSERT_EQ(weft_get_elements(&st, tr, &elems), 0);
                EXPECT_EQ(elems, lr.map.size() * recv_count);
                size_t cnt = 0;
                ASSERT_EQ(weft_get_count(&st, tr, &cnt), 0);
                EXPECT_EQ(cnt, recv_count);
            }
            if (p.send->k != kind::builtin && ts != WEFT_DATATYPE_NULL) weft_type_free(&ts);
            if (p.recv->k != kind::builtin && tr != WEFT_DATATYPE_NULL) weft_type_free(&tr);
            ++tag;
        }
    }
}

TEST_P(Datatypes, ShortMessageIntoDerivedType) {
    // 4 ints into room for 2 structs {int; double[3]; short} laid out as the receiver's: the
    // first element's int lands, then its first double and half the second: get_elements and
    // get_count are undefined (the message ends inside a double).
    comm_under_test cu(GetParam());
    int me = world_rank(), n = world_size(), next = (me + 1) % n, prev = (me + n - 1) % n;
    weft_datatype tr = dtref::build(*receiver_struct());
    ASSERT_EQ(weft_type_commit(&tr), 0);
    std::vector<int> out{me, 2, 3, 4, 5};
    std::vector<unsigned char> in(2 * 36, 0xAB);
    weft_request r;
    weft_status st;
    ASSERT_EQ(cu.irecv(in.data(), 2, tr, prev, 77, &r), 0) << detail();
    ASSERT_EQ(cu.send(out.data(), 4, WEFT_INT, next, 77), 0) << detail();
    ASSERT_EQ(weft_wait(&r, &st), 0) << detail();
    int a;
    std::memcpy(&a, in.data() + 4, sizeof a);
    EXPECT_EQ(a, prev);
    EXPECT_EQ(in[0], 0xAB);  // the short was not reached
    size_t elems = 0, cnt = 0;
    ASSERT_EQ(weft_get_elements(&st, tr, &elems), 0);
    EXPECT_EQ(elems, WEFT_UNDEFINED);  // 16 bytes: the int, a double and half of one
    weft_get_count(&st, tr, &cnt);
    EXPECT_EQ(cnt, WEFT_UNDEFINED);
    weft_type_free(&tr);
}

INSTANTIATE_TEST_SUITE_P(Comms, Datatypes, ::testing::Values(comm_kind::world, comm_kind::stream, comm_kind::multiplex),
                         [](const ::testing::TestParamInfo<comm_kind> &p) {
                             return p.param == comm_kind::world ? "world"
                                 : p.param == comm_kind::stream ? "stream"
                                                                : "multiplex";
                         });

class DatatypesWorld : public collective_test {};

TEST_F(DatatypesWorld, AllreduceSumOnVectorOfDoubles) {
    // Every other double of 2 x 1000 (a derived type of one basic type), summed over ranks.
    int n = world_size(), me = world_rank();
    weft_datatype v;
    ASSERT_EQ(weft_type_vector(1000, 1, 2, WEFT_DOUBLE, &v), 0);
    ASSERT_EQ(weft_type_commit(&v), 0);
    for (size_t count : {size_t{1}, size_t{3}}) {
        std::vector<double> in(2000 * count), out(2000 * count, -1.0);
        for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<double>(i) + me;
        ASSERT_EQ(weft_allreduce(in.data(), out.data(), count, v, WEFT_SUM, WEFT_COMM_WORLD), 0) << detail();
        double ranks = n * (n - 1) / 2.0;
        for (size_t i = 0; i < out.size(); ++i) {
            // The vector's extent is 1999 doubles: element e starts at 1999 e.
            size_t e = i / 1999, off = i % 1999;
            bool in_type = e < count && off % 2 == 0;
            if (in_type)
                ASSERT_EQ(out[i], n * static_cast<double>(i) + ranks) << "double " << i;
            else
                ASSERT_EQ(out[i], -1.0) << "hole " << i << " was written";
        }
        // In place, and reduce to a root.
        std::vector<double> inplace = in;
        ASSERT_EQ(weft_allreduce(WEFT_IN_PLACE, inplace.data(), count, v, WEFT_SUM, WEFT_COMM_WORLD), 0) << detail();
        for (size_t e = 0; e < count; ++e)
            for (size_t k = 0; k < 1000; ++k) {
                size_t i = e * 1999 + 2 * k;
                ASSERT_EQ(inplace[i], n * static_cast<double>(i) + ranks);
                if (k + 1 < 1000) {
                    ASSERT_EQ(inplace[i + 1], in[i + 1]);  // holes keep the caller's data
                }
            }
        std::vector<double> scan(2000 * count, -1.0);
        ASSERT_EQ(weft_scan(in.data(), scan.data(), count, v, WEFT_SUM, WEFT_COMM_WORLD), 0) << detail();
        EXPECT_EQ(scan[2], (me + 1) * 2.0 + me * (me + 1) / 2.0);  // ranks 0..me
        EXPECT_EQ(scan[1], -1.0);
        std::vector<double> root(2000 * count, -1.0);
        ASSERT_EQ(weft_reduce(in.data(), root.data(), count, v, WEFT_MAX, 0, WEFT_COMM_WORLD), 0) << detail();
        if (me == 0) {
            EXPECT_EQ(root[2], 2.0 + (n - 1));
        }
    }
    // A type of two basic types has no predefined reduction.
    weft_datatype mixed;
    size_t bl[] = {1, 1};
    ptrdiff_t d[] = {0, 8};
    weft_datatype types[] = {WEFT_DOUBLE, WEFT_INT};
    ASSERT_EQ(weft_type_create_struct(2, bl, d, types, &mixed), 0);
    ASSERT_EQ(weft_type_commit(&mixed), 0);
    char buf[32] = {}, res[32];
    EXPECT_EQ(weft_allreduce(buf, res, 1, mixed, WEFT_SUM, WEFT_COMM_WORLD), WEFT_ERR_OP);
    weft_type_free(&mixed);
    weft_type_free(&v);
}

TEST_F(DatatypesWorld, PackUnpackRoundTrip) {
    weft_datatype t = dtref::build(*sender_struct());
    ASSERT_EQ(weft_type_commit(&t), 0);
    dtref::layout l = dtref::expand(*sender_struct());
    buffer src(l, 4, 5), dst(l, 4, 6);
    size_t need = 0;
    ASSERT_EQ(weft_pack_size(4, t, WEFT_COMM_WORLD, &need), 0);
    EXPECT_EQ(need, 4 * 30u);
    std::vector<unsigned char> packed(need + 8);
    size_t pos = 8;  // after a header of the caller's
    ASSERT_EQ(weft_pack(src.at(), 4, t, packed.data(), packed.size(), &pos, WEFT_COMM_WORLD), 0) << detail();
    EXPECT_EQ(pos, need + 8);
    std::vector<unsigned char> ref = dtref::pack(l, src.at(), 4);
    EXPECT_TRUE(std::equal(ref.begin(), ref.end(), packed.begin() + 8));
    size_t full = pos;
    EXPECT_EQ(weft_pack(src.at(), 1, t, packed.data(), packed.size(), &pos, WEFT_COMM_WORLD), WEFT_ERR_TRUNCATE);
    EXPECT_EQ(pos, full);
    pos = 8;
    ASSERT_EQ(weft_unpack(packed.data(), packed.size(), &pos, dst.at(), 4, t, WEFT_COMM_WORLD), 0) << detail();
    EXPECT_EQ(pos, full);
    EXPECT_EQ(dtref::pack(l, dst.at(), 4), ref);
    pos = 9;
    EXPECT_EQ(weft_unpack(packed.data(), packed.size(), &pos, dst.at(), 4, t, WEFT_COMM_WORLD), WEFT_ERR_TRUNCATE);
    EXPECT_EQ(weft_pack(src.at(), 1, t, packed.data(), packed.size(), nullptr, WEFT_COMM_WORLD), WEFT_ERR_ARG);
    EXPECT_EQ(weft_pack(src.at(), 1, t, packed.data(), packed.size(), &pos, 12345), WEFT_ERR_COMM);
    EXPECT_EQ(weft_pack_size(SIZE_MAX, t, WEFT_COMM_WORLD, &need), WEFT_ERR_COUNT);
    weft_type_free(&t);
}

TEST_F(DatatypesWorld, Misuse) {
    int me = world_rank(), n = world_size();
    weft_datatype t;
    ASSERT_EQ(weft_type_vector(4, 1, 2, WEFT_INT, &t), 0);  // not committed
    int buf[8] = {};
    weft_request r;
    EXPECT_EQ(weft_send(buf, 1, t, (me + 1) % n, 0, WEFT_COMM_WORLD), WEFT_ERR_TYPE);
    EXPECT_EQ(weft_isend(buf, 1, t, (me + 1) % n, 0, WEFT_COMM_WORLD, &r), WEFT_ERR_TYPE);
    EXPECT_EQ(weft_irecv(buf, 1, t, (me + 1) % n, 0, WEFT_COMM_WORLD, &r), WEFT_ERR_TYPE);
    size_t pos = 0;
    EXPECT_EQ(weft_pack(buf, 1, t, buf, sizeof buf, &pos, WEFT_COMM_WORLD), WEFT_ERR_TYPE);
    weft_datatype predefined = WEFT_DOUBLE;
    EXPECT_EQ(weft_type_free(&predefined), WEFT_ERR_TYPE);
    EXPECT_EQ(predefined, WEFT_DOUBLE);
    // A send whose size overflows.
    ASSERT_EQ(weft_type_commit(&t), 0);
    EXPECT_EQ(weft_send(buf, SIZE_MAX / 8, t, (me + 1) % n, 0, WEFT_COMM_WORLD), WEFT_ERR_COUNT);
    weft_type_free(&t);
}

}  // namespace

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    ::testing::AddGlobalTestEnvironment(new p2p_test::environment);
    return RUN_ALL_TESTS();
}
