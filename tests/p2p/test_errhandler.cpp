// Error handlers across processes (run with 2): user handlers called with the right
// communicator and code, inheritance through dup, split and stream communicators,
// weft_comm_call_errhandler, WEFT_COMM_SELF for calls without a valid communicator, and misuse.
#include <iterator>
#include <vector>

#include "error_detail.hpp"
#include "p2p_env.hpp"
#include "weft/weft.h"
#include "weft/weft.hpp"

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

// weft_comm_create, weft_comm_create_group and weft_comm_idup give the new communicator the
// parent's handler too (comm_derive; before, they started with WEFT_ERRORS_RETURN).
TEST_F(Errhandler, InheritedThroughCreateCreateGroupAndIdup) {
    ASSERT_EQ(weft_comm_set_errhandler(comm_, h_), WEFT_SUCCESS);
    weft_group g = WEFT_GROUP_NULL;
    ASSERT_EQ(weft_comm_group(comm_, &g), WEFT_SUCCESS);
    weft_comm created = WEFT_COMM_NULL, grouped = WEFT_COMM_NULL, idup = WEFT_COMM_NULL;
    ASSERT_EQ(weft_comm_create(comm_, g, &created), WEFT_SUCCESS);
    ASSERT_EQ(weft_comm_create_group(comm_, g, 7, &grouped), WEFT_SUCCESS);
    weft_request r = WEFT_REQUEST_NULL;
    ASSERT_EQ(weft_comm_idup(comm_, &idup, &r), WEFT_SUCCESS);
    ASSERT_EQ(weft_wait(&r, WEFT_STATUS_IGNORE), WEFT_SUCCESS);
    EXPECT_EQ(handler_of(created), h_);
    EXPECT_EQ(handler_of(grouped), h_);
    EXPECT_EQ(handler_of(idup), h_);
    int dummy = 0;
    EXPECT_EQ(weft_send(&dummy, 1, WEFT_INT, world_size(), 0, idup), WEFT_ERR_RANK);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].comm, idup);
    EXPECT_EQ(weft_group_free(&g), WEFT_SUCCESS);
    for (weft_comm *c : {&created, &grouped, &idup}) EXPECT_EQ(weft_comm_free(c), WEFT_SUCCESS);
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

// Failing calls run their communicator's handler and still return the code.
TEST_F(Errhandler, FailingPointToPointCallsRunTheHandler) {
    ASSERT_EQ(weft_comm_set_errhandler(comm_, h_), WEFT_SUCCESS);
    int x = 0;
    const int size = world_size();
    weft_request req = WEFT_REQUEST_NULL;
    EXPECT_EQ(weft_send(&x, 1, WEFT_INT, size, 0, comm_), WEFT_ERR_RANK);
    EXPECT_EQ(weft_recv(&x, 1, WEFT_INT, 0, -5, comm_, WEFT_STATUS_IGNORE), WEFT_ERR_TAG);
    EXPECT_EQ(weft_isend(&x, 1, WEFT_DATATYPE_NULL, 0, 0, comm_, &req), WEFT_ERR_TYPE);
    EXPECT_EQ(weft_irecv(&x, 1, WEFT_INT, -7, 0, comm_, &req), WEFT_ERR_RANK);
    EXPECT_EQ(weft_send(nullptr, 1, WEFT_INT, 0, 0, comm_), WEFT_ERR_BUFFER);
    int flag = 0;
    EXPECT_EQ(weft_iprobe(size, 0, comm_, &flag, WEFT_STATUS_IGNORE), WEFT_ERR_RANK);
    EXPECT_EQ(weft_probe(0, WEFT_TAG_UB + 1, comm_, WEFT_STATUS_IGNORE), WEFT_ERR_TAG);
    const int expected[] = {WEFT_ERR_RANK,   WEFT_ERR_TAG,  WEFT_ERR_TYPE, WEFT_ERR_RANK,
                            WEFT_ERR_BUFFER, WEFT_ERR_RANK, WEFT_ERR_TAG};
    ASSERT_EQ(calls.size(), std::size(expected));
    for (size_t i = 0; i < calls.size(); ++i) {
        EXPECT_EQ(calls[i].comm, comm_) << i;
        EXPECT_EQ(calls[i].code, expected[i]) << i;
    }
    // The detail the handler saw names the call; the caller sees it too.
    EXPECT_NE(calls[0].detail_inside.find("weft_send"), std::string::npos) << calls[0].detail_inside;
    EXPECT_NE(detail().find("probe: tag"), std::string::npos) << detail();
    // Calls that succeed run nothing; WEFT_COMM_WORLD (still WEFT_ERRORS_RETURN) runs nothing.
    calls.clear();
    EXPECT_EQ(weft_send(&x, 1, WEFT_INT, WEFT_PROC_NULL, 0, comm_), WEFT_SUCCESS);
    EXPECT_EQ(weft_send(&x, 1, WEFT_INT, size, 0, WEFT_COMM_WORLD), WEFT_ERR_RANK);
    EXPECT_TRUE(calls.empty());
}

// A request's errors go to its communicator's handler: a truncated receive, on a
// communicator whose handler differs from the one of WEFT_COMM_WORLD.
TEST_F(Errhandler, RequestErrorsUseTheRequestsCommunicator) {
    ASSERT_EQ(weft_comm_set_errhandler(comm_, h_), WEFT_SUCCESS);
    const int peer = (world_rank() + 1) % world_size(), from = (world_rank() + world_size() - 1) % world_size();
    int two[2] = {1, 2}, one = 0;
    for (int round = 0; round < 3; ++round) {
        weft_request r = WEFT_REQUEST_NULL, s = WEFT_REQUEST_NULL;
        ASSERT_EQ(weft_irecv(&one, 1, WEFT_INT, from, round, comm_, &r), WEFT_SUCCESS);
        ASSERT_EQ(weft_isend(two, 2, WEFT_INT, peer, round, comm_, &s), WEFT_SUCCESS);
        if (round == 0) {
            EXPECT_EQ(weft_wait(&r, WEFT_STATUS_IGNORE), WEFT_ERR_TRUNCATE);
            EXPECT_EQ(weft_wait(&s, WEFT_STATUS_IGNORE), WEFT_SUCCESS);
        } else if (round == 1) {
            weft_request both[2] = {s, r};
            EXPECT_EQ(weft_waitall(2, both, WEFT_STATUSES_IGNORE), WEFT_ERR_TRUNCATE);
        } else {
            weft_request both[2] = {r, s};
            size_t index = 0;
            int code = WEFT_SUCCESS;
            for (int done = 0; done < 2; ++done) {
                int rc = weft_waitany(2, both, &index, WEFT_STATUS_IGNORE);
                if (rc != WEFT_SUCCESS) code = rc;
            }
            EXPECT_EQ(code, WEFT_ERR_TRUNCATE);
        }
        ASSERT_EQ(calls.size(), static_cast<size_t>(round + 1)) << "round " << round;
        EXPECT_EQ(calls[round].comm, comm_);
        EXPECT_EQ(calls[round].code, WEFT_ERR_TRUNCATE);
    }
    // An invalid request has no communicator: WEFT_COMM_SELF's handler (still RETURN) runs.
    weft_request bad = 0x4000beef;
    EXPECT_EQ(weft_wait(&bad, WEFT_STATUS_IGNORE), WEFT_ERR_REQUEST);
    EXPECT_EQ(calls.size(), 3u);
    ASSERT_EQ(weft_comm_set_errhandler(WEFT_COMM_SELF, h_), WEFT_SUCCESS);
    EXPECT_EQ(weft_wait(&bad, WEFT_STATUS_IGNORE), WEFT_ERR_REQUEST);
    ASSERT_EQ(calls.size(), 4u);
    EXPECT_EQ(calls[3].comm, WEFT_COMM_SELF);
}

// The same on stream and multiplex communicators (inherited handler), and for collectives and
// communicator creation.
TEST_F(Errhandler, StreamMultiplexCollectiveAndCreationCalls) {
    ASSERT_EQ(weft_comm_set_errhandler(comm_, h_), WEFT_SUCCESS);
    weft_stream st = WEFT_STREAM_NULL;
    ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &st), WEFT_SUCCESS);
    weft_comm sc = WEFT_COMM_NULL, mc = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_comm_create(comm_, st, &sc), WEFT_SUCCESS);
    ASSERT_EQ(weft_stream_comm_create_multiplex(comm_, 1, &st, &mc), WEFT_SUCCESS);
    int x = 0;
    EXPECT_EQ(weft_send(&x, 1, WEFT_INT, world_size(), 0, sc), WEFT_ERR_RANK);
    EXPECT_EQ(weft_stream_send(&x, 1, WEFT_INT, 0, 0, mc, 0, 5), WEFT_ERR_STREAM);
    EXPECT_EQ(weft_stream_recv(&x, 1, WEFT_INT, 0, -3, mc, 0, 0, WEFT_STATUS_IGNORE), WEFT_ERR_TAG);
    EXPECT_EQ(weft_bcast(&x, 1, WEFT_INT, world_size(), comm_), WEFT_ERR_RANK);
    weft_request req;
    EXPECT_EQ(weft_iallreduce(&x, &x, 1, WEFT_INT, WEFT_OP_NULL, mc, &req), WEFT_ERR_OP);
    EXPECT_EQ(weft_comm_dup(sc, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_comm_split(mc, 0, 0, nullptr), WEFT_ERR_ARG);
    const weft_comm where[] = {sc, mc, mc, comm_, mc, sc, mc};
    const int codes[] = {WEFT_ERR_RANK, WEFT_ERR_STREAM, WEFT_ERR_TAG, WEFT_ERR_RANK,
                         WEFT_ERR_OP,   WEFT_ERR_ARG,    WEFT_ERR_ARG};
    ASSERT_EQ(calls.size(), std::size(codes));
    for (size_t i = 0; i < calls.size(); ++i) {
        EXPECT_EQ(calls[i].comm, where[i]) << i;
        EXPECT_EQ(calls[i].code, codes[i]) << i;
    }
    for (weft_comm *c : {&mc, &sc}) EXPECT_EQ(weft_comm_free(c), WEFT_SUCCESS);
    EXPECT_EQ(weft_stream_free(&st), WEFT_SUCCESS);
    // Calls with no communicator go to WEFT_COMM_SELF's handler.
    calls.clear();
    ASSERT_EQ(weft_comm_set_errhandler(WEFT_COMM_SELF, h_), WEFT_SUCCESS);
    weft_stream none = WEFT_STREAM_NULL;
    EXPECT_EQ(weft_stream_free(&none), WEFT_ERR_STREAM);
    EXPECT_EQ(weft_comm_dup(WEFT_COMM_NULL, &sc), WEFT_ERR_COMM);
    EXPECT_EQ(weft_type_commit(nullptr), WEFT_ERR_ARG);
    weft_op no_op = WEFT_OP_NULL;
    EXPECT_EQ(weft_op_free(&no_op), WEFT_ERR_OP);
    weft_info no_info = WEFT_INFO_NULL;
    EXPECT_EQ(weft_info_free(&no_info), WEFT_ERR_INFO);
    weft_status st_out;
    size_t n = 0;
    EXPECT_EQ(weft_get_count(&st_out, WEFT_DATATYPE_NULL, &n), WEFT_ERR_TYPE);
    const int self_codes[] = {WEFT_ERR_STREAM, WEFT_ERR_COMM, WEFT_ERR_ARG, WEFT_ERR_OP, WEFT_ERR_INFO, WEFT_ERR_TYPE};
    ASSERT_EQ(calls.size(), std::size(self_codes));
    for (size_t i = 0; i < calls.size(); ++i) {
        EXPECT_EQ(calls[i].comm, WEFT_COMM_SELF) << i;
        EXPECT_EQ(calls[i].code, self_codes[i]) << i;
    }
}

// C++: the handler runs, then weft.hpp throws.
TEST_F(Errhandler, CxxHandlerThenException) {
    int seen = 0;
    weft::Errhandler h([&](weft::Comm, int code) { seen = code; });
    weft::Comm c(comm_);
    weft::set_errhandler(c, h);
    int x = 0;
    try {
        c.send(&x, 1, WEFT_INT, world_size(), 0);
        ADD_FAILURE() << "no exception";
    } catch (const weft::error &e) {
        EXPECT_EQ(e.code(), WEFT_ERR_RANK);
        EXPECT_NE(std::string(e.what()).find("weft_send"), std::string::npos) << e.what();
    }
    EXPECT_EQ(seen, WEFT_ERR_RANK);
}

}  // namespace

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    ::testing::AddGlobalTestEnvironment(new p2p_test::environment);
    return RUN_ALL_TESTS();
}
