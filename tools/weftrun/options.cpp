// weftrun's command-line parser (hand-written: option parsing must stop at the program name).
#include "options.hpp"

#include <arpa/inet.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace weftrun {

namespace {

// Local jobs only: more processes than this is a typo, not a plan.
constexpr long max_ranks = 4096;

bool parse_long(const std::string &s, long lo, long hi, long &out) {
    if (s.empty()) return false;
    char *end = nullptr;
    errno = 0;
    long v = std::strtol(s.c_str(), &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
    out = v;
    return true;
}

bool valid_env_name(const std::string &s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

}  // namespace

const char *usage_text() {
    return "usage: weftrun -n N [-x VAR[=VALUE]]... [--fabric NAME] [--timeout SECONDS] [--kvs-host IP]\n"
           "               [--keep-going] prog [args...]\n"
           "  -n, -np N           start N processes (ranks 0..N-1) on this node\n"
           "  -x VAR[=VALUE]      export VAR to the ranks (VAR alone copies weftrun's value;\n"
           "                      the whole environment is inherited anyway)\n"
           "  --fabric NAME       set WEFT_FABRIC=NAME in the ranks\n"
           "  --timeout SECONDS   end the job if it runs longer than SECONDS\n"
           "  --kvs-host IP       the IPv4 address the key-value server listens on (127.0.0.1;\n"
           "                      another one lets ranks in other network namespaces join)\n"
           "  --keep-going        when a rank fails, let the others run on (they see the failure\n"
           "                      as WEFT_ERR_PROC_FAILED) instead of ending the job; the exit\n"
           "                      status is still the first failure's (hydra's\n"
           "                      -disable-auto-cleanup, also accepted); a rank another\n"
           "                      finds not responding or unreachable is ended once the\n"
           "                      others have ended (status 137)\n"
           "  -h, --help          show this text\n"
           "MPI programs: build with weftcc; one built against MPICH runs on Weft with\n"
           "LD_LIBRARY_PATH=<libdir>/weft-mpi, and with LD_BIND_NOW=1 it fails at load, naming\n"
           "the first MPI function Weft does not provide (docs/mpi.md).\n";
}

bool parse_options(int argc, char **argv, options &opt, std::string &why, std::vector<std::string> &warnings) {
    int i = 1;
    // Value of an option given as "--opt value" or "--opt=value".
    auto value_of = [&](const std::string &arg, const std::string &name, std::string &val) -> int {
        if (arg == name) {
            if (i + 1 >= argc) {
                why = "option " + name + " needs a value";
                return -1;
            }
            val = argv[++i];
            return 1;
        }
        if (arg.rfind(name + "=", 0) == 0) {
            val = arg.substr(name.size() + 1);
            return 1;
        }
        return 0;
    };
    for (; i < argc; ++i) {
        std::string arg = argv[i], val;
        if (arg == "--") {
            ++i;
            break;
        }
        if (arg.empty() || arg[0] != '-') break;  // the program
        if (arg == "-h" || arg == "--help") {
            opt.help = true;
            return true;
        }
        int r;
        if ((r = value_of(arg, "-n", val)) || (r = value_of(arg, "-np", val)) || (r = value_of(arg, "--np", val))) {
            if (r < 0) return false;
            long n;
            if (!parse_long(val, 1, max_ranks, n)) {
                why = "-n '" + val + "' is not a number of processes between 1 and " + std::to_string(max_ranks);
                return false;
            }
            opt.nranks = static_cast<int>(n);
        } else if ((r = value_of(arg, "-x", val))) {
            if (r < 0) return false;
            auto eq = val.find('=');
            std::string name = val.substr(0, eq);
            if (!valid_env_name(name)) {
                why = "-x '" + val + "': '" + name + "' is not a valid environment variable name";
                return false;
            }
            if (eq != std::string::npos) {
                opt.exports.emplace_back(name, val.substr(eq + 1));
            } else if (const char *v = std::getenv(name.c_str())) {
                opt.exports.emplace_back(name, v);
            } else {
                warnings.push_back("-x " + name + ": " + name + " is not set in weftrun's environment; not exported");
            }
        } else if (arg == "--keep-going" || arg == "-disable-auto-cleanup" || arg == "--disable-auto-cleanup") {
            opt.keep_going = true;
        } else if ((r = value_of(arg, "--fabric", val))) {
            if (r < 0) return false;
            if (val.empty()) {
                why = "--fabric needs a plugin name (e.g. ucx)";
                return false;
            }
            opt.fabric = val;
        } else if ((r = value_of(arg, "--timeout", val))) {
            if (r < 0) return false;
            long t;
            if (!parse_long(val, 1, 86400L * 365, t)) {
                why = "--timeout '" + val + "' is not a whole number of seconds >= 1";
                return false;
            }
            opt.timeout_s = static_cast<int>(t);
        } else if ((r = value_of(arg, "--kvs-host", val))) {
            if (r < 0) return false;
            in_addr a{};
            if (::inet_pton(AF_INET, val.c_str(), &a) != 1) {
                why = "--kvs-host '" + val + "' is not an IPv4 address";
                return false;
            }
            opt.kvs_host = val;
        } else {
            why = "unknown option '" + arg + "'";
            return false;
        }
    }
    for (; i < argc; ++i) opt.command.emplace_back(argv[i]);
    if (opt.nranks == 0) {
        why = "the number of processes is missing (give -n N)";
        return false;
    }
    if (opt.command.empty()) {
        why = "no program to run";
        return false;
    }
    return true;
}

}  // namespace weftrun
