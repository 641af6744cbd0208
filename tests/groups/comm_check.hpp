// Parents of every kind (WEFT_COMM_WORLD, a stream communicator, a multiplex communicator with two
// streams per process) and the checks run on a communicator made from one: its members and
// ranks, the streams it kept, an allreduce and a ring of messages on it.
#pragma once
#include <numeric>
#include <string>
#include <vector>

#include "groups_env.hpp"

namespace groups_test {

enum class parent_kind { world, stream, multiplex };
inline const char *kind_name(parent_kind k) {
    switch (k) {
        case parent_kind::world: return "world";
        case parent_kind::stream: return "stream";
        case parent_kind::multiplex: return "multiplex";
    }
    return "?";
}
inline std::string kind_param_name(const ::testing::TestParamInfo<parent_kind> &info) { return kind_name(info.param); }

struct parent_comm {
    parent_kind k = parent_kind::world;
    weft_comm c = WEFT_COMM_WORLD;
    std::vector<weft_stream> streams;

    int create(parent_kind kind) {
        k = kind;
        if (k == parent_kind::world) return 0;
        streams.assign(k == parent_kind::multiplex ? 2 : 1, WEFT_STREAM_NULL);
        for (weft_stream &s : streams)
            if (int rc = weft_stream_create(WEFT_INFO_NULL, &s)) return rc;
        if (k == parent_kind::stream) return weft_stream_comm_create(WEFT_COMM_WORLD, streams[0], &c);
        return weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, streams.size(), streams.data(), &c);
    }
    int destroy() {
        int rc = 0;
        if (c != WEFT_COMM_WORLD && c != WEFT_COMM_NULL) rc = weft_comm_free(&c);
        for (weft_stream &s : streams)
            if (s != WEFT_STREAM_NULL) {
                int rc2 = weft_stream_free(&s);
                if (rc == 0) rc = rc2;
            }
        streams.clear();
        return rc;
    }
};

// A test run once per parent kind, with the parent made before and freed after.
class parent_test : public harness::collective_test<::testing::TestWithParam<parent_kind>> {
  protected:
    parent_comm parent;
    void SetUp() override {
        harness::collective_test<::testing::TestWithParam<parent_kind>>::SetUp();
        if (world_size() != 4) GTEST_SKIP() << "written for 4 processes";
        int rc = parent.create(GetParam());
        ASSERT_EQ(rc, 0) << "creating the " << kind_name(GetParam()) << " parent: " << err(rc);
    }
    void TearDown() override {
        int rc = parent.destroy();
        EXPECT_EQ(rc, 0) << "freeing the parent: " << err(rc);
        harness::collective_test<::testing::TestWithParam<parent_kind>>::TearDown();
    }
};

// Checks c, made from parent, over world ranks m (in rank order): members, rank, streams kept,
// an allreduce and a ring of point-to-point messages (on a multiplex communicator from stream
// index 1 to stream index 1).  Collective over c's members.
inline void check_comm(weft_comm c, const std::vector<int> &m, const parent_comm &parent, const std::string &what) {
    SCOPED_TRACE(what);
    ASSERT_NE(c, WEFT_COMM_NULL);
    EXPECT_EQ(comm_members(c), m);
    int rank = -1, size = -1;
    ASSERT_EQ(weft_comm_rank(c, &rank), 0);
    ASSERT_EQ(weft_comm_size(c, &size), 0);
    ASSERT_EQ(size, static_cast<int>(m.size()));
    ASSERT_TRUE(rank >= 0 && rank < size);
    EXPECT_EQ(m[static_cast<size_t>(rank)], world_rank());
    for (size_t i = 0; i < parent.streams.size(); ++i) {
        weft_stream s = WEFT_STREAM_NULL;
        ASSERT_EQ(weft_comm_get_stream(c, static_cast<int>(i), &s), 0);
        EXPECT_EQ(s, parent.streams[i]) << "stream index " << i << " not kept";
    }
    int mine = world_rank(), sum = -1;
    int rc = weft_allreduce(&mine, &sum, 1, WEFT_INT, WEFT_SUM, c);
    ASSERT_EQ(rc, 0) << err(rc);
    EXPECT_EQ(sum, std::accumulate(m.begin(), m.end(), 0));
    if (size == 1) return;
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size, tag = 11;
    int out = world_rank() * 100 + 7, in = -1;
    weft_request r = WEFT_REQUEST_NULL;
    if (parent.k == parent_kind::multiplex) {
        ASSERT_EQ(weft_stream_isend(&out, 1, WEFT_INT, next, tag, c, 1, 1, &r), 0);
        ASSERT_EQ(weft_stream_recv(&in, 1, WEFT_INT, prev, tag, c, 1, 1, WEFT_STATUS_IGNORE), 0);
    } else {
        ASSERT_EQ(weft_isend(&out, 1, WEFT_INT, next, tag, c, &r), 0);
        ASSERT_EQ(weft_recv(&in, 1, WEFT_INT, prev, tag, c, WEFT_STATUS_IGNORE), 0);
    }
    ASSERT_EQ(weft_wait(&r, WEFT_STATUS_IGNORE), 0);
    EXPECT_EQ(in, m[static_cast<size_t>(prev)] * 100 + 7);
}

}  // namespace groups_test
