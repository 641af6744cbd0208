// weft.hpp with the runtime: a singleton job (rank 0 of 1) sending to itself.  Skipped only
// when no fabric plugin is available to this build (WEFT_ERR_PLUGIN).
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <vector>

#include "weft/weft.hpp"

namespace {

// One init per process: the environment lives for the whole test program.
class RuntimeEnv : public ::testing::Environment {
  public:
    void SetUp() override {
        try {
            env = std::make_unique<weft::Environment>(WEFT_THREAD_MULTIPLE);
        } catch (const weft::error &e) {
            init_error = e.code();
            init_message = e.what();
        }
    }
    void TearDown() override { env.reset(); }
    static inline std::unique_ptr<weft::Environment> env;
    static inline int init_error = WEFT_SUCCESS;
    static inline std::string init_message;
};

const auto *registered = ::testing::AddGlobalTestEnvironment(new RuntimeEnv);

#define REQUIRE_RUNTIME()                                                            \
    do {                                                                             \
        if (RuntimeEnv::init_error == WEFT_ERR_PLUGIN)                               \
            GTEST_SKIP() << "no fabric plugin: " << RuntimeEnv::init_message;        \
        ASSERT_EQ(RuntimeEnv::init_error, WEFT_SUCCESS) << RuntimeEnv::init_message; \
    } while (0)

}  // namespace

TEST(CxxRuntime, SingletonWorld) {
    REQUIRE_RUNTIME();
    EXPECT_TRUE(weft::Environment::initialized());
    EXPECT_GE(RuntimeEnv::env->thread_level(), WEFT_THREAD_SINGLE);
    weft::Comm world;
    EXPECT_EQ(world.rank(), 0);
    EXPECT_EQ(world.size(), 1);
    EXPECT_GT(weft::wtime(), 0.0);
}

TEST(CxxRuntime, SelfSendRecv) {
    REQUIRE_RUNTIME();
    weft::Comm world;
    std::array<int, 4> out{1, 2, 3, 4}, in{};
    auto req = world.irecv(std::span(in), 0, 7);
    world.send(std::span<const int>(out), 0, 7);
    weft::Status s = req.wait();
    EXPECT_FALSE(req.active());
    EXPECT_EQ(s.source(), 0);
    EXPECT_EQ(s.tag(), 7);
    EXPECT_EQ(s.count<int>(), 4u);
    EXPECT_EQ(in, out);

    std::vector<double> d{1.5, 2.5};
    auto sreq = world.isend(std::span(d), 0, 8);
    auto probed = world.probe(0, 8);
    EXPECT_EQ(probed.count<double>(), 2u);
    std::vector<double> back(2);
    world.recv(std::span(back), 0, 8);
    sreq.wait();
    EXPECT_EQ(back, d);
    EXPECT_FALSE(world.iprobe(0, 9).has_value());
}

TEST(CxxRuntime, NullRequest) {
    weft::Request r;  // needs no runtime, but links the p2p entry points
    EXPECT_FALSE(r.active());
}

TEST(CxxRuntime, BadRankThrows) {
    REQUIRE_RUNTIME();
    weft::Comm world;
    int x = 0;
    try {
        world.send(&x, 1, WEFT_INT, 5, 0);
        FAIL() << "no exception";
    } catch (const weft::error &e) {
        EXPECT_EQ(e.code(), WEFT_ERR_RANK);
    }
}
