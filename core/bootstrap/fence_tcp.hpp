// A barrier over TCP among the processes of a job, for a bootstrap whose launcher connection may
// close before weft_finalize: MPICH's hydra closes a process's PMI-1 connection once that
// process sends PMI finalize, which an MPI library in the same process does in MPI_Finalize.
// Star-shaped: rank 0 listens (on net_pick_address, with a random token), every other rank
// connects once at open; a fence is one byte up from each process and one byte down.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace weft {

class fence_tcp {
  public:
    fence_tcp() = default;
    fence_tcp(const fence_tcp &) = delete;
    fence_tcp &operator=(const fence_tcp &) = delete;
    ~fence_tcp() { close(); }

    // Rank 0: opens the listener and returns in `published` what the others need to connect
    // ("<IPv4> <port> <token>"); other ranks: nothing to do.  Before the launcher's fence.
    int listen(int rank, int size, std::string &published);
    // After the launcher's fence: ranks > 0 connect to `published` (rank 0's); rank 0 accepts
    // the size-1 connections that present its token (others are refused and counted), within
    // timeout_s.
    int connect(const std::string &published, int timeout_s);
    // A barrier over the channel (WEFT_ERR_BOOTSTRAP with the detail when a process left or
    // timeout_s passed).
    int fence(int timeout_s);
    void close();

  private:
    int rank_ = -1, size_ = 0;
    int listen_fd_ = -1;
    int up_ = -1;             // ranks > 0: the connection to rank 0
    std::vector<int> peers_;  // rank 0: indexed by rank - 1
    uint64_t token_ = 0;
};

}  // namespace weft
