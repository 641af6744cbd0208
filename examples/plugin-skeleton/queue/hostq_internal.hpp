// Internals of the hostq test runtime: the queue object, its operations, and the shared
// "memory was written" event that wakes waits.
#pragma once

#include "hostq.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

enum class hostq_op_kind { call, copy, write32, wait32 };

struct hostq_op {
    hostq_op_kind kind;
    void (*fn)(void *);
    void *arg;
    void *dst;
    const void *src;
    size_t n;
    volatile uint32_t *addr;
    uint32_t value;
};

struct hostq {
    std::mutex lock;                  // guards everything below but the thread itself
    std::condition_variable work_cv;  // worker: an operation arrived, or stopping
    std::condition_variable idle_cv;  // synchronize: the queue became empty and idle
    std::deque<hostq_op> ops;
    bool busy = false;  // the worker is running an operation it popped
    bool stopping = false;
    unsigned delay_us = 0;
    uint64_t executed = 0;
    std::thread worker;
};

// Registry of live queues (hostq_queue.cpp): lets a garbage handle be refused unread.
bool hostq_registry_contains(const hostq *q);

// Runs one popped operation on the worker (hostq_wait.cpp for waits).
void hostq_wait_execute(volatile uint32_t *addr, uint32_t value);
// Wakes every pending wait to re-check its word (memory is shared by all queues).
void hostq_mem_event_signal();
