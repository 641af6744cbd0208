/* The parent side of the fabric's multi-process part: finds weftrun, runs
 * `weftrun -n NP weft-conformance --mp-worker` with the plugin under test selected
 * (WEFT_FABRIC, WEFT_PLUGIN_PATH), bounds the job in time, and turns the workers' "MP ..." lines
 * (kit_mp_worker.cpp) into the kit's PASS/SKIP/FAIL lines. */
#include "kit.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

namespace kit {

namespace {

using steady = std::chrono::steady_clock;

bool executable(const std::string &path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string self_exe() {
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0) return {};
    buf[n] = '\0';
    return buf;
}

std::string dir_of(const std::string &path) {
    auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

/* weftrun next to this program, else on PATH. */
std::string find_weftrun(std::string &why) {
    std::string self = self_exe();
    std::string here = self.empty() ? "" : dir_of(self) + "/weftrun";
    if (!here.empty() && executable(here)) return here;
    const char *path = getenv("PATH");
    std::string p = path ? path : "";
    size_t start = 0;
    while (start <= p.size()) {
        size_t end = p.find(':', start);
        if (end == std::string::npos) end = p.size();
        std::string dir = end > start ? p.substr(start, end - start) : ".";
        if (executable(dir + "/weftrun")) return dir + "/weftrun";
        start = end + 1;
    }
    why = "weftrun not found (not next to this program" + (here.empty() ? "" : " as " + here) +
        ", nor on PATH): the multi-process part needs it";
    return {};
}

std::string join_tail(const std::deque<std::string> &tail, size_t n) {
    std::string out;
    size_t skip = tail.size() > n ? tail.size() - n : 0;
    for (size_t i = skip; i < tail.size(); ++i) out += "\n" + tail[i];
    return out.empty() ? "\n(no output)" : out;
}

}  // namespace

void mp_run(const Target &t, const MpOptions &opt) {
    if (opt.checks.empty()) return;
    const std::string part = "Multiprocess";
    /* Weft's loader finds a fabric by file name (libweft-<name>.so, <name> as WEFT_FABRIC says). */
    std::string file = t.path.substr(t.path.rfind('/') + 1);
    if (file != "libweft-" + t.name + ".so") {
        report_result("FAIL", part,
                      "the plugin file is named " + file + " but its descriptor's name is \"" + t.name +
                          "\": Weft's loader finds the fabric WEFT_FABRIC=" + t.name + " only as libweft-" + t.name +
                          ".so, so weft_init would not load this "
                          "file; rename it (or link it) to libweft-" +
                          t.name + ".so");
        return;
    }
    std::string why;
    std::string weftrun = find_weftrun(why);
    if (weftrun.empty()) {
        report_result("SKIP", part, why);
        return;
    }
    std::string self = self_exe();

    std::string only;
    for (const std::string &c : opt.checks) only += (only.empty() ? "" : ",") + c;
    const int check_timeout = std::max(5, opt.timeout_s / 4);
    std::vector<std::string> args = {weftrun,
                                     "-n",
                                     std::to_string(opt.np),
                                     "--timeout",
                                     std::to_string(opt.timeout_s),
                                     "--",
                                     self,
                                     "--mp-worker",
                                     "--mp-np=" + std::to_string(opt.np),
                                     "--mp-check-timeout=" + std::to_string(check_timeout),
                                     "--mp-only=" + only};
    /* The environment, built before fork (this process may have threads). */
    std::vector<std::string> env;
    const char *old_path = getenv("WEFT_PLUGIN_PATH");
    for (char **e = environ; *e; ++e) {
        std::string s = *e;
        if (s.rfind("WEFT_FABRIC=", 0) == 0 || s.rfind("WEFT_PLUGIN_PATH=", 0) == 0 ||
            s.rfind(std::string(mp_env_version) + "=", 0) == 0)
            continue;
        env.push_back(s);
    }
    env.push_back("WEFT_FABRIC=" + t.name);
    env.push_back("WEFT_PLUGIN_PATH=" + dir_of(t.path) + (old_path && *old_path ? ":" + std::string(old_path) : ""));
    env.push_back(std::string(mp_env_version) + "=" + t.version);
    std::vector<char *> argv_c, env_c;
    for (auto &a : args) argv_c.push_back(a.data());
    argv_c.push_back(nullptr);
    for (auto &e : env) env_c.push_back(e.data());
    env_c.push_back(nullptr);
    std::string command = weftrun + " -n " + std::to_string(opt.np) + " --timeout " + std::to_string(opt.timeout_s) +
        " weft-conformance --mp-worker " + "(WEFT_FABRIC=" + t.name + ")";
    if (opt.verbose) {
        printf("-- multi-process part: %s\n", command.c_str());
        fflush(stdout);
    }

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        report_result("FAIL", part, std::string("pipe: ") + strerror(errno));
        return;
    }
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        report_result("FAIL", part, std::string("fork: ") + strerror(errno));
        close(fds[0]);
        close(fds[1]);
        if (devnull >= 0) close(devnull);
        return;
    }
    if (pid == 0) {
        if (devnull >= 0) dup2(devnull, STDIN_FILENO);
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        execve(argv_c[0], argv_c.data(), env_c.data());
        const char msg[] = "weft-conformance: cannot execute weftrun\n";
        ssize_t ignored = write(STDERR_FILENO, msg, sizeof(msg) - 1);
        (void)ignored;
        _exit(127);
    }
    close(fds[1]);
    if (devnull >= 0) close(devnull);

    /* Collect the lines until weftrun's end; past its own timeout (plus a grace), end it. */
    std::map<std::string, std::pair<std::string, std::string>> results; /* verdict, reason */
    std::vector<std::string> order;                                     /* names in the order their results came */
    std::string running;                                                /* the check begun and not reported */
    std::deque<std::string> tail;
    std::string partial;
    const auto deadline = steady::now() + std::chrono::seconds(opt.timeout_s + 30);
    int signals_sent = 0;
    auto next_signal = deadline;
    bool killed = false;
    auto take_line = [&](const std::string &line) {
        if (line.rfind("MP ", 0) != 0) {
            tail.push_back(line);
            if (tail.size() > 40) tail.pop_front();
            if (opt.verbose) {
                printf("   | %s\n", line.c_str());
                fflush(stdout);
            }
            return;
        }
        std::string rest = line.substr(3);
        auto sp = rest.find(' ');
        if (sp == std::string::npos) return;
        std::string verdict = rest.substr(0, sp), name = rest.substr(sp + 1), reason;
        if (auto colon = name.find(": "); colon != std::string::npos) {
            reason = name.substr(colon + 2);
            name = name.substr(0, colon);
        }
        if (verdict == "BEGIN") {
            running = name;
        } else if (verdict == "PASS" || verdict == "SKIP" || verdict == "FAIL") {
            if (!results.count(name)) {
                results[name] = {verdict, reason};
                order.push_back(name);
            }
            if (name == running) running.clear();
        }
    };
    int st = 0;
    bool reaped = false;
    std::optional<steady::time_point> drain_until; /* weftrun ended: the rest of its output */
    for (;;) {
        auto now = steady::now();
        if (!reaped) {
            pid_t w = waitpid(pid, &st, WNOHANG);
            if (w == pid) {
                reaped = true;
                drain_until = now + std::chrono::seconds(5);
            }
        }
        /* A process that outlived weftrun may hold the pipe open: do not wait for it. */
        if (drain_until && now >= *drain_until) break;
        if (!reaped && now >= next_signal) {
            /* weftrun forwards the first two signals; at the third it kills the ranks. */
            killed = true;
            if (signals_sent < 3) {
                kill(pid, SIGTERM);
                next_signal = now + std::chrono::seconds(3);
            } else {
                kill(pid, SIGKILL);
                next_signal = now + std::chrono::hours(1);
            }
            ++signals_sent;
        }
        int wait_ms = static_cast<int>(
            std::max<long long>(1, std::chrono::duration_cast<std::chrono::milliseconds>(next_signal - now).count()));
        pollfd p{fds[0], POLLIN, 0};
        int n = poll(&p, 1, std::min(wait_ms, 1000));
        if (n < 0 && errno != EINTR) break;
        if (n <= 0) continue;
        char buf[4096];
        ssize_t got = read(fds[0], buf, sizeof(buf));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        partial.append(buf, static_cast<size_t>(got));
        size_t nl;
        while ((nl = partial.find('\n')) != std::string::npos) {
            take_line(partial.substr(0, nl));
            partial.erase(0, nl + 1);
        }
    }
    if (!partial.empty()) take_line(partial);
    close(fds[0]);
    while (!reaped && waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    int status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
    const bool timed_out = killed || status == 124;
    std::string ended = timed_out
        ? "timed out: the job was ended after " + std::to_string(opt.timeout_s) + " s (--mp-timeout)"
        : "the job ended (weftrun exit status " + std::to_string(status) + ")";

    if (results.empty() && (status != 0 || timed_out)) {
        report_result("FAIL", part,
                      command + ": " + ended + " before any check reported" +
                          (running.empty() ? std::string() : " (" + running + " was running)") +
                          "; its last output:" + join_tail(tail, 6));
        return;
    }
    /* The results as they came (the checks' order; Init and Finalize only when they failed),
     * then the check that was running when the job ended, then those that never ran. */
    const bool abnormal = status != 0 || timed_out;
    std::string first_failure;
    for (const std::string &name : order) {
        auto &[verdict, reason] = results[name];
        report_result(verdict.c_str(), name, reason);
        if (verdict == "FAIL" && first_failure.empty()) first_failure = name;
    }
    bool explained = !first_failure.empty();
    if (!running.empty() && abnormal) {
        report_result("FAIL", running, "did not finish: " + ended + "; the job's last output:" + join_tail(tail, 5));
        explained = true;
        if (first_failure.empty()) first_failure = running;
    }
    for (const std::string &name : opt.checks) {
        if (results.count(name) || (name == running && abnormal)) continue;
        if (abnormal)
            report_result(
                "SKIP", name,
                "not run: the job ended" + (first_failure.empty() ? std::string() : " after " + first_failure));
        else
            report_result("FAIL", name, "no result: the workers never reported this check");
    }
    if ((status != 0 || timed_out) && !explained)
        report_result("FAIL", part + ".Exit",
                      command + ": " + ended + " although every check reported; its last output:" + join_tail(tail, 5));
}

}  // namespace kit
