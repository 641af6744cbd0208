/* weft-conformance: the plugin conformance kit.
 *
 *   weft-conformance --fabric NAME|PATH [options] [gtest options]
 *   weft-conformance --queue NAME|PATH [options] [gtest options]
 *
 * Older forms still work: a bare plugin path (= --fabric PATH), or WEFT_CONFORMANCE_PLUGIN.
 * Exit status: 0 when nothing failed (skips are fine), 1 on failures, 2 on usage errors. */
#include "fabric_harness.hpp"
#include "kit.hpp"
#include "queue_harness.hpp"

#include <weft/plugin.h>
#include <weft/weft.h>

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int exit_usage = 2;

const char usage_text[] =
    "usage: weft-conformance --fabric NAME|PATH [options] [GoogleTest options]\n"
    "       weft-conformance --queue NAME|PATH [options] [GoogleTest options]\n"
    "Checks a Weft plugin against the contract of weft/plugin.h.\n"
    "  --fabric NAME|PATH  a fabric plugin: the file libweft-NAME.so (searched in\n"
    "                      $WEFT_PLUGIN_PATH, then in <libdir>/weft next to libweft.so),\n"
    "                      or the path of the plugin file (a value with a '/' or ending in .so)\n"
    "  --queue NAME|PATH   a queue plugin: libweft-queue-NAME.so, or its path\n"
    "  --np N              processes of the fabric's multi-process part (2)\n"
    "  --no-multiprocess   leave out the multi-process part (run through weftrun)\n"
    "  --mp-timeout S      end the multi-process part after S seconds (120)\n"
    "  --context-space N   bytes of context space offered to the fabric's endpoints\n"
    "                      (weft_fabric_ep_attr_t::context_space; 0..512; default: what\n"
    "                      the plugin asks in caps.context_space, as the Weft core gives;\n"
    "                      0 as a core older than ABI 1.6, 336 as a 1.6 core)\n"
    "  --verbose           GoogleTest's own output as well as the one-line results\n"
    "  --list              list the tests that would run, and exit\n"
    "  -h, --help          this text (--gtest_help: GoogleTest's options)\n"
    "GoogleTest options pass through, e.g. --gtest_filter=Matching.*:Multiprocess.*\n"
    "(fabric: every test but Queue*; queue: only Queue*; Multiprocess.* are the\n"
    "multi-process checks).  Exit status: 0 nothing failed, 1 failures, 2 usage error.\n";

int usage_error(const std::string &why) {
    fprintf(stderr, "weft-conformance: %s\n(weft-conformance --help for the options)\n", why.c_str());
    return exit_usage;
}

bool is_queue_suite(const std::string &suite) {
    /* Parameterised suites are "Prefix/Suite". */
    auto slash = suite.rfind('/');
    std::string base = slash == std::string::npos ? suite : suite.substr(slash + 1);
    return base.rfind("Queue", 0) == 0;
}

std::string dir_of(const std::string &path) {
    auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::string absolute(const std::string &path) {
    if (path.empty() || path[0] == '/') return path;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd))) return path;
    std::string p = path;
    while (p.rfind("./", 0) == 0) p.erase(0, 2);
    return std::string(cwd) + "/" + p;
}

bool is_file(const std::string &path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/* <libdir>/weft, libdir being where the libweft.so this program runs with lies (as the loader
 * in core/loader/loader.cpp finds it). */
std::string libweft_plugin_dir(std::string *libweft) {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(&weft_init), &info) == 0 || !info.dli_fname) return {};
    char resolved[PATH_MAX];
    std::string lib = realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
    if (libweft) *libweft = lib;
    return dir_of(lib) + "/weft";
}

/* Resolves NAME|PATH to a plugin file.  Returns "" with why filled when there is none. */
std::string resolve_plugin(const std::string &kind, const std::string &value, std::string &why) {
    if (value.find('/') != std::string::npos || (value.size() > 3 && value.compare(value.size() - 3, 3, ".so") == 0)) {
        std::string path = absolute(value);
        if (!is_file(path)) {
            why = kind + " plugin file " + value + " does not exist (or is not a file)";
            return {};
        }
        return path;
    }
    const std::string file = kind == "queue" ? "libweft-queue-" + value + ".so" : "libweft-" + value + ".so";
    std::vector<std::pair<std::string, std::string>> dirs; /* directory, where it came from */
    const char *env = getenv("WEFT_PLUGIN_PATH");
    if (env) {
        std::string s = env;
        size_t start = 0;
        while (start <= s.size()) {
            size_t end = s.find(':', start);
            if (end == std::string::npos) end = s.size();
            if (end > start) dirs.emplace_back(s.substr(start, end - start), "from WEFT_PLUGIN_PATH");
            start = end + 1;
        }
    }
    std::string libweft;
    std::string own = libweft_plugin_dir(&libweft);
    if (!own.empty()) dirs.emplace_back(own, "next to " + libweft);
    for (auto &[dir, from] : dirs) {
        std::string path = dir + "/" + file;
        if (is_file(path)) return absolute(path);
    }
    why = kind + " plugin \"" + value + "\" not found: no file " + file + " in";
    for (auto &[dir, from] : dirs) why += "\n  " + dir + " (" + from + ")";
    if (dirs.empty()) why += " any directory";
    why += std::string("\nWEFT_PLUGIN_PATH is ") + (env ? "\"" + std::string(env) + "\"" : "not set") +
        "; add the directory holding " + file + " to it, or pass the plugin file's path";
    /* The other kind under that name: a common slip. */
    const std::string other = kind == "queue" ? "libweft-" + value + ".so" : "libweft-queue-" + value + ".so";
    for (auto &[dir, from] : dirs)
        if (is_file(dir + "/" + other)) {
            why += "\n(" + dir + "/" + other + " is there: use --" + (kind == "queue" ? "fabric" : "queue") + " " +
                value + " for it)";
            break;
        }
    return {};
}

/* Reads the descriptor of a plugin file.  Returns false with why when it is no loadable Weft
 * plugin; the library stays loaded (the harness loads the same file next). */
bool read_descriptor(const std::string &path, const weft_plugin_v1_t **out, std::string &why) {
    dlerror();
    void *dl = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        why = std::string("dlopen failed: ") + (e ? e : "unknown error");
        return false;
    }
    auto *desc = static_cast<const weft_plugin_v1_t *>(dlsym(dl, WEFT_PLUGIN_SYMBOL));
    if (!desc) {
        why = "does not export the symbol " WEFT_PLUGIN_SYMBOL " (is it a Weft plugin built against weft/plugin.h?)";
        return false;
    }
    if (desc->abi_major != WEFT_PLUGIN_ABI_MAJOR) {
        why = "built for plugin ABI " + std::to_string(desc->abi_major) + "." + std::to_string(desc->abi_minor) +
            ", this Weft needs ABI " + std::to_string(WEFT_PLUGIN_ABI_MAJOR) +
            ".x; rebuild the plugin against this Weft";
        return false;
    }
    if (!desc->name || !desc->ops || (desc->kind != WEFT_PLUGIN_KIND_FABRIC && desc->kind != WEFT_PLUGIN_KIND_QUEUE)) {
        why = "malformed plugin descriptor (name, ops or kind missing)";
        return false;
    }
    *out = desc;
    return true;
}

/* The GoogleTest filter restricted to one kind's suites: the user's positive patterns stay,
 * every suite of the other kind joins the negative ones. */
std::string kind_filter(const std::string &user, bool queue) {
    std::string positive = user, negative;
    if (auto dash = user.find('-'); dash != std::string::npos) {
        positive = user.substr(0, dash);
        negative = user.substr(dash + 1);
    }
    if (positive.empty()) positive = "*";
    auto add = [&](const std::string &p) { negative += (negative.empty() ? "" : ":") + p; };
    if (!queue) add("Queue*");
    const ::testing::UnitTest &u = *::testing::UnitTest::GetInstance();
    for (int i = 0; i < u.total_test_suite_count(); ++i) {
        std::string suite = u.GetTestSuite(i)->name();
        if (queue ? !is_queue_suite(suite)
                  : is_queue_suite(suite) && suite.rfind("Queue", 0) != 0 /* "Queue*" has it */)
            add(suite + ".*");
    }
    return positive + "-" + negative;
}

bool parse_int(const std::string &s, int lo, int hi, int &out) {
    char *end = nullptr;
    long v = strtol(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || v < lo || v > hi) return false;
    out = static_cast<int>(v);
    return true;
}

}  // namespace

int main(int argc, char **argv) {
    for (int i = 1; i < argc; ++i)
        if (strcmp(argv[i], "--mp-worker") == 0) return kit::mp_worker_main(argc, argv);
    for (int i = 1; i < argc; ++i)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }

    ::testing::InitGoogleTest(&argc, argv); /* removes the options it knows */

    std::string kind, value, positional;
    bool verbose = false, list = false;
    kit::MpOptions mp;
    bool multiprocess = true;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i], val;
        /* "--opt value" or "--opt=value"; 1 taken, 0 not this option, -1 value missing. */
        auto value_of = [&](const char *name) -> int {
            std::string n = name;
            if (arg == n) {
                if (i + 1 >= argc) return -1;
                val = argv[++i];
                return 1;
            }
            if (arg.rfind(n + "=", 0) == 0) {
                val = arg.substr(n.size() + 1);
                return 1;
            }
            return 0;
        };
        int r;
        if ((r = value_of("--fabric")) || (r = value_of("--queue"))) {
            std::string k = arg.rfind("--fabric", 0) == 0 ? "fabric" : "queue";
            if (r < 0) return usage_error("--" + k + " needs a plugin name or path");
            if (!kind.empty())
                return usage_error("give one plugin: --" + kind + " " + value + " and --" + k + " " + val);
            if (val.empty()) return usage_error("--" + k + " needs a plugin name or path");
            kind = k;
            value = val;
        } else if ((r = value_of("--np"))) {
            if (r < 0 || !parse_int(val, 1, 256, mp.np))
                return usage_error("--np needs a number of processes between 1 and 256");
        } else if ((r = value_of("--mp-timeout"))) {
            if (r < 0 || !parse_int(val, 1, 86400, mp.timeout_s))
                return usage_error("--mp-timeout needs a number of seconds >= 1");
        } else if ((r = value_of("--context-space"))) {
            int n = 0;
            if (r < 0 || !parse_int(val, 0, static_cast<int>(conformance::kOpContextSpace), n))
                return usage_error("--context-space needs a number of bytes between 0 and " +
                                   std::to_string(conformance::kOpContextSpace));
            conformance::g_context_space = static_cast<size_t>(n);
        } else if (arg == "--no-multiprocess") {
            multiprocess = false;
        } else if (arg == "--verbose") {
            verbose = true;
        } else if (arg == "--list") {
            list = true;
        } else if (arg == "--gtest_help") {
            return 0; /* GoogleTest printed its options already */
        } else if (arg.rfind("--gtest_", 0) == 0) {
            return usage_error("unknown GoogleTest option '" + arg + "'");
        } else if (!arg.empty() && arg[0] == '-') {
            return usage_error("unknown option '" + arg + "'");
        } else if (positional.empty()) {
            positional = arg; /* the old form: a bare plugin path */
        } else {
            return usage_error("unexpected argument '" + arg + "'");
        }
    }
    if (!positional.empty()) {
        if (!kind.empty())
            return usage_error("unexpected argument '" + positional + "' (the plugin is given by --" + kind + ")");
        kind = "fabric";
        value = positional;
    }
    if (kind.empty()) {
        if (const char *env = getenv("WEFT_CONFORMANCE_PLUGIN"); env && *env) {
            kind = "fabric";
            value = env;
        }
    }
    const std::string user_filter = GTEST_FLAG_GET(filter);
    const bool queue = kind == "queue";
    if (GTEST_FLAG_GET(list_tests)) { /* GoogleTest lists and runs nothing */
        if (!kind.empty()) GTEST_FLAG_SET(filter, kind_filter(user_filter, queue));
        return RUN_ALL_TESTS();
    }
    std::vector<std::string> mp_checks;
    if (kind != "queue" && multiprocess)
        for (const std::string &c : kit::mp_check_names())
            if (kit::filter_matches(user_filter, c)) mp_checks.push_back(c);

    if (list) {
        /* Without a plugin: the tests of either kind. */
        const ::testing::UnitTest &u = *::testing::UnitTest::GetInstance();
        std::string filter = kind.empty() ? user_filter : kind_filter(user_filter, queue);
        for (int i = 0; i < u.total_test_suite_count(); ++i) {
            const ::testing::TestSuite &s = *u.GetTestSuite(i);
            for (int j = 0; j < s.total_test_count(); ++j) {
                const ::testing::TestInfo &t = *s.GetTestInfo(j);
                std::string name = std::string(s.name()) + "." + t.name();
                bool disabled = name.find("DISABLED_") != std::string::npos;
                if (kit::filter_matches(filter, name) && (!disabled || GTEST_FLAG_GET(also_run_disabled_tests)))
                    printf("%s\n", name.c_str());
            }
        }
        for (const std::string &c : mp_checks) printf("%s\n", c.c_str());
        return 0;
    }

    if (kind.empty()) return usage_error("no plugin given: --fabric NAME|PATH or --queue NAME|PATH");

    std::string why;
    kit::Target target;
    target.kind = kind;
    target.path = resolve_plugin(kind, value, why);
    if (target.path.empty()) {
        fprintf(stderr, "weft-conformance: %s\n", why.c_str());
        return exit_usage;
    }
    const weft_plugin_v1_t *desc = nullptr;
    if (!read_descriptor(target.path, &desc, why) && !queue) {
        /* Not loadable: the plugin fails the kit, nothing else can run.  (A queue plugin whose
         * GPU runtime is missing is the queue suite's to judge: its tests skip.) */
        kit::report_result("FAIL", "Plugin.Load", target.path + ": " + why);
        kit::report_summary(target);
        return 1;
    }
    if (desc && desc->kind != (queue ? WEFT_PLUGIN_KIND_QUEUE : WEFT_PLUGIN_KIND_FABRIC)) {
        const char *is = desc->kind == WEFT_PLUGIN_KIND_QUEUE ? "queue" : "fabric";
        fprintf(stderr,
                "weft-conformance: %s is a %s plugin (\"%s\"), not a %s plugin: check it with "
                "weft-conformance --%s %s\n",
                target.path.c_str(), is, desc->name, kind.c_str(), is, target.path.c_str());
        return exit_usage;
    }
    GTEST_FLAG_SET(filter, kind_filter(user_filter, queue));
    /* The descriptor as the harness loaded it (the harness refuses a wrong kind or ABI too). */
    if (queue) {
        conformance::queue_plugin_select(target.path);
        if (const weft_plugin_v1_t *d = conformance::queue_plugin().desc) desc = d;
    } else {
        conformance::plugin_select(target.path);
        if (const weft_plugin_v1_t *d = conformance::plugin().desc) desc = d;
    }
    if (desc) {
        target.name = desc->name;
        target.version = desc->version ? desc->version : "";
        target.abi_major = desc->abi_major;
        target.abi_minor = desc->abi_minor;
    }

    kit::report_install(verbose);
    int rc = RUN_ALL_TESTS();
    if (!queue && !mp_checks.empty()) {
        mp.verbose = verbose;
        mp.checks = mp_checks;
        kit::mp_run(target, mp);
    }
    kit::report_summary(target);
    return (rc != 0 || kit::report_counts().failed > 0) ? 1 : 0;
}
