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
    // flag_set and flag_wait work on 64-bit flags in memory shared with other processes
    // (coll_shm.hpp): a release store, and a wait for `peer` flags 64 bytes apart to reach a
    // value (acquire), which leaves the schedule where it is until they do.  size_check
    // compares the size a process wrote into shared memory with the size expected from it.
    enum class kind : uint8_t { send, recv, reduce, copy, unpack, pack, flag_set, flag_wait, size_check };
    kind k;
    int peer = 0;                    // send/recv/size_check: rank in the communicator; flag_wait: flags
    const void *src = nullptr;       // send data; reduce `in`; copy/unpack source; flag_wait: first flag;
                                     // size_check: the size written
    void *dst = nullptr;             // recv buffer; reduce `inout`; copy/unpack destination; flag_set: flag
    size_t n = 0;                    // send/recv/copy: bytes; reduce, unpack: elements; flags: value;
                                     // size_check: the bytes expected
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
    size_t posted = 0;       // requests of the current round in flight
    bool in_locals = false;  // running the current round's local steps, from local_next
    size_t local_next = 0;
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
    // *flag = value (release), for the processes that wait on it.
    void set_flag(uint64_t *flag, uint64_t value) { add({coll_step::kind::flag_set, 0, nullptr, flag, value}); }
    // Waits until count flags, 64 bytes apart from first, are all >= value (acquire).
    void wait_flags(const uint64_t *first, int count, uint64_t value) {
        if (count > 0) add({coll_step::kind::flag_wait, count, first, nullptr, value});
    }
    // Fails the schedule with WEFT_ERR_TRUNCATE, as a receive of another size would, unless
    // *written (what rank peer stored, read after a wait on its flag) is bytes.
    void check_size(const uint64_t *written, int peer, size_t bytes) {
        add({coll_step::kind::size_check, peer, written, nullptr, bytes});
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
