/* Harness of the queue conformance suite: loads a queue plugin by path, opens its runtime and
 * gets native queues from the plugin itself (queue_create, ABI minor 3) to attach to, then
 * drives points and copies the way the core's enqueue engine does.
 *
 * Every suite of the queue part is named Queue* (the program selects them with the GoogleTest
 * filter "Queue*" for --queue and leaves them out for --fabric).  Outcomes:
 *   - no plugin given: skipped;
 *   - the plugin cannot be loaded or is not a queue plugin of ABI 1.2+: every test fails with
 *     that reason;
 *   - its vendor library is missing (dlopen) or init says WEFT_PLUGIN_ERR_NO_DEVICE: every test
 *     is skipped with "no device: <why>";
 *   - no queue_create (ABI 1.2, or NULL): the tests that need a queue are skipped, the others
 *     run. */
#ifndef WEFT_CONFORMANCE_QUEUE_HARNESS_HPP
#define WEFT_CONFORMANCE_QUEUE_HARNESS_HPP

#include <weft/plugin.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace conformance {

/* Loads the queue plugin at path (dlopen RTLD_NOW|RTLD_LOCAL, never closed).  When it was never
 * called, the first test selects $WEFT_CONFORMANCE_QUEUE_PLUGIN (if set). */
void queue_plugin_select(const std::string &path);

struct LoadedQueuePlugin {
    std::string path;
    std::string error;     /* why it cannot be tested: every test fails with it */
    std::string no_device; /* its vendor library is missing: every test skips with it */
    std::string no_create; /* why no native queue can be made; empty when queue_create works */
    const weft_plugin_v1_t *desc = nullptr;
    /* The part of the plugin's table that its ABI minor defines; later operations are NULL. */
    weft_queue_ops_v1_t ops{};
};

const LoadedQueuePlugin &queue_plugin();
/* Host services given to init: log prints to stderr up to $WEFT_LOG (error|warn|info|debug,
 * default warn); no hints. */
const weft_plugin_host_t *queue_host();

/* Deadline of every wait of the suite: a plugin that stops making progress fails, never hangs. */
constexpr std::chrono::milliseconds queue_deadline{10000};

/* Serial-number order of points: a is b or later (they wrap). */
inline bool serial_ge(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) >= 0; }
/* The number after v; 0 is skipped, as the core does (reached() is 0 before the first signal). */
inline uint32_t serial_next(uint32_t v) { return v + 1 == 0 ? 1 : v + 1; }

const char *sync_name(int sync); /* "memops", "hostfn" */

/* Byte pattern that differs per seed and per position; queue_check: index of the first wrong
 * byte, or n when all are right. */
void queue_fill(void *p, size_t n, uint32_t seed);
size_t queue_check(const void *p, size_t n, uint32_t seed);

/* A native queue made by queue_create and attached, with the suite's bookkeeping. */
struct TestQueue {
    std::vector<uint8_t> handle; /* its bytes, as attach takes them */
    bool created = false;        /* queue_destroy still due */
    weft_queue_t *q = nullptr;   /* attached */
    int sync_requested = 0;
    int sync_used = 0;
    uint32_t next = 1;        /* the number of the next point */
    uint32_t last_signal = 0; /* the last signal appended, 0 before the first */
    uint32_t last_wait = 0;   /* the last wait appended, 0 before the first */
    bool any_wait = false;
    bool tail_is_signal = true; /* nothing, or a signal, was appended last */
    uint32_t seen = 0;          /* the last reached() value the suite observed */
    bool stuck = false;         /* did not finish in time: left alone (leaked) */
};

/* A test with the plugin's runtime open.  SetUp skips or fails as described at the top;
 * TearDown releases every queue's waits, waits for its last signal, detaches, destroys and
 * finalizes, and fails when a step does. */
class QueueTest : public ::testing::Test {
  protected:
    void SetUp() override;
    void TearDown() override;

    const weft_queue_ops_v1_t &ops() const { return queue_plugin().ops; }

    /* A new native queue, attached with sync.  nullptr after GTEST_SKIP (no queue_create) or a
     * failure: `TestQueue *q = make_queue(); if (!q) return;`. */
    TestQueue *make_queue(int sync = WEFT_QUEUE_SYNC_MEMOPS);
    /* queue_create only (not attached); nullptr as make_queue. */
    TestQueue *create_queue();
    /* attach of tq's handle as types[0]; sets tq.q and tq.sync_used on success. */
    int attach(TestQueue &tq, int sync, char *why, size_t why_len);
    /* attach with any arguments (get_hex answers NOT_FOUND for every key). */
    int attach_raw(const char *type, const void *handle, size_t size, int sync, weft_queue_t **q, int *sync_used,
                   char *why, size_t why_len);
    /* detach (everything appended must have executed) and queue_destroy (bounded in time). */
    void detach(TestQueue &tq);
    void destroy(TestQueue &tq);

    /* Numbers for the next point: take() returns tq.next and advances it. */
    static uint32_t take(TestQueue &tq);
    /* Appends, retried while the plugin says WEFT_PLUGIN_ERR_AGAIN (calling reached() in
     * between when help_reached_, as the core's progress thread would, for up to
     * queue_deadline).  Return the plugin's final code; bookkeeping follows successes. */
    int signal(TestQueue &tq, uint32_t value);
    int wait(TestQueue &tq, uint32_t value);
    int copy(TestQueue &tq, void *dst, const void *src, size_t bytes);
    /* Conveniences: take() and append, EXPECTing OK; return the point's number. */
    uint32_t add_signal(TestQueue &tq);
    uint32_t add_wait(TestQueue &tq);

    /* reached(), checked: it never goes back in serial order (a failure when it does). */
    uint32_t reached(TestQueue &tq);
    /* Polls until reached() is value or later; false (and a failure) after timeout. */
    bool wait_reached(TestQueue &tq, uint32_t value, std::chrono::milliseconds timeout = queue_deadline);
    /* true when reached() stays before value for d (a stopped queue). */
    bool stays_before(TestQueue &tq, uint32_t value, std::chrono::milliseconds d);
    void release(TestQueue &tq, uint32_t value);
    /* Appends signal, wait, signal; the first signal is reached, the wait released, the second
     * reached.  false (and a failure) when a signal is not reached. */
    bool pass_one_wait(TestQueue &tq);

    /* Memory for copies: host_alloc on tq's queue (pinned) or malloc; nullptr and a failure
     * when it cannot be had.  Freed by TearDown once every queue has drained (leaked when one
     * did not, as a queue may still copy into it), or by free_now. */
    void *alloc(TestQueue &tq, size_t bytes, bool pinned);
    int free_now(void *p); /* host_free's code for pinned memory, OK for malloc'd */

    /* Releases every wait of tq, ends it with a signal and waits for that: everything appended
     * has executed.  false (a failure, the queue marked stuck) when it does not in time. */
    bool drain(TestQueue &tq);
    /* drain, detach, queue_destroy: all TearDown does for one queue; false when it failed. */
    bool finish(TestQueue &tq);
    /* finalize and init again (the queues must be finished). */
    void reopen_runtime();

    weft_queue_runtime_t *rt_ = nullptr;
    std::deque<TestQueue> queues_; /* stable addresses */
    struct Alloc {
        TestQueue *tq;
        void *p;
        bool pinned;
    };
    std::vector<Alloc> allocs_;
    bool help_reached_ = true;  /* appends retrying on AGAIN may call reached() */
    bool leak_runtime_ = false; /* a call hung: finalize would be unsafe */
};

/* Parameterized by the sync mode requested (WEFT_QUEUE_SYNC_*). */
class QueueSyncTest : public QueueTest, public ::testing::WithParamInterface<int> {};
/* The same with one queue attached in that mode (tq_), or the test skipped or failed. */
class QueueSyncOneQueueTest : public QueueSyncTest {
  protected:
    void SetUp() override;
    TestQueue *tq_ = nullptr;
};
std::string sync_param_name(const ::testing::TestParamInfo<int> &info);

/* Skips (no plugin given, no device) or fails (cannot load) the current test as the plugin's
 * state says; for tests without the QueueTest fixture.  Check IsSkipped()/HasFatalFailure()
 * after it. */
void require_queue_plugin();
/* init; on WEFT_PLUGIN_ERR_NO_DEVICE a skip with the plugin's reason, on another failure a
 * failure.  nullptr then. */
weft_queue_runtime_t *open_runtime();

/* Runs fn on a helper thread and waits at most timeout for it: false when it did not return
 * (the thread is left behind: the plugin call hung).  *rc: fn's result. */
bool run_bounded(std::function<int()> fn, int *rc, std::chrono::milliseconds timeout);

}  // namespace conformance

#endif
