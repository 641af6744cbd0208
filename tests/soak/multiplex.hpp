// Multiplex rounds: an exchange on mc between all (rank, thread) pairs whose thread is in a mux
// round too, from stream t to the peer's stream t' (weft_stream_isend/irecv), receives by exact
// index, WEFT_ANY_INDEX, WEFT_ANY_SOURCE, both, or WEFT_ANY_TAG; the status's stream_index
// checked.
#pragma once
#include <cstdint>

namespace soak {

struct thread_ctx;

void round_mux(thread_ctx &T, uint32_t r);

}  // namespace soak
