/* weft-conformance, the plugin conformance kit: declarations shared by its driver
 * (conformance_main.cpp), its report (kit_report.cpp) and its multi-process part
 * (kit_mp_launch.cpp, kit_mp_worker.cpp). */
#ifndef WEFT_CONFORMANCE_KIT_HPP
#define WEFT_CONFORMANCE_KIT_HPP

#include <string>
#include <vector>

namespace kit {

/* The plugin under test, as the summary line and the multi-process part need it. */
struct Target {
    std::string kind;    /* "fabric" or "queue" */
    std::string path;    /* the plugin file, absolute, symbolic links kept */
    std::string name;    /* the descriptor's name ("" when it could not be read) */
    std::string version; /* the descriptor's version */
    unsigned abi_major = 0, abi_minor = 0;
};

/* ---- kit_report.cpp ---- */
/* Installs the one-line-per-test printer; verbose keeps GoogleTest's own printer too. */
void report_install(bool verbose);
/* One result line ("PASS", "SKIP" or "FAIL"), counted in the summary.  detail may hold several
 * lines: the first goes on the result line, the others (at most a few) indented below it. */
void report_result(const char *verdict, const std::string &test, const std::string &detail = {});
struct Counts {
    int passed = 0, failed = 0, skipped = 0;
};
Counts report_counts();
/* The summary line: weft-conformance: fabric "ucx" (/path, ABI 1.3): N passed, F failed, S skipped */
void report_summary(const Target &t);

/* ---- GoogleTest filter syntax (POSITIVE[-NEGATIVE], ':'-separated globs with * and ?) ---- */
bool filter_matches(const std::string &filter, const std::string &full_name);

/* ---- the multi-process part: kit_mp_launch.cpp (parent), kit_mp_worker.cpp (workers) ---- */
/* Carries the plugin descriptor's version from the parent to the workers. */
inline constexpr const char *mp_env_version = "WEFT_CONFORMANCE_MP_VERSION";
/* Names of the multi-process checks ("Multiprocess.PingPongSizes", ...), in the order they run. */
std::vector<std::string> mp_check_names();
struct MpOptions {
    int np = 2;
    int timeout_s = 120;             /* the whole job (weftrun --timeout) */
    bool verbose = false;            /* echo the job's output */
    std::vector<std::string> checks; /* the checks to run (a subset of mp_check_names()) */
};
/* Runs the checks through weftrun and reports each with report_result. */
void mp_run(const Target &t, const MpOptions &opt);
/* The worker side: argv holds --mp-worker and the --mp-* options; the process was started by
 * weftrun with WEFT_FABRIC set.  Returns the exit status. */
int mp_worker_main(int argc, char **argv);

}  // namespace kit

#endif
