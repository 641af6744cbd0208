// Peer liveness: one TCP connection between every two processes of the job, watched by one
// sleeping thread.  A process that dies (killed, crashed, or exited without weft_finalize)
// has its connections closed by its kernel, so every survivor learns of it within
// milliseconds, whatever the fabric and the launcher.  The thread also sends a heartbeat on
// each connection, whatever the application does: a process that stops sending it (stopped,
// wedged) is "not responding", and one whose node no longer answers is "unreachable", after
// WEFT_PEER_TIMEOUT seconds of silence (default 5; 0 turns the monitor off).  A process that
// finalizes says goodbye first, so its leaving is not a failure.  Failures go to
// peer_failure_record (peer_failure.hpp); those whose process may still run also go to the
// launcher (bootstrap::report_failed).
//
// Each listener accepts only connections that present its own random token (published with
// its address through the bootstrap) and listens on the job's interface only: WEFT_PEER_ADDR,
// else the address on the route to weftrun's key-value server, else the first IPv4 interface
// that is up.
#pragma once
#include <string>

namespace weft {

class bootstrap;

// Before the init fence: reads WEFT_PEER_TIMEOUT, opens the listener, publishes its address.
int liveness_open(bootstrap &boot, int rank, int size);
// After the fence: connects to the lower ranks and starts the monitor thread.
int liveness_start(bootstrap &boot);
// At finalize, once no process needs the others any more: goodbye, close, join.
void liveness_close();
// "IPv4:port" of this process's listener, or "" when the monitor is off.
std::string liveness_address();

}  // namespace weft
