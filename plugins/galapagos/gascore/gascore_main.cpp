/* weft-gascore: the GAScore functional model, standing where an FPGA node would in a Galapagos
 * cluster.
 *
 *   weft-gascore --cluster FILE --node INDEX [--segment BYTES] [--param KEY=VALUE]... [--quiet]
 *
 * Hosts the kernels the cluster file places on hardware node INDEX, each with --segment bytes
 * of memory (default 16 MiB; K, M, G suffixes allowed), runs their functions, and serves
 * Shoal active messages over TCP until SIGTERM or SIGINT.  Exit: 0 after a signal, 2 for a bad
 * command line or cluster file, 1 when it cannot listen. */
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "gal_cluster.hpp"
#include "gal_wire.hpp"
#include "gascore_kernels.hpp"
#include "gascore_net.hpp"
#include "gascore_node.hpp"
#include "gascore_stats.hpp"

namespace {

constexpr size_t default_segment = size_t(16) << 20;
constexpr unsigned long long max_segment = 1ull << 36; /* 64 GiB per kernel */

struct options {
    std::string cluster;
    int node = -1;
    size_t segment = default_segment;
    std::map<std::string, std::string> params;
    bool quiet = false;
};

void usage(FILE *to) {
    std::fprintf(to,
                 "usage: weft-gascore --cluster FILE --node INDEX [--segment BYTES] "
                 "[--param KEY=VALUE]... [--quiet]\n"
                 "  --cluster FILE     Galapagos cluster file (JSON)\n"
                 "  --node INDEX       the hardware node of FILE this process models\n"
                 "  --segment BYTES    memory per hosted kernel (default 16M; K/M/G suffixes)\n"
                 "  --param KEY=VALUE  a parameter for the kernel functions (jacobi: n, iters,\n"
                 "                     kernels, max_long)\n"
                 "  --quiet            no log line per refused connection or dropped packet\n"
                 "kernel functions: %s\n"
                 "job token: WEFT_GALAPAGOS_TOKEN, else WEFT_JOB_TOKEN\n",
                 gascore::kernel_function_names().c_str());
}

[[noreturn]] void bad_usage(const std::string &why) {
    std::fprintf(stderr, "weft-gascore: %s\n", why.c_str());
    usage(stderr);
    std::exit(2);
}

bool parse_unsigned(const char *s, unsigned long long max, unsigned long long &out, bool suffixes) {
    if (!*s || *s == '-' || *s == '+') return false;
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (errno || end == s) return false;
    if (suffixes && *end) {
        int shift = *end == 'K' || *end == 'k' ? 10
            : *end == 'M' || *end == 'm'       ? 20
            : *end == 'G' || *end == 'g'       ? 30
                                               : -1;
        if (shift < 0 || end[1] || v > (max >> shift)) return false;
        v <<= shift;
        ++end;
    }
    if (*end || v > max) return false;
    out = v;
    return true;
}

options parse_options(int argc, char **argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i], value;
        bool has_value = false;
        if (size_t eq = arg.find('=');
            arg.rfind("--", 0) == 0 && eq != std::string::npos && arg.compare(0, 7, "--param") != 0) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            has_value = true;
        } else if (arg.rfind("--param=", 0) == 0) {
            value = arg.substr(8);
            arg = "--param";
            has_value = true;
        }
        auto take = [&]() -> std::string {
            if (has_value) return value;
            if (i + 1 >= argc) bad_usage(arg + " needs a value");
            return argv[++i];
        };
        if (arg == "--help" || arg == "-h") {
            usage(stdout);
            std::exit(0);
        } else if (arg == "--quiet") {
            o.quiet = true;
        } else if (arg == "--cluster") {
            o.cluster = take();
        } else if (arg == "--node") {
            std::string v = take();
            unsigned long long n;
            if (!parse_unsigned(v.c_str(), 255, n, false)) bad_usage("--node " + v + ": expected a node index 0..255");
            o.node = int(n);
        } else if (arg == "--segment") {
            std::string v = take();
            unsigned long long n;
            if (!parse_unsigned(v.c_str(), max_segment, n, true) || n == 0)
                bad_usage("--segment " + v + ": expected a size in bytes, 1 .. 64G");
            o.segment = size_t(n);
        } else if (arg == "--param") {
            std::string v = take();
            size_t eq = v.find('=');
            if (eq == 0 || eq == std::string::npos) bad_usage("--param " + v + ": expected KEY=VALUE");
            o.params[v.substr(0, eq)] = v.substr(eq + 1);
        } else {
            bad_usage("unknown argument " + std::string(argv[i]));
        }
    }
    if (o.cluster.empty()) bad_usage("--cluster FILE is required");
    if (o.node < 0) bad_usage("--node INDEX is required");
    return o;
}

}  // namespace

int main(int argc, char **argv) {
    options opt = parse_options(argc, argv);
    gascore::set_quiet(opt.quiet);

    gal::cluster cluster;
    std::string why;
    if (!gal::cluster_load(opt.cluster.c_str(), cluster, why)) {
        std::fprintf(stderr, "weft-gascore: %s\n", why.c_str());
        return 2;
    }
    const gal::cluster_node *me = cluster.node(opt.node);
    if (!me) {
        std::fprintf(stderr, "weft-gascore: %s: node %d is not defined\n", opt.cluster.c_str(), opt.node);
        return 2;
    }
    if (!me->hardware) {
        std::fprintf(stderr, "weft-gascore: %s: node %d is a software node (\"sw\"), not \"hw\"\n", opt.cluster.c_str(),
                     opt.node);
        return 2;
    }
    const char *token_text = std::getenv("WEFT_GALAPAGOS_TOKEN");
    if (!token_text || !*token_text) token_text = std::getenv("WEFT_JOB_TOKEN");
    if (!token_text || !*token_text) {
        std::fprintf(stderr,
                     "weft-gascore: no job token: set WEFT_GALAPAGOS_TOKEN (or "
                     "WEFT_JOB_TOKEN) to the job's token, as for the Weft processes\n");
        return 2;
    }

    /* Signals arrive through a descriptor the accept loop watches; every thread created
     * from here on inherits the mask, so none of them is interrupted. */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    pthread_sigmask(SIG_BLOCK, &mask, nullptr);
    signal(SIGPIPE, SIG_IGN);
    int signal_fd = signalfd(-1, &mask, SFD_CLOEXEC);
    if (signal_fd < 0) {
        std::fprintf(stderr, "weft-gascore: signalfd: %s\n", std::strerror(errno));
        return 1;
    }

    gascore::stats counters;
    gascore::network net(cluster, opt.node, gal::key_from_text(token_text), counters);
    gascore::node model(cluster, opt.node, opt.segment, opt.params, counters, net);
    if (!model.configure(why)) {
        std::fprintf(stderr, "weft-gascore: %s: %s\n", opt.cluster.c_str(), why.c_str());
        return 2;
    }
    std::vector<int> ids;
    std::string id_list;
    for (const auto &k : model.kernels()) {
        ids.push_back(k->id);
        id_list += (id_list.empty() ? "" : ",") + std::to_string(k->id);
    }
    net.set_local_kernels(ids);
    net.set_deliver([&model](const gal::packet_header &h, const uint8_t *data, size_t len) {
        model.receive(h.src, h.dest, data, len);
    });
    if (!net.listen(why)) {
        std::fprintf(stderr, "weft-gascore: %s\n", why.c_str());
        return 1;
    }
    model.start_kernels();
    std::printf("weft-gascore: node %d listening on %s:%u, kernels %s\n", opt.node, me->host.c_str(),
                unsigned(me->port), id_list.empty() ? "none" : id_list.c_str());
    std::fflush(stdout);

    net.accept_until(signal_fd);

    /* Sockets first (a kernel may be blocked writing), then kernels, then readers. */
    net.shut_down();
    model.stop_kernels();
    net.join();
    gascore::log_always("%s", counters.summary().c_str());
    for (const auto &k : model.kernels())
        gascore::log_always("kernel %d: mem_ready %llu, barrier %llu, counter %llu", k->id,
                            (unsigned long long)k->mem_ready, (unsigned long long)k->barrier,
                            (unsigned long long)k->counter);
    close(signal_fd);
    return 0;
}
