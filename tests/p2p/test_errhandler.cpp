// Error handlers across processes (run with 2): user handlers called with the right
// communicator and code, inheritance through dup, split and stream communicators,
// weft_comm_call_errhandler, WEFT_COMM_SELF for calls without a valid communicator, and misuse.
#include <vector>

#include "error_detail.hpp"
#include "p2p_env.hpp"
#include "weft/weft_errhandler.h"
#include "weft/weft_errhandler.hpp"

using namespace p2p_test;
using harness::detail;

namespace {

// What the handler saw, per call.
struct call {
    weft_comm comm;
    int code;
    std::string detail_inside;
};
std::vector<call> calls;

void record(weft_comm *comm, int *code, ...) {
    calls.push_back({*comm, *code, detail()});
    // A handler may call Weft, even failing calls: no handler runs for those, and the caller
    // still sees the original detail afterwards.
    int rank = -1;
    EXPECT_EQ(weft_comm_rank(*comm, &rank), WEFT_SUCCESS);
    EXPECT_EQ(weft_comm_rank(WEFT_COMM_NULL, &rank), WEFT_ERR_COMM);
    *code = WEFT_SUCCESS;  // changing it does not change what the call returns
}

void other(weft_comm *, int *, ...) {}

class Errhandler : public collective_test {
  protected:
    void SetUp() override {
        collective_test::SetUp();
        calls.clear();
        ASSERT_EQ(weft_comm_create_errhandler(record, &h_), WEFT_SUCCESS);
        ASSERT_EQ(weft_comm_dup(WEFT_COMM_WORLD, &comm_), WEFT_SUCCESS);
    }
    void TearDown() override {
        if (comm_ != WEFT_COMM_NULL) {
            EXPECT_EQ(weft_comm_free(&comm_), WEFT_SUCCESS);
        }
        if (h_ != WEFT_ERRHANDLER_NULL) {
            EXPECT_EQ(weft_errhandler_free(&h_), WEFT_SUCCESS);
        }
        weft_comm_set_errhandler(WEFT_COMM_SELF, WEFT_ERRORS_RETURN);
        collective_test::TearDown();
    }
    weft_errhandler handler_of(weft_comm c) {
        weft_errhandler h = WEFT_ERRHANDLER_NULL;
        EXPECT_EQ(weft_comm_get_errhandler(c, &h), WEFT_SUCCESS);
        weft_errhandler copy = h;
        if (h != WEFT_ERRORS_RETURN && h != WEFT_ERRORS_ARE_FATAL && h != WEFT_ERRORS_ABORT) {
            EXPECT_EQ(weft_errhandler_free(&copy), WEFT_SUCCESS);  // get returned a reference
        }
        return h;
    }
    weft_errhandler h_ = WEFT_ERRHANDLER_NULL;
    weft_comm comm_ = WEFT_COMM_NULL;
};

TEST_F(Errhandler, DefaultIsErrorsReturn) {
    EXPECT_EQ(handler_of(WEFT_COMM_WORLD), WEFT_ERRORS_RETURN);
    EXPECT_EQ(handler_of(WEFT_COMM_SELF), WEFT_ERRORS_RETURN);
    EXPECT_EQ(handler_of(comm_), WEFT_ERRORS_RETURN);
    EXPECT_EQ(weft_comm_call_errhandler(comm_, WEFT_ERR_RANK), WEFT_SUCCESS);
    EXPECT_TRUE(calls.empty());
}

TEST_F(Errhandler, SetGetAndCall) {
    ASSERT_EQ(weft_comm_set_errhandler(comm_, h_), WEFT_SUCCESS);
    EXPECT_EQ(handler_of(comm_), h_);
    EXPECT_EQ(handler_of(WEFT_COMM_WORLD), WEFT_ERRORS_RETURN) << "the parent keeps its own";
    EXPECT_EQ(weft_comm_call_errhandler(comm_, WEFT_ERR_TAG), WEFT_SUCCESS);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].comm, comm_);
    EXPECT_EQ(calls[0].code, WEFT_ERR_TAG);
    // An added code goes through as it is.
    int cls = 0, code = 0;
    ASSERT_EQ(weft_add_error_class(&cls), WEFT_SUCCESS);
    ASSERT_EQ(weft_add_error_code(cls, &code), WEFT_SUCCESS);
    EXPECT_EQ(weft_comm_call_errhandler(comm_, code), WEFT_SUCCESS);
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_EQ(calls[1].code, code);
    // Back to the default: nothing runs.
    ASSERT_EQ(weft_comm_set_errhandler(comm_, WEFT_ERRORS_RETURN), WEFT_SUCCESS);
    EXPECT_EQ(weft_comm_call_errhandler(comm_, WEFT_ERR_TAG), WEFT_SUCCESS);
    EXPECT_EQ(calls.size(), 2u);
}

TEST_F(Errhandler, InheritedThroughDupAndSplit) {
    ASSERT_EQ(weft_comm_set_errhandler(comm_, h_), WEFT_SUCCESS);
    weft_comm dup = WEFT_COMM_NULL, split = WEFT_COMM_NULL, split2 = WEFT_COMM_NULL;
    ASSERT_EQ(weft_comm_dup(comm_, &dup), WEFT_SUCCESS);
    ASSERT_EQ(weft_comm_split(comm_, world_rank() % 2, 0, &split), WEFT_SUCCESS);
    ASSERT_EQ(weft_comm_split(split, 0, -world_rank(), &split2), WEFT_SUCCESS);
    EXPECT_EQ(handler_of(dup), h_);
    EXPECT_EQ(handler_of(split), h_);
    EXPECT_EQ(handler_of(split2), h_);
    EXPECT_EQ(weft_comm_call_errhandler(split2, WEFT_ERR_COUNT), WEFT_SUCCESS);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].comm, split2);
    EXPECT_EQ(calls[0].code, WEFT_ERR_COUNT);
    // A child's handler is its own from then on.
    ASSERT_EQ(weft_comm_set_errhandler(dup, WEFT_ERRORS_RETURN), WEFT_SUCCESS);
    EXPECT_EQ(handler_of(comm_), h_);
    // The predefined ones are inherited the same way.
    weft_comm dup2 = WEFT_COMM_NULL;
    ASSERT_EQ(weft_comm_dup(dup, &dup2), WEFT_SUCCESS);
    EXPECT_EQ(handler_of(dup2), WEFT_ERRORS_RETURN);
    for (weft_comm *c : {&dup, &split, &split2, &dup2}) EXPECT_EQ(weft_comm_free(c), WEFT_SUCCESS);
}

TEST_F(Errhandler, InheritedByStreamAndMultiplexCommunicators) {
    ASSERT_EQ(weft_comm_set_errhandler(comm_, h_), WEFT_SUCCESS);
    weft_stream s = WEFT_STREAM_NULL;
    ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s), WEFT_SUCCESS);
    weft_comm sc = WEFT_COMM_NULL, mc = WEFT_COMM_NULL, sdup = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_comm_create(comm_, s, &sc), WEFT_SUCCESS);
    ASSERT_EQ(weft_stream_comm_create_multiplex(comm_, 1, &s, &mc), WEFT_SUCCESS);
    ASSERT_EQ(weft_comm_dup(sc, &sdup), WEFT_SUCCESS);
    EXPECT_EQ(handler_of(sc), h_);
    EXPECT_EQ(handler_of(mc), h_);
    EXPECT_EQ(handler_of(sdup), h_);
    EXPECT_EQ(weft_comm_call_errhandler(mc, WEFT_ERR_STREAM), WEFT_SUCCESS);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].comm, mc);
    for (weft_comm *c : {&sdup, &mc, &sc}) EXPECT_EQ(weft_comm_free(c), WEFT_SUCCESS);
    EXPECT_EQ(weft_stream_free(&s), WEFT_SUCCESS);
}

// A freed handler lives on while a communicator uses it; the last user frees it.
TEST_F(Errhandler, FreedHandlerLivesWhileAttached) {
    ASSERT_EQ(weft_comm_set_errhandler(comm_, h_), WEFT_SUCCESS);
    weft_errhandler old = h_;
    ASSERT_EQ(weft_errhandler_free(&h_), WEFT_SUCCESS);
    EXPECT_EQ(h_, WEFT_ERRHANDLER_NULL);
    EXPECT_EQ(weft_comm_call_errhandler(comm_, WEFT_ERR_OP), WEFT_SUCCESS);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(handler_of(comm_), old);
    // Replacing it drops the last reference: the handle is gone.
    ASSERT_EQ(weft_comm_set_errhandler(comm_, WEFT_ERRORS_RETURN), WEFT_SUCCESS);
    EXPECT_EQ(weft_comm_set_errhandler(comm_, old), WEFT_ERR_ERRHANDLER);
    weft_errhandler stale = old;
    EXPECT_EQ(weft_errhandler_free(&stale), WEFT_ERR_ERRHANDLER);
}

// Calls with no valid communicator report to WEFT_COMM_SELF's handler (MPI 4.0).
TEST_F(Errhandler, InvalidCommunicatorUsesSelf) {
    ASSERT_EQ(weft_comm_set_errhandler(WEFT_COMM_SELF, h_), WEFT_SUCCESS);
    EXPECT_EQ(weft_comm_set_errhandler(WEFT_COMM_NULL, h_), WEFT_ERR_COMM);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].comm, WEFT_COMM_SELF);
    EXPECT_EQ(calls[0].code, WEFT_ERR_COMM);
    EXPECT_NE(calls[0].detail_inside.find("weft_comm_set_errhandler"), std::string::npos) << calls[0].detail_inside;
    // The handler's own failing call did not replace the detail.
    EXPECT_NE(detail().find("weft_comm_set_errhandler"), std::string::npos) << detail();
    EXPECT_EQ(weft_comm_call_errhandler(0x10000fff, WEFT_ERR_RANK), WEFT_ERR_COMM);
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_EQ(calls[1].comm, WEFT_COMM_SELF);
    // Errors of the handler machinery on a valid communicator go to that communicator's.
    ASSERT_EQ(weft_comm_set_errhandler(comm_, h_), WEFT_SUCCESS);
    EXPECT_EQ(weft_comm_set_errhandler(comm_, 0x12345), WEFT_ERR_ERRHANDLER);
    ASSERT_EQ(calls.size(), 3u);
    EXPECT_EQ(calls[2].comm, comm_);
    EXPECT_EQ(calls[2].code, WEFT_ERR_ERRHANDLER);
}

TEST_F(Errhandler, MisuseIsRefused) {
    weft_errhandler p = WEFT_ERRORS_RETURN;
    EXPECT_EQ(weft_errhandler_free(&p), WEFT_ERR_ERRHANDLER);
    EXPECT_NE(detail().find("predefined"), std::string::npos) << detail();
    p = WEFT_ERRORS_ARE_FATAL;
    EXPECT_EQ(weft_errhandler_free(&p), WEFT_ERR_ERRHANDLER);
    p = WEFT_ERRORS_ABORT;
    EXPECT_EQ(weft_errhandler_free(&p), WEFT_ERR_ERRHANDLER);
    EXPECT_EQ(p, WEFT_ERRORS_ABORT);
    EXPECT_EQ(weft_errhandler_free(nullptr), WEFT_ERR_ARG);
    p = WEFT_ERRHANDLER_NULL;
    EXPECT_EQ(weft_errhandler_free(&p), WEFT_ERR_ERRHANDLER);
    p = static_cast<weft_errhandler>(WEFT_COMM_WORLD);  // a handle of another kind
    EXPECT_EQ(weft_errhandler_free(&p), WEFT_ERR_ERRHANDLER);
    EXPECT_EQ(weft_comm_set_errhandler(comm_, WEFT_ERRHANDLER_NULL), WEFT_ERR_ERRHANDLER);
    EXPECT_EQ(weft_comm_set_errhandler(comm_, static_cast<weft_errhandler>(WEFT_INT)), WEFT_ERR_ERRHANDLER);
    EXPECT_EQ(weft_comm_set_errhandler(WEFT_COMM_NULL, WEFT_ERRORS_RETURN), WEFT_ERR_COMM);
    weft_errhandler got;
    EXPECT_EQ(weft_comm_get_errhandler(WEFT_COMM_NULL, &got), WEFT_ERR_COMM);
    EXPECT_EQ(weft_comm_get_errhandler(comm_, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_comm_create_errhandler(nullptr, &got), WEFT_ERR_ARG);
    EXPECT_EQ(weft_comm_create_errhandler(other, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_comm_call_errhandler(WEFT_COMM_NULL, WEFT_ERR_RANK), WEFT_ERR_COMM);
    // A freed communicator is refused like any invalid one.
    weft_comm gone = comm_;
    ASSERT_EQ(weft_comm_free(&comm_), WEFT_SUCCESS);
    EXPECT_EQ(weft_comm_set_errhandler(gone, h_), WEFT_ERR_COMM);
    EXPECT_TRUE(calls.empty());
}

// The C++ layer: a callable as the handler, inheritance through weft::dup, and the exception
// that follows the handler.
TEST_F(Errhandler, CxxLayer) {
    std::vector<std::pair<weft_comm, int>> seen;
    {
        weft::Errhandler h([&](weft::Comm c, int code) { seen.emplace_back(c.handle(), code); });
        weft::UniqueComm c = weft::dup(weft::Comm(comm_));
        weft::set_errhandler(c, h);
        EXPECT_EQ(weft::get_errhandler(c).handle(), h.handle());
        weft::UniqueComm child = weft::dup(c);
        weft::call_errhandler(child, WEFT_ERR_TAG);
        ASSERT_EQ(seen.size(), 1u);
        EXPECT_EQ(seen[0].first, child.handle());
        EXPECT_EQ(seen[0].second, WEFT_ERR_TAG);
        // WEFT_COMM_SELF's handler runs for an invalid communicator, then weft.hpp throws.
        weft::set_errhandler(weft::Comm::self(), h);
        try {
            weft::set_errhandler(weft::Comm(WEFT_COMM_NULL), WEFT_ERRORS_RETURN);
            ADD_FAILURE() << "no exception";
        } catch (const weft::error &e) {
            EXPECT_EQ(e.code(), WEFT_ERR_COMM);
        }
        ASSERT_EQ(seen.size(), 2u);
        EXPECT_EQ(seen[1].first, WEFT_COMM_SELF);
        weft::set_errhandler(weft::Comm::self(), WEFT_ERRORS_RETURN);
        // The Errhandler goes out of scope first: child still has it.
        weft::UniqueComm keep = std::move(child);
        h.reset();
        weft::call_errhandler(keep, WEFT_ERR_OP);
        ASSERT_EQ(seen.size(), 3u);
        EXPECT_EQ(seen[2].second, WEFT_ERR_OP);
    }
    EXPECT_EQ(weft::get_errhandler(weft::Comm::world()).handle(), WEFT_ERRORS_RETURN);
    int cls = weft::add_error_class();
    int code = weft::add_error_code(cls);
    EXPECT_EQ(weft::error_class(code), cls);
    weft::add_error_string(code, "from C++");
    EXPECT_THROW(weft::add_error_string(WEFT_ERR_RANK, "no"), weft::error);
}

}  // namespace

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    ::testing::AddGlobalTestEnvironment(new p2p_test::environment);
    return RUN_ALL_TESTS();
}
