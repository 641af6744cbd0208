// Collective schedules.  An algorithm is built once, at the call, into rounds: each round posts
// its sends and receives together, and when all of them have completed runs its local steps
// (reductions, copies, unpacks) in order.  Schedules are advanced by every progress of their
// endpoint, so blocking and nonblocking collectives share one engine and a nonblocking one
// moves on whenever the application waits or tests on anything on that endpoint.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/comm.hpp"
#include "base/datatype.hpp"
#include "base/op.hpp"
#include "transport/request.hpp"

namespace weft {

struct coll_step {
    enum class kind : uint8_t { send, recv, reduce, copy, unpack, pack };
    kind k;
    int peer = 0;                    // send/recv: rank in the communicator
    const void *src = nullptr;       // send data; reduce `in`; copy/unpack source
    void *dst = nullptr;             // recv buffer; reduce `inout`; copy/unpack destination
    size_t n = 0;                    // send/recv/copy: bytes; reduce: elements; unpack: elements
    const datatype *type = nullptr;  // unpack, pack
};

struct coll_sched {
    comm *c = nullptr;
    vci *endpoint = nullptr;
    uint16_t ctx = 0;
    int tag = 0;
    op_binding op;
    std::vector<coll_step> steps;
    std::vector<uint32_t> round_end;  // steps[round_end[i-1] .. round_end[i]) form round i
    // Scratch memory owned by the schedule; buffers in steps may point into it.  Kept across
    // reset() (small ones) for the next collective.
    struct buffer {
        std::unique_ptr<char[]> data;
        size_t size = 0;
    };
    std::vector<buffer> buffers;
    size_t buffers_used = 0;
    std::vector<std::shared_ptr<const datatype>> held_types;

    // Execution state.
    size_t round = 0;
    std::unique_ptr<local_request[]> reqs;  // one per send/recv of the largest round
    size_t reqs_cap = 0;
    size_t posted = 0;  // requests of the current round in flight
    bool started = false;
    bool aborted = false;  // a member died (coll_sched_abort)
    std::atomic<bool> done{false};
    int error = WEFT_SUCCESS;
    request *user_request = nullptr;  // nonblocking: completed when the schedule is
    coll_sched *next = nullptr;       // in the endpoint's list of active schedules

    // Building.
    char *alloc(size_t bytes);  // nullptr when out of memory
    // Empties the schedule for another collective, keeping capacity.
    void reset();
    void send(int peer, const void *buf, size_t bytes) { add({coll_step::kind::send, peer, buf, nullptr, bytes}); }
    void recv(int peer, void *buf, size_t bytes) { add({coll_step::kind::recv, peer, nullptr, buf, bytes}); }
    // inout = in op inout (elements of the bound op's datatype).
    void reduce(const void *in, void *inout, size_t count) { add({coll_step::kind::reduce, 0, in, inout, count}); }
    void copy(const void *src, void *dst, size_t bytes) {
        if (bytes != 0 && src != dst) add({coll_step::kind::copy, 0, src, dst, bytes});
    }
    void unpack(const void *src, void *dst, size_t count, const datatype *type) {
        add({coll_step::kind::unpack, 0, src, dst, count, type});
    }
    // count elements of type at src into the contiguous dst, when the step runs (not at the
    // call): the image of a derived-type send buffer.
    void pack(const void *src, void *dst, size_t count, const datatype *type) {
        add({coll_step::kind::pack, 0, src, dst, count, type});
    }
    // Closes the current round; sends and receives of one round must precede its local steps.
    void end_round() {
        if (round_end.empty() ? !steps.empty() : round_end.back() != steps.size())
            round_end.push_back(static_cast<uint32_t>(steps.size()));
    }

  private:
    void add(const coll_step &s) { steps.push_back(s); }
};

// Starts s on its endpoint (the caller holds it): posts the first round and links s into the
// endpoint's active list unless it finished at once.  Returns false when it finished.
bool coll_sched_start(coll_sched &s);
// Ends s with WEFT_ERR_PROC_FAILED because a member of its communicator died: cancels its
// pending receives; it finishes once what it posted has completed (caller holds the endpoint).
void coll_sched_abort(coll_sched &s);
// Runs s to completion from the calling thread (blocking collectives); returns its error.
int coll_sched_run(coll_sched &s);

}  // namespace weft
