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
