// Work a layer registers to be done at shutdown, as MPICH's MPIR_Add_finalize: each layer adds
// its own finalizer when it first has something to undo, so the shutdown path (init/init.cpp)
// names nothing it does not own.  Hooks run highest priority first; those above
// finalize_prio_endpoints run before the endpoints' connections are flushed and closed, the
// others after.
#pragma once
#include <climits>

namespace weft {

enum finalize_priority : int {
    finalize_prio_enqueue = 400,         // the enqueue thread, before the streams it serves
    finalize_prio_streams = 300,         // streams and their progress threads
    finalize_prio_queue_plugins = 200,   // GPU runtimes, once no stream uses them
    finalize_prio_pgas = 100,            // PGAS contexts withdraw their receives
    finalize_prio_endpoints = 0,         // (the shutdown path flushes and closes endpoints here)
    finalize_prio_comms = -100,          // communicators, once no endpoint is open
    finalize_prio_ops = -200,            // user ops
};

// Registers fn (once: a second call with the same fn does nothing); any thread.
void finalize_hook_add(void (*fn)(), int priority);
// Runs the hooks registered with a priority above `floor`, highest first, each once, and
// forgets them.
void finalize_hooks_run(int floor = INT_MIN);

}  // namespace weft
