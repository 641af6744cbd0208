// weft-test-rank SPEC...: a rank for weftrun's job-control tests.  Each SPEC is
// "<rank|all>/<action>"; the actions that match WEFT_RANK run in order:
//   ok        exit 0              exitN     exit N
//   segv      die by SIGSEGV      sleep     sleep 60 s, then exit 0
//   nap       sleep 1 s, exit 0   stubborn  ignore SIGTERM, then sleep 60 s
//   env       check the variables weftrun sets (exit 1 when one is wrong)
//   usr1exit3 wait (up to 60 s) for SIGUSR1, then exit 3 (a rank that saw a peer die)
//   has:VAR=VALUE  exit 1 unless VAR is VALUE
// When no action ends the process it exits 0.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

namespace {

int rank = -1;

int bad(const std::string &why) {
    std::fprintf(stderr, "weft-test-rank[%d]: %s\n", rank, why.c_str());
    return 1;
}

void nap(int seconds) {
    timespec t{seconds, 0};
    while (nanosleep(&t, &t) != 0) {}
}

long env_long(const char *name) {
    const char *v = std::getenv(name);
    if (!v || !*v) return -1;
    char *end;
    long x = std::strtol(v, &end, 10);
    return *end ? -1 : x;
}

int check_env() {
    long r = env_long("WEFT_RANK"), n = env_long("WEFT_SIZE");
    if (r < 0 || n < 1 || r >= n) return bad("WEFT_RANK/WEFT_SIZE missing or inconsistent");
    if (env_long("WEFT_LOCAL_RANK") != r || env_long("WEFT_LOCAL_SIZE") != n)
        return bad("WEFT_LOCAL_RANK/WEFT_LOCAL_SIZE do not match WEFT_RANK/WEFT_SIZE on one node");
    const char *kvs = std::getenv("WEFT_KVS");
    if (!kvs || std::strncmp(kvs, "127.0.0.1:", 10) != 0) return bad("WEFT_KVS is not 127.0.0.1:<port>");
    const char *tok = std::getenv("WEFT_JOB_TOKEN");
    if (!tok || std::strlen(tok) != 32 || std::strspn(tok, "0123456789abcdef") != 32)
        return bad("WEFT_JOB_TOKEN is not 32 hex digits");
    return -1;  // continue
}

// Returns an exit status, or -1 to go on with the next action.
int run(const std::string &action) {
    if (action == "ok") return 0;
    if (action.rfind("exit", 0) == 0) return std::atoi(action.c_str() + 4);
    if (action == "segv") {
        std::signal(SIGSEGV, SIG_DFL);
        std::raise(SIGSEGV);
        return bad("survived SIGSEGV");
    }
    if (action == "sleep") {
        nap(60);
        return 0;
    }
    if (action == "nap") {
        nap(1);
        return 0;
    }
    if (action == "stubborn") {
        std::signal(SIGTERM, SIG_IGN);
        nap(60);
        return 0;
    }
    if (action == "usr1exit3") {
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        sigprocmask(SIG_BLOCK, &usr1, nullptr);
        timespec limit{60, 0};
        return sigtimedwait(&usr1, nullptr, &limit) == SIGUSR1 ? 3 : bad("no SIGUSR1 within 60 s");
    }
    if (action == "env") return check_env();
    if (action.rfind("has:", 0) == 0) {
        std::string kv = action.substr(4);
        auto eq = kv.find('=');
        if (eq == std::string::npos) return bad("bad action " + action);
        const char *v = std::getenv(kv.substr(0, eq).c_str());
        if (!v || kv.substr(eq + 1) != v)
            return bad(kv.substr(0, eq) + " is '" + (v ? v : "(unset)") + "', expected '" + kv.substr(eq + 1) + "'");
        return -1;
    }
    return bad("unknown action " + action);
}

}  // namespace

int main(int argc, char **argv) {
    const char *r = std::getenv("WEFT_RANK");
    if (!r) {
        std::fprintf(stderr, "weft-test-rank: WEFT_RANK is not set (run me under weftrun)\n");
        return 1;
    }
    rank = std::atoi(r);
    for (int i = 1; i < argc; ++i) {
        std::string spec = argv[i];
        auto slash = spec.find('/');
        if (slash == std::string::npos) return bad("bad spec " + spec);
        std::string who = spec.substr(0, slash);
        if (who != "all" && who != std::to_string(rank)) continue;
        int st = run(spec.substr(slash + 1));
        if (st >= 0) return st;
    }
    return 0;
}
