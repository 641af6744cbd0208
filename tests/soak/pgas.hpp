// PGAS rounds: 1..5 active messages from the thread's kernel to random kernels (own and
// same-process ones included): Short (user handlers, WEFT_AM_H_INCR, WEFT_AM_H_ADD), Medium from
// a buffer or the segment, Long from a buffer or the segment, strided Long, get; some
// WEFT_AM_ASYNC, some answered by the handler with weft_am_reply_short.  Handlers regenerate the
// sender's plan from (source kernel, round, index) carried in args[0] and check everything;
// each message is handled exactly once.
//
// Segment layout: a constant source area per kernel (only read), the area this kernel's gets
// land in, then the Long destinations: a slot per (sender, round mod K), which the agreement
// every K rounds makes safe to reuse.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "weft/weft.h"

namespace soak {

struct thread_ctx;

constexpr size_t SRC_SZ = 256 * 1024;  // [0, SRC_SZ): a constant pattern per kernel, only read
constexpr size_t GET_LO = SRC_SZ;      // [GET_LO, GET_LO + GET_SZ): where this kernel's gets land
constexpr size_t GET_SZ = 256 * 1024;
constexpr size_t DST_LO = GET_LO + GET_SZ;  // Long destinations: a slot per (sender, round mod K)
constexpr size_t AREA = 128 * 1024;
extern int g_nk;  // kernels in the job
extern size_t g_max_medium, g_max_long, g_seg_size;

uint64_t srcarea_key(int kernel);

enum am_kind { A_SHORT, A_BUILTIN, A_MEDIUM, A_MEDIUM_SEG, A_LONG, A_LONG_SEG, A_STRIDED, A_GET };

struct am_msg {
    am_kind kind = A_SHORT;
    int dst = 0;
    unsigned handler = 0, flags = 0, nargs = 0;
    bool want_reply = false;
    size_t len = 0, src_off = 0, dst_off = 0;
    weft_am_stride s{}, d{};  // strided: source (sender's segment) and destination
    uint64_t counter = 0;     // builtin: what the target's counter gains
    uint64_t args[WEFT_AM_MAX_ARGS] = {};
};

struct am_round {
    uint32_t round = 0;
    std::vector<am_msg> plan;
    std::vector<int> replies, get_calls;  // handler calls seen per message
};

struct kernel_state {
    weft_pgas k = WEFT_PGAS_NULL;
    int id = -1;
    uint8_t *base = nullptr;
    size_t size = 0;
    std::atomic<uint64_t> handled{0}, handled_bytes{0}, replies{0}, get_calls{0};
    std::atomic<am_round *> cur{nullptr};  // the round this kernel is sending in (its thread's)
    std::mutex seen_mu;
    std::unordered_set<uint64_t> seen;  // (source kernel, round, index) since the last agreement
};

// Thread T's kernel in the context: its id, segment (source area filled) and handlers.
void attach_kernel(weft_pgas pgas, thread_ctx &T);
// A pgas round: sends the kernel's messages and waits for their replies, handler replies and gets.
void round_pgas(thread_ctx &T, uint32_t r);
// Counts what the kernels in pgas rounds send to this thread's kernel in round r.
void account_incoming(thread_ctx &T, uint32_t r);
// After the last round: the segment's source area untouched, no packet dropped.
void final_pgas_checks(thread_ctx &T);

}  // namespace soak
