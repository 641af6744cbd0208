// PGAS contexts with several kernels per process, one thread per kernel, and handlers run by a
// stream's progress thread.  Runs under WEFT_THREAD_MULTIPLE.
//
// Multiplex.*: a multiplex communicator with 2 streams per process; kernel ids are rank-major
//   (rank r's stream i is kernel 2r + i); every test runs one thread per kernel, and messages
//   go to every kernel, the other kernel of the same process and the kernel itself included.
// ProgressThread.*: a stream communicator (2 processes); the target starts the progress
//   thread of its kernel's stream and sleeps without calling Weft while the other process's
//   messages (and gets) are handled and replied to.
#include "pgas_plans.hpp"

using namespace pgas_test;

namespace {

constexpr int streams_per_process = 2;

class Multiplex : public harness::collective_test<> {
  protected:
    std::vector<weft_stream> streams;
    weft_comm comm = WEFT_COMM_NULL;
    pgas_ctx ctx;
    double limit_s() const override { return 60; }
    void SetUp() override {
        collective_test::SetUp();
        step("creating %d streams and the multiplex communicator", streams_per_process);
        streams.assign(streams_per_process, WEFT_STREAM_NULL);
        for (auto &s : streams) ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s), 0) << detail();
        int rc = weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, streams.size(), streams.data(), &comm);
        ASSERT_EQ(rc, 0) << "weft_stream_comm_create_multiplex: " << err(rc);
        step("weft_pgas_create on the multiplex communicator");
        std::string why;
        rc = ctx.create(comm, streams_per_process, false, why);
        ASSERT_EQ(rc, 0) << "rank " << world_rank() << ": " << why;
        ASSERT_EQ(ctx.nkernels, streams_per_process * world_size()) << "weft_pgas_num_kernels";
        step("test body");
    }
    void TearDown() override {
        step("weft_pgas_free");
        int rc = ctx.destroy();
        EXPECT_EQ(rc, 0) << "weft_pgas_free: " << err(rc);
        if (comm != WEFT_COMM_NULL) {
            EXPECT_EQ(weft_comm_free(&comm), 0) << detail();
        }
        for (auto &s : streams)
            if (s != WEFT_STREAM_NULL) {
                EXPECT_EQ(weft_stream_free(&s), 0) << detail();
            }
        collective_test::TearDown();
    }
};

TEST_F(Multiplex, KernelIdsAreRankMajor) {
    const int r = world_rank();
    for (int i = 0; i < streams_per_process; ++i) {
        kernel_ctx &k = *ctx.local[i];
        EXPECT_EQ(k.id, r * streams_per_process + i) << "weft_pgas_kernel_id of local kernel " << i;
        int count = -1;
        EXPECT_EQ(weft_pgas_num_kernels(k.k, &count), 0) << detail();
        EXPECT_EQ(count, streams_per_process * world_size());
    }
    int id = -1;
    EXPECT_EQ(weft_pgas_kernel_id(ctx.handle, &id), 0) << detail();
    EXPECT_EQ(id, r * streams_per_process) << "weft_pgas_create returns the process's first kernel";
    EXPECT_NE(ctx.local[0]->base, ctx.local[1]->base) << "two local kernels share a segment";
    weft_pgas k = WEFT_PGAS_NULL;
    EXPECT_NE(weft_pgas_get_kernel(ctx.handle, streams_per_process, &k), 0) << "local index past the last stream";
    EXPECT_NE(weft_pgas_get_kernel(ctx.handle, -1, &k), 0) << "local index -1";
    // The second kernel's handle also reaches the others.
    EXPECT_EQ(weft_pgas_get_kernel(ctx.local[1]->k, 0, &k), 0) << detail();
    EXPECT_EQ(weft_pgas_kernel_id(k, &id), 0) << detail();
    EXPECT_EQ(id, r * streams_per_process);
}

TEST_F(Multiplex, BarrierWaitsForEveryKernel) {
    ctx.run([](kernel_ctx &k) { barrier_rounds(k, 16); });
}

TEST_F(Multiplex, AllToAllSync) {
    ctx.run([](kernel_ctx &k) { run_round(k, all_to_all_plan(0), "all-to-all sync"); });
}

TEST_F(Multiplex, AllToAllAsync) {
    ctx.run([](kernel_ctx &k) { run_round(k, all_to_all_plan(WEFT_AM_ASYNC), "all-to-all async"); });
}

// Every Long size, and gets, between the two kernels of one process (the stream's sibling).
TEST_F(Multiplex, LongSizesWithinAProcess) {
    ctx.run([](kernel_ctx &k) {
        run_round(
            k,
            [](int s, int) {
                const int t = s ^ 1;
                std::vector<message> v;
                packer p;
                for (size_t i = 0; i < long_sizes().size(); ++i) {
                    size_t len = long_sizes()[i];
                    if (i % 2)
                        v.push_back(make_long(t, handler_for(i), nargs_for(i, 0), len, p.take(len)));
                    else
                        v.push_back(make_long_seg(t, handler_for(i), nargs_for(i, 1), 3 + i, len, p.take(len),
                                                  i % 4 == 2 ? WEFT_AM_ASYNC : 0));
                }
                v.push_back(make_get_long(t, 16, 2, 12345, 100000, p.take(100000)));
                return v;
            },
            "Long sizes to the other kernel of the process");
    });
}

// Counters from every kernel to every kernel.
TEST_F(Multiplex, Counters) {
    ctx.run([](kernel_ctx &k) {
        run_round(
            k,
            [](int s, int n) {
                std::vector<message> v;
                const size_t slot = (dst_len / n) & ~size_t(7);
                for (int t = 0; t < n; ++t) {
                    for (int i = 0; i < 3; ++i) v.push_back(make_short(t, WEFT_AM_H_INCR, 0, i == 1 ? WEFT_AM_ASYNC : 0));
                    v.push_back(make_short(t, WEFT_AM_H_ADD, 1, WEFT_AM_ASYNC));
                    v.back().args = {uint64_t(1000 * s + t + 1)};
                    v.push_back(make_long(t, WEFT_AM_H_INCR, 0, 64, dst_lo + size_t(s) * slot + 3));
                }
                return v;
            },
            "counters all-to-all");
    });
}

// ---------------------------------------------------------------- progress thread

class ProgressThread : public harness::collective_test<> {
  protected:
    weft_stream stream = WEFT_STREAM_NULL;
    weft_comm comm = WEFT_COMM_NULL;
    pgas_ctx ctx;
    double limit_s() const override { return 60; }
    void SetUp() override {
        collective_test::SetUp();
        ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &stream), 0) << detail();
        int rc = weft_stream_comm_create(WEFT_COMM_WORLD, stream, &comm);
        ASSERT_EQ(rc, 0) << "weft_stream_comm_create: " << err(rc);
        std::string why;
        rc = ctx.create(comm, 1, false, why);
        ASSERT_EQ(rc, 0) << "rank " << world_rank() << ": " << why;
        step("test body");
    }
    void TearDown() override {
        step("weft_pgas_free");
        int rc = ctx.destroy();
        EXPECT_EQ(rc, 0) << "weft_pgas_free: " << err(rc);
        if (comm != WEFT_COMM_NULL) {
            EXPECT_EQ(weft_comm_free(&comm), 0) << detail();
        }
        if (stream != WEFT_STREAM_NULL) {
            EXPECT_EQ(weft_stream_free(&stream), 0) << detail();
        }
        collective_test::TearDown();
    }
};

TEST_F(ProgressThread, HandlersRunWhileTheTargetSleeps) {
    if (world_size() != 2) GTEST_SKIP() << "needs 2 processes";
    kernel_ctx &k = ctx.k0();
    for (int target = 0; target < 2; ++target) {
        const int sender = 1 - target;
        plan_fn plan = [sender](int s, int) {
            std::vector<message> v;
            if (s != sender) return v;
            const int t = 1 - s;
            packer p;
            // Gets first: only the target's progress thread can serve them.
            v.push_back(make_get_long(t, 16, 1, 5000, 100000, p.take(100000)));
            v.push_back(make_get_long(t, WEFT_AM_H_EMPTY, 0, 7, 64, p.take(64)));
            for (size_t i = 0; i < 10; ++i) v.push_back(make_long(t, handler_for(i), nargs_for(i, 0), 1000, p.take(1000)));
            v.push_back(make_long(t, 200, 15, 100000, p.take(100000)));
            v.push_back(make_long_seg(t, 255, 0, 3, 8193, p.take(8193), WEFT_AM_ASYNC));
            for (size_t i = 0; i < 5; ++i) v.push_back(make_medium(t, 16, nargs_for(i, 1), 200, i % 2 ? WEFT_AM_ASYNC : 0));
            for (size_t i = 0; i < 3; ++i) v.push_back(make_short(t, 15, 3));
            v.push_back(make_short(t, WEFT_AM_H_INCR, 0));
            return v;
        };
        std::string name = "target rank " + std::to_string(target);
        round_state rs = prepare_round(k, plan);
        step("%s: weft_pgas_barrier before", name.c_str());
        ASSERT_EQ(weft_pgas_barrier(k.k), 0) << detail();
        if (k.id == target) {
            ASSERT_EQ(weft_start_progress_thread(stream), 0) << detail();
            step("%s: p2p barrier (progress thread running)", name.c_str());
            p2p_barrier();
            // Not a single Weft call from this thread until every handler has run.
            step("%s: sleeping until %d handler calls", name.c_str(), rs.expected_calls);
            auto t0 = std::chrono::steady_clock::now();
            while (k.calls.load() < rs.expected_calls &&
                   std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20))
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            EXPECT_GE(k.calls.load(), rs.expected_calls)
                << name << ": handlers did not run within 20 s while the progress thread was running";
            EXPECT_EQ(weft_stop_progress_thread(stream), 0) << detail();
            std::lock_guard<std::mutex> g(k.mu);
            EXPECT_EQ(k.handler_threads.count(std::this_thread::get_id()), 0u)
                << name << ": a handler ran on the main thread, which made no Weft call";
            EXPECT_FALSE(k.handler_threads.empty());
        } else {
            step("%s: p2p barrier", name.c_str());
            p2p_barrier();
            send_round(k, rs);
            wait_round(k, rs);
        }
        // The target's counter got the INCR while it slept.
        if (k.id == target) {
            step("%s: weft_pgas_wait_counter(1)", name.c_str());
            EXPECT_EQ(weft_pgas_wait_counter(k.k, 1), 0) << detail();
        }
        step("%s: weft_pgas_barrier after", name.c_str());
        ASSERT_EQ(weft_pgas_barrier(k.k), 0) << detail();
        check_segment(k, rs, name);
        check_records(k, name);
    }
}

}  // namespace

int main(int argc, char **argv) {
    return pgas_test::run_main("weft-test-pgas-threads", argc, argv, WEFT_THREAD_MULTIPLE);
}
