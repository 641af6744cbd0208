// weft-soak's options (listed in the header of soak.cpp) and the shape of the job.
#pragma once
#include <cstddef>
#include <cstdint>

namespace soak {

struct options {
    double seconds = 120;
    int threads = 2;
    uint64_t seed = 0;
    bool seed_given = false;
    size_t max_size = size_t(1) << 20;
    uint64_t max_rounds = 0;
    uint32_t check_every = 8;
    double watchdog = 60;
    bool progress_threads = false;
};
extern options opt;
extern int g_rank, g_size;  // this process's rank and the job's size on WEFT_COMM_WORLD
extern int g_threads;       // threads per process (--threads)

// Prints why and the usage line (rank 0 only) and exits with status 2.
[[noreturn]] void usage(const char *why);
// Fills opt from the command line (after weft_init, so that only rank 0 complains).
void parse_args(int argc, char **argv);

}  // namespace soak
