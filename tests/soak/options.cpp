// weft-soak's command line.
#include "options.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace soak {

options opt;
int g_rank = -1, g_size = 0;
int g_threads = 0;

[[noreturn]] void usage(const char *why) {
    if (g_rank <= 0)
        std::fprintf(stderr,
                     "weft-soak: %s\nusage: weftrun -n 4 weft-soak [--seconds S] [--threads T] [--seed N] "
                     "[--max-size BYTES] [--rounds N] [--check-every K] [--watchdog S] [--progress-threads]\n",
                     why);
    std::exit(2);
}

namespace {

uint64_t parse_u64(const char *name, const char *v) {
    char *end = nullptr;
    errno = 0;
    unsigned long long x = std::strtoull(v, &end, 0);
    if (errno || !end || *end || !*v) usage((std::string("bad value for ") + name + ": " + v).c_str());
    return x;
}

}  // namespace

void parse_args(int argc, char **argv) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i], val;
        bool has_val = false;
        size_t eq = a.find('=');
        if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
            val = a.substr(eq + 1);
            a = a.substr(0, eq);
            has_val = true;
        }
        auto value = [&]() -> std::string {
            if (has_val) return val;
            if (i + 1 >= argc) usage((a + " needs a value").c_str());
            return argv[++i];
        };
        if (a == "--seconds") {
            std::string v = value();
            char *end = nullptr;
            opt.seconds = std::strtod(v.c_str(), &end);
            if (!end || *end || opt.seconds < 0) usage(("bad value for --seconds: " + v).c_str());
        } else if (a == "--threads") {
            opt.threads = int(parse_u64("--threads", value().c_str()));
            if (opt.threads < 1 || opt.threads > 8) usage("--threads must be 1..8");
        } else if (a == "--seed") {
            opt.seed = parse_u64("--seed", value().c_str());
            opt.seed_given = true;
        } else if (a == "--max-size") {
            opt.max_size = size_t(parse_u64("--max-size", value().c_str()));
        } else if (a == "--rounds") {
            opt.max_rounds = parse_u64("--rounds", value().c_str());
        } else if (a == "--check-every") {
            opt.check_every = uint32_t(parse_u64("--check-every", value().c_str()));
            if (opt.check_every < 1 || opt.check_every > 16)
                usage("--check-every must be 1..16 (tags keep the round modulo 32)");
        } else if (a == "--watchdog") {
            std::string v = value();
            opt.watchdog = std::atof(v.c_str());
            if (opt.watchdog <= 0) usage(("bad value for --watchdog: " + v).c_str());
        } else if (a == "--progress-threads") {
            opt.progress_threads = true;
        } else if (a == "-h" || a == "--help") {
            usage("a bounded stress test");
        } else {
            usage(("unknown argument " + a).c_str());
        }
    }
}

}  // namespace soak
