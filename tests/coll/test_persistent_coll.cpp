// MPI 4.0 persistent collectives (weft_<coll>_init): every collective, restarted with new data
// each run and checked against values computed locally, on a conventional, a stream and a
// multiplex communicator; in place and derived-datatype inputs (read again at each start);
// interleaved with nonblocking and blocking collectives; waitsome over them; misuse.
#include <gtest/gtest.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "collective_test.hpp"
#include "error_detail.hpp"
#include "multiprocess_main.hpp"
#include "weft/weft.h"
#include "weft_env.hpp"

using harness::detail;
using harness::err;
using harness::world_rank;
using harness::world_size;

namespace {

constexpr int runs = 4;

// Rank r's element k in run `run`.
int val(int run, int r, int k) { return run * 1000 + r * 37 + k; }

enum class kind { world, stream, multiplex };

std::string kind_name(const ::testing::TestParamInfo<kind> &p) {
    return p.param == kind::world ? "world" : p.param == kind::stream ? "stream" : "multiplex";
}

class PersistentColl : public harness::collective_test<>, public ::testing::WithParamInterface<kind> {
  protected:
    weft_comm comm_ = WEFT_COMM_NULL;
    std::vector<weft_stream> streams_;
    int me = 0, n = 1;

    void SetUp() override {
        collective_test::SetUp();
        me = world_rank();
        n = world_size();
        int rc = 0;
        switch (GetParam()) {
            case kind::world: rc = weft_comm_dup(WEFT_COMM_WORLD, &comm_); break;
            case kind::stream:
                streams_.resize(1);
                ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &streams_[0]), 0) << detail();
                rc = weft_stream_comm_create(WEFT_COMM_WORLD, streams_[0], &comm_);
                break;
            case kind::multiplex:
                streams_.resize(1);
                ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &streams_[0]), 0) << detail();
                rc = weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, 1, streams_.data(), &comm_);
                break;
        }
        ASSERT_EQ(rc, 0) << err(rc);
    }
    void TearDown() override {
        if (comm_ != WEFT_COMM_NULL) {
            EXPECT_EQ(weft_comm_free(&comm_), 0) << detail();
        }
        for (auto &s : streams_) EXPECT_EQ(weft_stream_free(&s), 0) << detail();
        collective_test::TearDown();
    }

    // Starts r `runs` times: before each start prepare(run) sets the inputs, after each wait
    // check(run) checks the outputs; the handle must stay the same throughout.  Then frees it.
    template <class Prepare, class Check>
    void replay(const char *what, weft_request r, Prepare prepare, Check check) {
        ASSERT_NE(r, WEFT_REQUEST_NULL) << what;
        const weft_request h = r;
        for (int run = 0; run < runs; ++run) {
            prepare(run);
            ASSERT_EQ(weft_start(&r), 0) << what << " run " << run << ": " << detail();
            weft_status st;
            ASSERT_EQ(weft_wait(&r, &st), 0) << what << " run " << run << ": " << detail();
            ASSERT_EQ(r, h) << what;
            check(run);
            if (::testing::Test::HasFailure()) {
                ADD_FAILURE() << what << " failed in run " << run;
                break;
            }
        }
        ASSERT_EQ(weft_request_free(&r), 0) << what << ": " << detail();
    }
};

TEST_P(PersistentColl, BarrierAndBcast) {
    weft_request r;
    ASSERT_EQ(weft_barrier_init(comm_, WEFT_INFO_NULL, &r), 0) << detail();
    replay(
        "barrier", r, [](int) {}, [](int) {});
    std::vector<int> buf(100);
    int root = n - 1;
    ASSERT_EQ(weft_bcast_init(buf.data(), buf.size(), WEFT_INT, root, comm_, WEFT_INFO_NULL, &r), 0) << detail();
    replay(
        "bcast", r,
        [&](int run) {
            for (int k = 0; k < 100; ++k) buf[k] = me == root ? val(run, root, k) : -1;
        },
        [&](int run) {
            for (int k = 0; k < 100; ++k) ASSERT_EQ(buf[k], val(run, root, k)) << "element " << k;
        });
}

TEST_P(PersistentColl, Reductions) {
    constexpr int count = 33;
    std::vector<int> in(count), out(count);
    auto fill = [&](int run) {
        for (int k = 0; k < count; ++k) in[k] = val(run, me, k);
        std::fill(out.begin(), out.end(), -1);
    };
    auto sum_upto = [&](int run, int last, int k) {  // ranks 0..last
        int s = 0;
        for (int q = 0; q <= last; ++q) s += val(run, q, k);
        return s;
    };
    weft_request r;
    ASSERT_EQ(weft_allreduce_init(in.data(), out.data(), count, WEFT_INT, WEFT_SUM, comm_, WEFT_INFO_NULL, &r), 0);
    replay("allreduce", r, fill, [&](int run) {
        for (int k = 0; k < count; ++k) ASSERT_EQ(out[k], sum_upto(run, n - 1, k)) << "element " << k;
    });
    ASSERT_EQ(weft_reduce_init(in.data(), out.data(), count, WEFT_INT, WEFT_MAX, 0, comm_, WEFT_INFO_NULL, &r), 0);
    replay("reduce", r, fill, [&](int run) {
        if (me == 0) {
            for (int k = 0; k < count; ++k) ASSERT_EQ(out[k], val(run, n - 1, k)) << "element " << k;
        }
    });
    ASSERT_EQ(weft_scan_init(in.data(), out.data(), count, WEFT_INT, WEFT_SUM, comm_, WEFT_INFO_NULL, &r), 0);
    replay("scan", r, fill, [&](int run) {
        for (int k = 0; k < count; ++k) ASSERT_EQ(out[k], sum_upto(run, me, k)) << "element " << k;
    });
    ASSERT_EQ(weft_exscan_init(in.data(), out.data(), count, WEFT_INT, WEFT_SUM, comm_, WEFT_INFO_NULL, &r), 0);
    replay("exscan", r, fill, [&](int run) {
        if (me > 0) {
            for (int k = 0; k < count; ++k) ASSERT_EQ(out[k], sum_upto(run, me - 1, k)) << "element " << k;
        }
    });
    // In place: the input is read from recvbuf at each start.
    ASSERT_EQ(weft_allreduce_init(WEFT_IN_PLACE, out.data(), count, WEFT_INT, WEFT_SUM, comm_, WEFT_INFO_NULL, &r), 0);
    replay(
        "allreduce in place", r,
        [&](int run) {
            for (int k = 0; k < count; ++k) out[k] = val(run, me, k);
        },
        [&](int run) {
            for (int k = 0; k < count; ++k) ASSERT_EQ(out[k], sum_upto(run, n - 1, k)) << "element " << k;
        });
    std::vector<int> all(count * n), block(count);
    ASSERT_EQ(
        weft_reduce_scatter_block_init(all.data(), block.data(), count, WEFT_INT, WEFT_SUM, comm_, WEFT_INFO_NULL, &r),
        0);
    auto fill_all = [&](int run) {
        for (int k = 0; k < count * n; ++k) all[k] = val(run, me, k);
    };
    auto check_block = [&](std::vector<int> &got) {
        return [&, g = &got](int run) {
            for (int k = 0; k < count; ++k) ASSERT_EQ((*g)[k], sum_upto(run, n - 1, me * count + k)) << "element " << k;
        };
    };
    replay("reduce_scatter_block", r, fill_all, check_block(block));
    ASSERT_EQ(
        weft_reduce_scatter_block_init(WEFT_IN_PLACE, all.data(), count, WEFT_INT, WEFT_SUM, comm_, WEFT_INFO_NULL, &r),
        0);
    replay("reduce_scatter_block in place", r, fill_all, check_block(all));
}

TEST_P(PersistentColl, GathersAndScatters) {
    constexpr int count = 5;
    const int root = n > 1 ? 1 : 0;
    std::vector<int> mine(count), all(count * n), back(count);
    std::vector<size_t> counts(n, count), displs(n);
    for (int q = 0; q < n; ++q) displs[q] = static_cast<size_t>((n - 1 - q) * count);  // reversed blocks
    auto fill_mine = [&](int run) {
        for (int k = 0; k < count; ++k) mine[k] = val(run, me, k);
        std::fill(all.begin(), all.end(), -1);
    };
    auto check_all = [&](bool reversed) {
        return [&, reversed](int run) {
            for (int q = 0; q < n; ++q)
                for (int k = 0; k < count; ++k)
                    ASSERT_EQ(all[(reversed ? n - 1 - q : q) * count + k], val(run, q, k))
                        << "rank " << q << " k " << k;
        };
    };
    weft_request r;
    ASSERT_EQ(
        weft_gather_init(mine.data(), count, WEFT_INT, all.data(), count, WEFT_INT, root, comm_, WEFT_INFO_NULL, &r),
        0);
    replay("gather", r, fill_mine, [&](int run) {
        if (me == root) check_all(false)(run);
    });
    ASSERT_EQ(weft_gatherv_init(mine.data(), count, WEFT_INT, all.data(), counts.data(), displs.data(), WEFT_INT, root,
                                comm_, WEFT_INFO_NULL, &r),
              0);
    replay("gatherv", r, fill_mine, [&](int run) {
        if (me == root) check_all(true)(run);
    });
    ASSERT_EQ(weft_allgather_init(mine.data(), count, WEFT_INT, all.data(), count, WEFT_INT, comm_, WEFT_INFO_NULL, &r),
              0);
    replay("allgather", r, fill_mine, check_all(false));
    ASSERT_EQ(weft_allgatherv_init(mine.data(), count, WEFT_INT, all.data(), counts.data(), displs.data(), WEFT_INT,
                                   comm_, WEFT_INFO_NULL, &r),
              0);
    replay("allgatherv", r, fill_mine, check_all(true));
    auto fill_root = [&](int run) {
        for (int k = 0; k < count * n; ++k) all[k] = val(run, root, k);
        std::fill(back.begin(), back.end(), -1);
    };
    ASSERT_EQ(
        weft_scatter_init(all.data(), count, WEFT_INT, back.data(), count, WEFT_INT, root, comm_, WEFT_INFO_NULL, &r),
        0);
    replay("scatter", r, fill_root, [&](int run) {
        for (int k = 0; k < count; ++k) ASSERT_EQ(back[k], val(run, root, me * count + k)) << "k " << k;
    });
    ASSERT_EQ(weft_scatterv_init(all.data(), counts.data(), displs.data(), WEFT_INT, back.data(), count, WEFT_INT, root,
                                 comm_, WEFT_INFO_NULL, &r),
              0);
    replay("scatterv", r, fill_root, [&](int run) {
        for (int k = 0; k < count; ++k) ASSERT_EQ(back[k], val(run, root, (n - 1 - me) * count + k)) << "k " << k;
    });
}

TEST_P(PersistentColl, Alltoalls) {
    constexpr int count = 3;
    std::vector<int> out(count * n), in(count * n);
    std::vector<size_t> counts(n, count), displs(n);
    for (int q = 0; q < n; ++q) displs[q] = static_cast<size_t>(q * count);
    // Block for rank q of rank p's input in run `run`.
    auto fill = [&](std::vector<int> &buf, int run) {
        for (int q = 0; q < n; ++q)
            for (int k = 0; k < count; ++k) buf[q * count + k] = val(run, me, q * 100 + k);
    };
    auto check = [&](const std::vector<int> &buf, int run) {
        for (int p = 0; p < n; ++p)
            for (int k = 0; k < count; ++k)
                ASSERT_EQ(buf[p * count + k], val(run, p, me * 100 + k)) << "from rank " << p << " k " << k;
    };
    weft_request r;
    ASSERT_EQ(weft_alltoall_init(out.data(), count, WEFT_INT, in.data(), count, WEFT_INT, comm_, WEFT_INFO_NULL, &r),
              0);
    replay(
        "alltoall", r, [&](int run) { fill(out, run); }, [&](int run) { check(in, run); });
    ASSERT_EQ(weft_alltoallv_init(out.data(), counts.data(), displs.data(), WEFT_INT, in.data(), counts.data(),
                                  displs.data(), WEFT_INT, comm_, WEFT_INFO_NULL, &r),
              0);
    replay(
        "alltoallv", r, [&](int run) { fill(out, run); }, [&](int run) { check(in, run); });
    // In place: the copy of recvbuf it sends from is taken again at each start.
    ASSERT_EQ(
        weft_alltoall_init(WEFT_IN_PLACE, 0, WEFT_DATATYPE_NULL, in.data(), count, WEFT_INT, comm_, WEFT_INFO_NULL, &r),
        0);
    replay(
        "alltoall in place", r, [&](int run) { fill(in, run); }, [&](int run) { check(in, run); });
}

// reduce_scatter and alltoallw (weft.h): uneven blocks, in place, byte displacements.
TEST_P(PersistentColl, ReduceScatterAndAlltoallw) {
    std::vector<size_t> counts(n);
    size_t total = 0, mine_at = 0;
    for (int q = 0; q < n; ++q) {
        counts[q] = static_cast<size_t>(q + 2);
        if (q < me) mine_at += counts[q];
        total += counts[q];
    }
    std::vector<int> all(total), block(counts[me]);
    auto fill_all = [&](int run) {
        for (size_t k = 0; k < total; ++k) all[k] = val(run, me, static_cast<int>(k));
    };
    auto sum = [&](int run, size_t k) {
        int s = 0;
        for (int q = 0; q < n; ++q) s += val(run, q, static_cast<int>(k));
        return s;
    };
    weft_request r;
    ASSERT_EQ(weft_reduce_scatter_init(all.data(), block.data(), counts.data(), WEFT_INT, WEFT_SUM, comm_,
                                       WEFT_INFO_NULL, &r),
              0)
        << detail();
    replay("reduce_scatter", r, fill_all, [&](int run) {
        for (size_t k = 0; k < counts[me]; ++k) ASSERT_EQ(block[k], sum(run, mine_at + k)) << "element " << k;
    });
    ASSERT_EQ(weft_reduce_scatter_init(WEFT_IN_PLACE, all.data(), counts.data(), WEFT_INT, WEFT_SUM, comm_,
                                       WEFT_INFO_NULL, &r),
              0)
        << detail();
    replay("reduce_scatter in place", r, fill_all, [&](int run) {
        for (size_t k = 0; k < counts[me]; ++k) ASSERT_EQ(all[k], sum(run, mine_at + k)) << "element " << k;
    });

    // alltoallw: rank q gets 2 ints from each rank, as WEFT_INT and as WEFT_DOUBLE-sized bytes.
    std::vector<int> out(2 * n), in(2 * n);
    std::vector<size_t> scounts(n, 2), rcounts(n, 8);
    std::vector<ptrdiff_t> displs(n);
    std::vector<weft_datatype> stypes(n, WEFT_INT), rtypes(n, WEFT_BYTE);
    for (int q = 0; q < n; ++q) displs[q] = static_cast<ptrdiff_t>(q * 2 * sizeof(int));
    ASSERT_EQ(weft_alltoallw_init(out.data(), scounts.data(), displs.data(), stypes.data(), in.data(), rcounts.data(),
                                  displs.data(), rtypes.data(), comm_, WEFT_INFO_NULL, &r),
              0)
        << detail();
    replay(
        "alltoallw", r,
        [&](int run) {
            for (int q = 0; q < n; ++q)
                for (int k = 0; k < 2; ++k) out[q * 2 + k] = val(run, me, q * 10 + k);
            std::fill(in.begin(), in.end(), -1);
        },
        [&](int run) {
            for (int p = 0; p < n; ++p)
                for (int k = 0; k < 2; ++k) ASSERT_EQ(in[p * 2 + k], val(run, p, me * 10 + k)) << "from " << p;
        });
}

// A derived (strided) send type: packed again at each start; the type may be freed after init.
TEST_P(PersistentColl, DerivedTypesPackedAtEachStart) {
    weft_datatype every_other;
    ASSERT_EQ(weft_type_vector(4, 1, 2, WEFT_INT, &every_other), 0);
    ASSERT_EQ(weft_type_commit(&every_other), 0);
    std::vector<int> src(8), all(4 * n), buf(8);
    weft_request gather, bcast;
    ASSERT_EQ(weft_allgather_init(src.data(), 1, every_other, all.data(), 4, WEFT_INT, comm_, WEFT_INFO_NULL, &gather),
              0)
        << detail();
    ASSERT_EQ(weft_bcast_init(buf.data(), 1, every_other, 0, comm_, WEFT_INFO_NULL, &bcast), 0) << detail();
    ASSERT_EQ(weft_type_free(&every_other), 0);
    replay(
        "allgather of a vector type", gather,
        [&](int run) {
            for (int k = 0; k < 8; ++k) src[k] = val(run, me, k);
        },
        [&](int run) {
            for (int q = 0; q < n; ++q)
                for (int k = 0; k < 4; ++k) ASSERT_EQ(all[q * 4 + k], val(run, q, 2 * k)) << "rank " << q << " k " << k;
        });
    replay(
        "bcast of a vector type", bcast,
        [&](int run) {
            for (int k = 0; k < 8; ++k) buf[k] = me == 0 ? val(run, 0, k) : -1;
        },
        [&](int run) {
            for (int k = 0; k < 8; ++k)
                ASSERT_EQ(buf[k], k % 2 == 0 ? val(run, 0, k) : (me == 0 ? val(run, 0, k) : -1));
        });
}

// Persistent collectives started together with startall, between nonblocking and blocking
// ones, completed by waitsome and waitall; every process starts them in the same order.
TEST_P(PersistentColl, InterleavedWithOtherCollectives) {
    int a = 0, sa = 0, b = 0, sb = 0, c = 0;
    weft_request pers[2];
    ASSERT_EQ(weft_allreduce_init(&a, &sa, 1, WEFT_INT, WEFT_SUM, comm_, WEFT_INFO_NULL, &pers[0]), 0) << detail();
    ASSERT_EQ(weft_allreduce_init(&b, &sb, 1, WEFT_INT, WEFT_MAX, comm_, WEFT_INFO_NULL, &pers[1]), 0) << detail();
    for (int run = 0; run < 20; ++run) {
        a = me + run;
        b = me * run;
        c = me == 0 ? run : -1;
        weft_request all[4] = {pers[0], WEFT_REQUEST_NULL, pers[1], WEFT_REQUEST_NULL};
        ASSERT_EQ(weft_start(&all[0]), 0) << detail();
        ASSERT_EQ(weft_ibarrier(comm_, &all[1]), 0) << detail();
        ASSERT_EQ(weft_start(&all[2]), 0) << detail();
        ASSERT_EQ(weft_bcast(&c, 1, WEFT_INT, 0, comm_), 0) << detail();
        EXPECT_EQ(c, run);
        if (run % 2) {
            ASSERT_EQ(weft_waitall(4, all, WEFT_STATUSES_IGNORE), 0) << detail();
        } else {
            size_t outcount = 0, indices[4], done = 0;
            weft_status sts[4];
            while (true) {
                ASSERT_EQ(weft_waitsome(4, all, &outcount, indices, sts), 0) << detail();
                if (outcount == WEFT_UNDEFINED) break;
                done += outcount;
            }
            EXPECT_EQ(done, 3u);
        }
        EXPECT_EQ(all[0], pers[0]);
        EXPECT_EQ(all[2], pers[1]);
        EXPECT_EQ(all[1], WEFT_REQUEST_NULL);
        int sum = 0;
        for (int q = 0; q < n; ++q) sum += q + run;
        ASSERT_EQ(sa, sum) << "run " << run;
        ASSERT_EQ(sb, (n - 1) * run) << "run " << run;
        if (run % 5 == 4) {
            ASSERT_EQ(weft_startall(2, pers), 0) << detail();
        }
        if (run % 5 == 4) {
            ASSERT_EQ(weft_waitall(2, pers, WEFT_STATUSES_IGNORE), 0) << detail();
        }
    }
    for (auto &r : pers) ASSERT_EQ(weft_request_free(&r), 0);
}

TEST_P(PersistentColl, Misuse) {
    int v = 0, w = 0;
    weft_request r = WEFT_REQUEST_NULL;
    EXPECT_EQ(weft_bcast_init(&v, 1, WEFT_INT, n, comm_, WEFT_INFO_NULL, &r), WEFT_ERR_RANK);
    EXPECT_EQ(weft_allreduce_init(&v, &w, 1, WEFT_INT, WEFT_OP_NULL, comm_, WEFT_INFO_NULL, &r), WEFT_ERR_OP);
    EXPECT_EQ(weft_barrier_init(WEFT_COMM_NULL, WEFT_INFO_NULL, &r), WEFT_ERR_COMM);
    EXPECT_EQ(weft_barrier_init(comm_, WEFT_INFO_NULL, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_barrier_init(comm_, 0x2000ffff, &r), WEFT_ERR_INFO);
    EXPECT_EQ(r, WEFT_REQUEST_NULL);
    weft_info info;
    ASSERT_EQ(weft_info_create(&info), 0);
    ASSERT_EQ(weft_info_set(info, "any_key", "ignored"), 0);
    ASSERT_EQ(weft_barrier_init(comm_, info, &r), 0) << detail();
    ASSERT_EQ(weft_info_free(&info), 0);
    // Active: a second start and a free are refused; once waited on, both work.
    ASSERT_EQ(weft_start(&r), 0) << detail();
    EXPECT_EQ(weft_start(&r), WEFT_ERR_REQUEST);
    int rc = weft_request_free(&r);
    if (rc != WEFT_SUCCESS) {  // it may have completed already (one process)
        EXPECT_EQ(rc, WEFT_ERR_REQUEST);
        EXPECT_NE(detail().find("active collective"), std::string::npos) << detail();
        int flag = 0;
        weft_status st;
        for (; !flag;) ASSERT_EQ(weft_request_get_status(r, &flag, &st), 0) << detail();
        EXPECT_EQ(st.error, WEFT_SUCCESS);
        ASSERT_EQ(weft_wait(&r, WEFT_STATUS_IGNORE), 0) << detail();
        weft_comm c = comm_;
        EXPECT_EQ(weft_comm_free(&c), WEFT_ERR_BUSY) << "the persistent barrier uses the communicator";
        ASSERT_EQ(weft_request_free(&r), 0) << detail();
    } else {
        EXPECT_EQ(r, WEFT_REQUEST_NULL);
    }
}

INSTANTIATE_TEST_SUITE_P(Comm, PersistentColl, ::testing::Values(kind::world, kind::stream, kind::multiplex),
                         kind_name);

class environment : public ::testing::Environment {
  public:
    void SetUp() override {
        ASSERT_EQ(weft_init(nullptr, nullptr), WEFT_SUCCESS);
        harness::runtime rt;
        ASSERT_TRUE(harness::runtime_info(rt));
        if (world_rank() == 0)
            std::printf("weft-test-persistent-coll: %d processes, fabric=%s\n", world_size(), rt.fabric.c_str());
    }
    void TearDown() override { EXPECT_EQ(harness::finalize_watched(), WEFT_SUCCESS) << detail(); }
};

}  // namespace

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    ::testing::AddGlobalTestEnvironment(new environment);
    int rc = RUN_ALL_TESTS();
    return rc;
}
