// Bootstrap: who am I, how many are we, and a key-value exchange to swap endpoint addresses.
// Implementations: weftrun (tools/weftrun's key-value server), PMIx, PMI-1 wire protocol on
// PMI_FD (MPICH hydra), and singleton (no launcher: rank 0 of 1).
#pragma once
#include <memory>
#include <string>
#include <string_view>

namespace weft {

class bootstrap {
  public:
    virtual ~bootstrap() = default;
    virtual const char *name() const = 0;  // "weftrun", "pmix", "pmi1", "singleton"
    virtual int rank() const = 0;
    virtual int size() const = 0;
    // Publishes key=value for this process.  Values are arbitrary bytes (implementations
    // encode and split them as their transport requires).  Returns a WEFT_ERR_* code.
    virtual int put(std::string_view key, std::string_view value) = 0;
    // Makes every put before it visible to all processes; also a barrier.
    virtual int fence() = 0;
    // Reads key as published by process `rank` (after a fence).
    virtual int get(int rank, std::string_view key, std::string &value) = 0;
    // Tells the launcher to end the job with this exit code; does not return on success.
    virtual void abort(int code, std::string_view message) = 0;
    // Leaves the job cleanly (weft_finalize).
    virtual int finalize() = 0;
    // Tells the launcher that world rank `rank` failed though its process may still run (not
    // responding, unreachable; `why` says which), so that it ends that process and stops
    // waiting for it in fences.  Called by the liveness monitor's thread, also while another
    // thread waits in a call above; best effort, waits at most about a second.  Launchers
    // without such a request (PMIx, PMI-1) are not told.
    virtual void report_failed(int rank, std::string_view why) {
        (void)rank;
        (void)why;
    }
    // True when the launcher connection is shared with another library in this process that
    // may end it before weft_finalize (PMI-1 beside an MPI library): weft_init then reads
    // every key it will need right after its fence, and later fences do not use the launcher.
    virtual bool launcher_shared() const { return false; }
};

// Picks the implementation from the environment, in order: WEFT_KVS (weftrun), PMIX_RANK +
// PMIX_NAMESPACE (PMIx), PMI_FD (PMI-1), else singleton.  On failure returns a WEFT_ERR_*
// code with the detail recorded through weft::fail (naming the variable involved).
int bootstrap_open(std::unique_ptr<bootstrap> &out);

}  // namespace weft
