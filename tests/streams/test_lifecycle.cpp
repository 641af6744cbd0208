// Stream and communicator lifecycle in one process (singleton bootstrap), run with
// WEFT_RESERVED_VCIS=4: endpoints come back to the explicit pool, the pool's limit is reported,
// busy objects refuse to be freed, and stream communicators keep or drop their streams as the
// API says.  Every test frees what it creates, so the pool is full again when the next starts.
#include <vector>

#include "streams_env.hpp"

using namespace streams_test;

namespace {

constexpr int reserved = 4;  // WEFT_RESERVED_VCIS given by ctest

class Lifecycle : public collective_test {
  protected:
    void SetUp() override {
        collective_test::SetUp();
        const char *rv = std::getenv("WEFT_RESERVED_VCIS");
        if (!rv || std::atoi(rv) != reserved)
            GTEST_SKIP() << "run with WEFT_RESERVED_VCIS=" << reserved << " (ctest sets it)";
    }
};

// One message to self through comm, checked.
void self_roundtrip(weft_comm comm, int tag, int value) {
    int r = -1;
    ASSERT_EQ(weft_comm_rank(comm, &r), 0) << detail();
    int in = -1;
    weft_request req = WEFT_REQUEST_NULL;
    weft_status st;
    ASSERT_EQ(weft_irecv(&in, 1, WEFT_INT, r, tag, comm, &req), 0) << detail();
    ASSERT_EQ(weft_send(&value, 1, WEFT_INT, r, tag, comm), 0) << detail();
    ASSERT_EQ(weft_wait(&req, &st), 0) << detail();
    EXPECT_EQ(in, value);
    EXPECT_EQ(st.source, r);
    EXPECT_EQ(st.tag, tag);
}

TEST_F(Lifecycle, CreateFree100TimesLeaksNoEndpoint) {
    for (int i = 0; i < 100; ++i) {
        step("cycle %d", i);
        weft_stream s = WEFT_STREAM_NULL;
        int rc = weft_stream_create(WEFT_INFO_NULL, &s);
        ASSERT_EQ(rc, 0) << "cycle " << i << ": " << err(rc);
        ASSERT_NE(s, WEFT_STREAM_NULL);
        rc = weft_stream_free(&s);
        ASSERT_EQ(rc, 0) << "cycle " << i << ": " << err(rc);
        EXPECT_EQ(s, WEFT_STREAM_NULL) << "weft_stream_free must reset the handle";
    }
    // The whole pool is still there: exactly `reserved` streams at once.
    std::vector<weft_stream> s(reserved, WEFT_STREAM_NULL);
    for (int i = 0; i < reserved; ++i) {
        int rc = weft_stream_create(WEFT_INFO_NULL, &s[i]);
        ASSERT_EQ(rc, 0) << "stream " << i << " of " << reserved << " after 100 cycles: " << err(rc);
    }
    for (int i = 0; i < reserved; ++i)
        for (int j = 0; j < i; ++j) EXPECT_NE(s[i], s[j]) << "two live streams share a handle";
    weft_stream extra = WEFT_STREAM_NULL;
    int rc = weft_stream_create(WEFT_INFO_NULL, &extra);
    EXPECT_EQ(rc, WEFT_ERR_NO_ENDPOINT) << err(rc);
    EXPECT_NE(detail().find("WEFT_RESERVED_VCIS"), std::string::npos) << "detail: " << detail();
    if (rc == 0) weft_stream_free(&extra);
    for (auto &h : s) ASSERT_EQ(weft_stream_free(&h), 0) << detail();
    // And the freed endpoints are usable again.
    rc = weft_stream_create(WEFT_INFO_NULL, &extra);
    ASSERT_EQ(rc, 0) << err(rc);
    ASSERT_EQ(weft_stream_free(&extra), 0);
}

// Streams that are used (a communicator and a message) before being freed also give their
// endpoint back: 100 cycles on a pool of 4.
TEST_F(Lifecycle, CreateUseFree100TimesLeaksNoEndpoint) {
    for (int i = 0; i < 100; ++i) {
        step("cycle %d", i);
        weft_stream s = WEFT_STREAM_NULL;
        weft_comm c = WEFT_COMM_NULL;
        int rc = weft_stream_create(WEFT_INFO_NULL, &s);
        ASSERT_EQ(rc, 0) << "cycle " << i << ": " << err(rc);
        rc = weft_stream_comm_create(WEFT_COMM_WORLD, s, &c);
        ASSERT_EQ(rc, 0) << "cycle " << i << ": " << err(rc);
        self_roundtrip(c, 1, i);
        if (HasFatalFailure()) return;
        ASSERT_EQ(weft_comm_free(&c), 0) << "cycle " << i << ": " << detail();
        EXPECT_EQ(c, WEFT_COMM_NULL);
        ASSERT_EQ(weft_stream_free(&s), 0) << "cycle " << i << ": " << detail();
    }
    std::vector<weft_stream> s(reserved, WEFT_STREAM_NULL);
    for (int i = 0; i < reserved; ++i) ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s[i]), 0) << detail();
    for (auto &h : s) ASSERT_EQ(weft_stream_free(&h), 0) << detail();
}

TEST_F(Lifecycle, SharedEndpointWorksWhenPoolIsExhausted) {
    std::vector<weft_stream> s(reserved, WEFT_STREAM_NULL);
    for (int i = 0; i < reserved; ++i) ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s[i]), 0) << detail();
    weft_stream extra = WEFT_STREAM_NULL;
    EXPECT_EQ(weft_stream_create(WEFT_INFO_NULL, &extra), WEFT_ERR_NO_ENDPOINT);
    // Shared streams do not take from the explicit pool: several of them, all usable.
    weft_stream shared[3] = {WEFT_STREAM_NULL, WEFT_STREAM_NULL, WEFT_STREAM_NULL};
    for (auto &h : shared) {
        int rc = stream_create(&h, /*shared=*/true);
        ASSERT_EQ(rc, 0) << "weft_shared_endpoint=true with the pool exhausted: " << err(rc);
        ASSERT_NE(h, WEFT_STREAM_NULL);
    }
    for (int i = 0; i < 3; ++i) {
        weft_comm c = WEFT_COMM_NULL;
        ASSERT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, shared[i], &c), 0) << detail();
        self_roundtrip(c, 2, 40 + i);
        ASSERT_EQ(weft_comm_free(&c), 0) << detail();
    }
    // An info value other than "true" is not a request for sharing.
    weft_info info;
    ASSERT_EQ(weft_info_create(&info), 0);
    ASSERT_EQ(weft_info_set(info, "weft_shared_endpoint", "false"), 0);
    EXPECT_EQ(weft_stream_create(info, &extra), WEFT_ERR_NO_ENDPOINT);
    weft_info_free(&info);
    for (auto &h : shared) ASSERT_EQ(weft_stream_free(&h), 0) << detail();
    for (auto &h : s) ASSERT_EQ(weft_stream_free(&h), 0) << detail();
}

TEST_F(Lifecycle, FreeOfNullOrInvalidHandle) {
    weft_stream s = WEFT_STREAM_NULL;
    EXPECT_EQ(weft_stream_free(&s), WEFT_ERR_STREAM) << "free(WEFT_STREAM_NULL)";
    EXPECT_EQ(weft_stream_free(nullptr), WEFT_ERR_ARG);
    const weft_stream bad[] = {0x7fffffff, -1, 12345, static_cast<weft_stream>(WEFT_COMM_WORLD),
                               static_cast<weft_stream>(WEFT_INT)};
    for (weft_stream b : bad) {
        weft_stream h = b;
        EXPECT_EQ(weft_stream_free(&h), WEFT_ERR_STREAM) << std::hex << "handle 0x" << b;
        EXPECT_EQ(h, b) << "a refused free must leave the handle unchanged";
        weft_comm c = WEFT_COMM_NULL;
        EXPECT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, b, &c), WEFT_ERR_STREAM) << std::hex << "handle 0x" << b;
        EXPECT_EQ(weft_stream_progress(b), WEFT_ERR_STREAM) << std::hex << "handle 0x" << b;
    }
    // A freed handle is invalid, including a second free.
    ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s), 0) << detail();
    weft_stream copy = s;
    ASSERT_EQ(weft_stream_free(&s), 0);
    EXPECT_EQ(weft_stream_free(&copy), WEFT_ERR_STREAM) << "double free";
    weft_comm c = WEFT_COMM_NULL;
    EXPECT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, copy, &c), WEFT_ERR_STREAM) << "freed stream";
    EXPECT_EQ(weft_stream_create(WEFT_INFO_NULL, nullptr), WEFT_ERR_ARG);
}

TEST_F(Lifecycle, FreeWhileACommunicatorUsesItIsBusy) {
    weft_stream s = WEFT_STREAM_NULL;
    weft_comm c = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s), 0) << detail();
    ASSERT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, s, &c), 0) << detail();
    ASSERT_NE(c, WEFT_COMM_NULL);
    weft_stream h = s;
    int rc = weft_stream_free(&h);
    EXPECT_EQ(rc, WEFT_ERR_BUSY) << err(rc);
    EXPECT_EQ(h, s) << "a refused free must leave the handle unchanged";
    // Still usable.
    self_roundtrip(c, 3, 333);
    weft_stream got = WEFT_STREAM_NULL;
    ASSERT_EQ(weft_comm_get_stream(c, 0, &got), 0) << detail();
    EXPECT_EQ(got, s);
    ASSERT_EQ(weft_comm_free(&c), 0) << detail();
    rc = weft_stream_free(&s);
    EXPECT_EQ(rc, 0) << "after its communicator is freed: " << err(rc);
}

TEST_F(Lifecycle, FreeWhileAReceiveIsPendingIsBusy) {
    weft_stream s = WEFT_STREAM_NULL;
    weft_comm c = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s), 0) << detail();
    ASSERT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, s, &c), 0) << detail();
    int in = -1, out = 77;
    weft_request req = WEFT_REQUEST_NULL;
    ASSERT_EQ(weft_irecv(&in, 1, WEFT_INT, 0, 4, c, &req), 0) << detail();
    int rc = weft_stream_free(&s);
    EXPECT_EQ(rc, WEFT_ERR_BUSY) << "stream free with a pending irecv: " << err(rc);
    rc = weft_comm_free(&c);
    EXPECT_EQ(rc, WEFT_ERR_BUSY) << "comm free with a pending irecv: " << err(rc);
    ASSERT_NE(c, WEFT_COMM_NULL) << "a refused comm free must leave the handle";
    ASSERT_NE(s, WEFT_STREAM_NULL);
    // The stream still refuses while the comm lives, even once the receive is done.
    ASSERT_EQ(weft_send(&out, 1, WEFT_INT, 0, 4, c), 0) << detail();
    ASSERT_EQ(weft_wait(&req, WEFT_STATUS_IGNORE), 0) << detail();
    EXPECT_EQ(in, 77);
    EXPECT_EQ(weft_stream_free(&s), WEFT_ERR_BUSY);
    // A cancelled receive no longer holds anything.
    ASSERT_EQ(weft_irecv(&in, 1, WEFT_INT, 0, 5, c, &req), 0) << detail();
    EXPECT_EQ(weft_comm_free(&c), WEFT_ERR_BUSY);
    ASSERT_EQ(weft_cancel(&req), 0) << detail();
    weft_status st;
    ASSERT_EQ(weft_wait(&req, &st), 0) << detail();
    int cancelled = 0;
    weft_test_cancelled(&st, &cancelled);
    EXPECT_EQ(cancelled, 1);
    ASSERT_EQ(weft_comm_free(&c), 0) << detail();
    ASSERT_EQ(weft_stream_free(&s), 0) << detail();
}

// An isend to self that is not yet matched is a pending operation too.
TEST_F(Lifecycle, FreeWhileASendIsPendingIsBusy) {
    weft_stream s = WEFT_STREAM_NULL;
    weft_comm c = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s), 0) << detail();
    ASSERT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, s, &c), 0) << detail();
    // Large enough that no fabric can complete it before the receive exists.
    std::vector<char> out(8 << 20, 's'), in(8 << 20, 0);
    weft_request req = WEFT_REQUEST_NULL;
    ASSERT_EQ(weft_isend(out.data(), out.size(), WEFT_CHAR, 0, 6, c, &req), 0) << detail();
    int flag = 0;
    ASSERT_EQ(weft_test(&req, &flag, WEFT_STATUS_IGNORE), 0) << detail();
    if (!flag) {
        EXPECT_EQ(weft_comm_free(&c), WEFT_ERR_BUSY) << "comm free with a pending isend";
    }
    ASSERT_EQ(weft_recv(in.data(), in.size(), WEFT_CHAR, 0, 6, c, WEFT_STATUS_IGNORE), 0) << detail();
    if (!flag) {
        ASSERT_EQ(weft_wait(&req, WEFT_STATUS_IGNORE), 0) << detail();
    }
    EXPECT_EQ(in, out);
    ASSERT_EQ(weft_comm_free(&c), 0) << detail();
    ASSERT_EQ(weft_stream_free(&s), 0) << detail();
}

TEST_F(Lifecycle, GetStream) {
    weft_stream s = WEFT_STREAM_NULL, got = 123;
    ASSERT_EQ(weft_comm_get_stream(WEFT_COMM_WORLD, 0, &got), 0) << detail();
    EXPECT_EQ(got, WEFT_STREAM_NULL) << "world has no stream";
    got = 123;
    ASSERT_EQ(weft_comm_get_stream(WEFT_COMM_SELF, 0, &got), 0) << detail();
    EXPECT_EQ(got, WEFT_STREAM_NULL) << "self has no stream";

    ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s), 0) << detail();
    weft_comm c = WEFT_COMM_NULL, n = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, s, &c), 0) << detail();
    ASSERT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, WEFT_STREAM_NULL, &n), 0) << detail();
    got = WEFT_STREAM_NULL;
    ASSERT_EQ(weft_comm_get_stream(c, 0, &got), 0) << detail();
    EXPECT_EQ(got, s);
    got = 123;
    ASSERT_EQ(weft_comm_get_stream(n, 0, &got), 0) << detail();
    EXPECT_EQ(got, WEFT_STREAM_NULL) << "stream communicator made with WEFT_STREAM_NULL";
    self_roundtrip(n, 7, 7);

    // Out of range: an error, no crash.
    for (int idx : {1, 2, 1000, -2, WEFT_ANY_INDEX, -1000000}) {
        got = 123;
        int rc = weft_comm_get_stream(c, idx, &got);
        EXPECT_NE(rc, 0) << "index " << idx << " on a one-stream communicator gave stream " << got;
    }
    EXPECT_EQ(weft_comm_get_stream(c, 0, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_comm_get_stream(WEFT_COMM_NULL, 0, &got), WEFT_ERR_COMM);
    EXPECT_EQ(weft_comm_get_stream(0x10000fff, 0, &got), WEFT_ERR_COMM);

    ASSERT_EQ(weft_comm_free(&n), 0) << detail();
    ASSERT_EQ(weft_comm_free(&c), 0) << detail();
    weft_comm freed = c;
    EXPECT_EQ(weft_comm_get_stream(freed, 0, &got), WEFT_ERR_COMM);
    ASSERT_EQ(weft_stream_free(&s), 0) << detail();
}

TEST_F(Lifecycle, DupOfAStreamCommunicatorKeepsTheStream) {
    weft_stream s = WEFT_STREAM_NULL, got = WEFT_STREAM_NULL;
    weft_comm c = WEFT_COMM_NULL, d = WEFT_COMM_NULL, dd = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s), 0) << detail();
    ASSERT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, s, &c), 0) << detail();
    ASSERT_EQ(weft_comm_dup(c, &d), 0) << detail();
    ASSERT_NE(d, c);
    ASSERT_EQ(weft_comm_get_stream(d, 0, &got), 0) << detail();
    EXPECT_EQ(got, s);
    ASSERT_EQ(weft_comm_dup(d, &dd), 0) << detail();
    got = WEFT_STREAM_NULL;
    ASSERT_EQ(weft_comm_get_stream(dd, 0, &got), 0) << detail();
    EXPECT_EQ(got, s) << "dup of a dup";
    // Contexts are separate: a message on d is not received on c.
    int a = 1, b = 2, x = 0;
    ASSERT_EQ(weft_send(&a, 1, WEFT_INT, 0, 8, d), 0) << detail();
    ASSERT_EQ(weft_send(&b, 1, WEFT_INT, 0, 8, c), 0) << detail();
    ASSERT_EQ(weft_recv(&x, 1, WEFT_INT, 0, 8, c, WEFT_STATUS_IGNORE), 0) << detail();
    EXPECT_EQ(x, 2);
    ASSERT_EQ(weft_recv(&x, 1, WEFT_INT, 0, 8, d, WEFT_STATUS_IGNORE), 0) << detail();
    EXPECT_EQ(x, 1);
    // The dups hold the stream even when the original is gone.
    ASSERT_EQ(weft_comm_free(&c), 0) << detail();
    EXPECT_EQ(weft_stream_free(&s), WEFT_ERR_BUSY) << "dups still use the stream";
    self_roundtrip(d, 9, 9);
    ASSERT_EQ(weft_comm_free(&d), 0) << detail();
    EXPECT_EQ(weft_stream_free(&s), WEFT_ERR_BUSY) << "the dup of the dup still uses the stream";
    ASSERT_EQ(weft_comm_free(&dd), 0) << detail();
    ASSERT_EQ(weft_stream_free(&s), 0) << detail();
}

TEST_F(Lifecycle, StreamCommFromAStreamCommDiscardsTheParentStream) {
    weft_stream s = WEFT_STREAM_NULL, s2 = WEFT_STREAM_NULL, got = 123;
    weft_comm c = WEFT_COMM_NULL, e = WEFT_COMM_NULL, f = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s), 0) << detail();
    ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s2), 0) << detail();
    ASSERT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, s, &c), 0) << detail();
    ASSERT_EQ(weft_stream_comm_create(c, WEFT_STREAM_NULL, &e), 0) << detail();
    ASSERT_EQ(weft_comm_get_stream(e, 0, &got), 0) << detail();
    EXPECT_EQ(got, WEFT_STREAM_NULL) << "child made with WEFT_STREAM_NULL kept the parent's stream";
    ASSERT_EQ(weft_stream_comm_create(c, s2, &f), 0) << detail();
    got = WEFT_STREAM_NULL;
    ASSERT_EQ(weft_comm_get_stream(f, 0, &got), 0) << detail();
    EXPECT_EQ(got, s2);
    self_roundtrip(e, 10, 10);
    self_roundtrip(f, 11, 11);
    // e and f do not use s: once c is gone, s can be freed while they live.
    ASSERT_EQ(weft_comm_free(&c), 0) << detail();
    int rc = weft_stream_free(&s);
    EXPECT_EQ(rc, 0) << "parent's stream still held by a child that discarded it: " << err(rc);
    EXPECT_EQ(weft_stream_free(&s2), WEFT_ERR_BUSY) << "f uses s2";
    self_roundtrip(e, 12, 12);
    ASSERT_EQ(weft_comm_free(&e), 0) << detail();
    ASSERT_EQ(weft_comm_free(&f), 0) << detail();
    ASSERT_EQ(weft_stream_free(&s2), 0) << detail();
    if (s != WEFT_STREAM_NULL) weft_stream_free(&s);
}

TEST_F(Lifecycle, CommFreeWithAPendingReceiveIsBusy) {
    weft_comm d = WEFT_COMM_NULL;
    ASSERT_EQ(weft_comm_dup(WEFT_COMM_WORLD, &d), 0) << detail();
    int in = -1, out = 5;
    weft_request req = WEFT_REQUEST_NULL;
    ASSERT_EQ(weft_irecv(&in, 1, WEFT_INT, WEFT_ANY_SOURCE, WEFT_ANY_TAG, d, &req), 0) << detail();
    weft_comm h = d;
    int rc = weft_comm_free(&h);
    EXPECT_EQ(rc, WEFT_ERR_BUSY) << err(rc);
    EXPECT_EQ(h, d) << "a refused free must leave the handle unchanged";
    ASSERT_EQ(weft_send(&out, 1, WEFT_INT, 0, 1, d), 0) << detail();
    ASSERT_EQ(weft_wait(&req, WEFT_STATUS_IGNORE), 0) << detail();
    EXPECT_EQ(in, 5);
    ASSERT_EQ(weft_comm_free(&d), 0) << detail();
    EXPECT_EQ(d, WEFT_COMM_NULL);
    // Predefined communicators are not freed.
    weft_comm w = WEFT_COMM_WORLD;
    EXPECT_NE(weft_comm_free(&w), 0) << "freeing WEFT_COMM_WORLD";
    weft_comm nul = WEFT_COMM_NULL;
    EXPECT_EQ(weft_comm_free(&nul), WEFT_ERR_COMM);
    EXPECT_EQ(weft_comm_free(nullptr), WEFT_ERR_ARG);
    int sz = 0;
    ASSERT_EQ(weft_comm_size(WEFT_COMM_WORLD, &sz), 0) << "world still works";
}

TEST_F(Lifecycle, Split) {
    int r = world_rank();
    weft_comm c = WEFT_COMM_NULL;
    ASSERT_EQ(weft_comm_split(WEFT_COMM_WORLD, r % 2, 0, &c), 0) << detail();
    ASSERT_NE(c, WEFT_COMM_NULL);
    int cr = -1, cs = -1;
    ASSERT_EQ(weft_comm_rank(c, &cr), 0);
    ASSERT_EQ(weft_comm_size(c, &cs), 0);
    EXPECT_EQ(cr, 0);
    EXPECT_EQ(cs, 1);
    self_roundtrip(c, 13, 13);
    ASSERT_EQ(weft_comm_free(&c), 0) << detail();

    c = 123;
    ASSERT_EQ(weft_comm_split(WEFT_COMM_WORLD, static_cast<int>(WEFT_UNDEFINED), 0, &c), 0) << detail();
    EXPECT_EQ(c, WEFT_COMM_NULL) << "color WEFT_UNDEFINED";

    // Split of a stream communicator, and of a split.
    weft_stream s = WEFT_STREAM_NULL;
    weft_comm sc = WEFT_COMM_NULL, sub = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s), 0) << detail();
    ASSERT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, s, &sc), 0) << detail();
    ASSERT_EQ(weft_comm_split(sc, 0, 0, &sub), 0) << detail();
    self_roundtrip(sub, 14, 14);
    weft_comm sub2 = 123;
    ASSERT_EQ(weft_comm_split(sub, static_cast<int>(WEFT_UNDEFINED), 0, &sub2), 0) << detail();
    EXPECT_EQ(sub2, WEFT_COMM_NULL);
    ASSERT_EQ(weft_comm_free(&sub), 0) << detail();
    ASSERT_EQ(weft_comm_free(&sc), 0) << detail();
    ASSERT_EQ(weft_stream_free(&s), 0) << detail();

    EXPECT_EQ(weft_comm_split(WEFT_COMM_NULL, 0, 0, &c), WEFT_ERR_COMM);
    EXPECT_EQ(weft_comm_split(WEFT_COMM_WORLD, 0, 0, nullptr), WEFT_ERR_ARG);
}

// Multiplex communicators in one process: indices, busy streams, bad arguments.
TEST_F(Lifecycle, MultiplexInOneProcess) {
    weft_stream s[3] = {};
    for (auto &h : s) ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &h), 0) << detail();
    weft_comm m = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, 3, s, &m), 0) << detail();
    for (int i = 0; i < 3; ++i) {
        weft_stream got = WEFT_STREAM_NULL;
        ASSERT_EQ(weft_comm_get_stream(m, i, &got), 0) << detail();
        EXPECT_EQ(got, s[i]) << "index " << i;
    }
    weft_stream got = 123;
    EXPECT_NE(weft_comm_get_stream(m, 3, &got), 0) << "index 3 of 3";
    for (auto &h : s) {
        weft_stream copy = h;
        EXPECT_EQ(weft_stream_free(&copy), WEFT_ERR_BUSY) << "used by a multiplex communicator";
    }
    ASSERT_EQ(weft_comm_free(&m), 0) << detail();
    for (auto &h : s) ASSERT_EQ(weft_stream_free(&h), 0) << detail();
    EXPECT_EQ(weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, 2, nullptr, &m), WEFT_ERR_ARG);
    weft_stream bad[1] = {0x7fffffff};
    EXPECT_EQ(weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, 1, bad, &m), WEFT_ERR_STREAM);
}

// The next two run last: a hang in them (the watchdog reports it) hides no other result.
// One thread owning several streams uses them one after the other: serial use of each.

// Sizes for messages between local streams: eager and (on every fabric here) rendezvous.
constexpr size_t self_sizes[] = {4, 256 << 10};

// Every local index to every other through one multiplex communicator, both operations
// nonblocking and completed by one waitall (which must progress both endpoints).
TEST_F(Lifecycle, ZZ_MultiplexToSelfNonblocking) {
    weft_stream s[3] = {};
    for (auto &h : s) ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &h), 0) << detail();
    weft_comm m = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, 3, s, &m), 0) << detail();
    for (size_t n : self_sizes)
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                step("%zu bytes from index %d to index %d: waitall(irecv at %d, isend from %d)", n, i, j, j, i);
                std::vector<unsigned char> out(n), in(n, 0);
                for (size_t k = 0; k < n; ++k) out[k] = pattern(0, i, j, k);
                weft_request req[2];
                weft_status st[2];
                ASSERT_EQ(weft_stream_irecv(in.data(), n, WEFT_BYTE, 0, 15, m, i, j, &req[0]), 0) << detail();
                ASSERT_EQ(weft_stream_isend(out.data(), n, WEFT_BYTE, 0, 15, m, i, j, &req[1]), 0) << detail();
                ASSERT_EQ(weft_waitall(2, req, st), 0) << detail();
                EXPECT_EQ(in, out) << n << " bytes " << i << "->" << j;
                EXPECT_EQ(st[0].stream_index, i);
            }
    ASSERT_EQ(weft_comm_free(&m), 0) << detail();
    for (auto &h : s) ASSERT_EQ(weft_stream_free(&h), 0) << detail();
}

}  // namespace

STREAMS_TEST_MAIN("weft-test-streams-lifecycle", WEFT_THREAD_SINGLE)
