// weftrun: starts N local ranks, serves their key-value exchange, and ends the job as a whole
// when one rank fails (see options.hpp for the command line).
#include <poll.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "kvs_server.hpp"
#include "kvs_wire.hpp"
#include "options.hpp"
#include "spawn.hpp"

namespace weftrun {
namespace {

using clock_type = std::chrono::steady_clock;
// Grace between SIGTERM and SIGKILL when ending the job.
constexpr auto kill_grace = std::chrono::seconds(2);
// How long a rank's failing exit waits to be outrun by a signal death: when one rank is killed,
// the others see it within milliseconds and exit with an error, and weftrun, if it runs late,
// finds all of them dead at once; the kill is the cause to report.
constexpr auto blame_settle = std::chrono::milliseconds(100);
// Exit status of a job ended by --timeout (as timeout(1)).
constexpr int timeout_status = 124;

void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void say(const char *fmt, ...) {
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "weftrun: %s\n", line);
}

bool make_token(std::string &token) {
    unsigned char raw[16];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = ::getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        got += static_cast<size_t>(n);
    }
    static const char digits[] = "0123456789abcdef";
    token.clear();
    for (unsigned char b : raw) token += digits[b >> 4], token += digits[b & 15];
    return true;
}

struct rank_proc {
    pid_t pid = -1;
    bool running = false;
    bool reported = false;  // found failed by another rank: its end is no news
    bool killed = false;    // by end_reported
};

class job {
  public:
    job(const options &opt) : opt_(opt), ranks_(opt.nranks) {}
    int run();

  private:
    bool start();
    // A rank's end that fails the job.
    struct failure {
        int rank = -1;
        pid_t pid = -1;
        int wait_status = 0;
        int job_status() const {
            return WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status) : WEXITSTATUS(wait_status);
        }
    };
    void reap();
    void report(const failure &f);
    void on_failure_report(const failure_report &f);
    void end_reported();  // when only ranks found failed still run
    void on_signal(int sig);
    void end_job(int status);
    void signal_all(int sig);
    int running() const;
    int poll_timeout() const;

    const options &opt_;
    std::vector<rank_proc> ranks_;
    kvs_server server_;
    sigset_t orig_mask_{};
    bool ending_ = false;
    int status_ = 0;
    int forwarded_ = 0;
    std::optional<clock_type::time_point> kill_at_, job_deadline_;
    // A failing exit not yet reported: a signal death reaped before settle_at_ is blamed instead.
    std::optional<failure> pending_;
    std::optional<clock_type::time_point> settle_at_;
};

int job::running() const {
    int n = 0;
    for (auto &r : ranks_) n += r.running;
    return n;
}

void job::signal_all(int sig) {
    for (auto &r : ranks_)
        if (r.running) ::kill(-r.pid, sig);  // the rank's whole process group
}

// First failure decides the job's status; the other ranks get SIGTERM, then SIGKILL.
void job::end_job(int status) {
    if (ending_) return;
    ending_ = true;
    status_ = status;
    signal_all(SIGTERM);
    kill_at_ = clock_type::now() + kill_grace;
}

void job::report(const failure &f) {
    const char *after = opt_.keep_going ? "; the others run on (--keep-going)" : "";
    if (WIFSIGNALED(f.wait_status)) {
        int sig = WTERMSIG(f.wait_status);
        say("rank %d (pid %d) was killed by signal %d (%s)%s", f.rank, f.pid, sig, strsignal(sig), after);
    } else {
        say("rank %d (pid %d) exited with status %d%s", f.rank, f.pid, WEXITSTATUS(f.wait_status), after);
    }
    if (!opt_.keep_going) {
        end_job(f.job_status());
    } else if (status_ == 0) {
        status_ = f.job_status();  // the first failure is still the job's status
    }
}

// Another rank found this one not responding or unreachable.  The job fails as if it had been
// killed, which it will be (SIGKILL: a stopped process would hold SIGTERM): at once, or with
// --keep-going once the others have ended, so that each of them finds it silent by itself
// (killed, it would seem to them to have ended without weft_finalize).
void job::on_failure_report(const failure_report &f) {
    rank_proc &p = ranks_[f.rank];
    if (ending_ || !p.running || p.reported) return;
    p.reported = true;
    say("rank %d (pid %d) failed according to rank %d: %s; %s", f.rank, p.pid, f.by, f.why.c_str(),
        opt_.keep_going ? "the others run on (--keep-going), and it is ended when they have ended" : "ending the job");
    if (!opt_.keep_going) {
        ::kill(-p.pid, SIGKILL);
        end_job(128 + SIGKILL);
    } else if (status_ == 0) {
        status_ = 128 + SIGKILL;
    }
}

void job::end_reported() {
    for (auto &r : ranks_)
        if (r.running && !r.reported) return;
    for (auto &r : ranks_)
        if (r.running && !r.killed) {
            ::kill(-r.pid, SIGKILL);
            r.killed = true;
        }
}

void job::reap() {
    // Every rank that has ended by now, signal deaths first: reaped together, a killed rank and
    // the ranks that exited because they saw it die come in no useful order.
    std::vector<failure> ended;
    for (;;) {
        int st;
        pid_t pid = ::waitpid(-1, &st, WNOHANG);
        if (pid <= 0) break;
        for (size_t i = 0; i < ranks_.size(); ++i)
            if (ranks_[i].running && ranks_[i].pid == pid) ended.push_back({static_cast<int>(i), pid, st});
    }
    std::stable_sort(ended.begin(), ended.end(), [](const failure &a, const failure &b) {
        return WIFSIGNALED(a.wait_status) > WIFSIGNALED(b.wait_status);
    });
    for (const failure &f : ended) {
        ranks_[f.rank].running = false;
        server_.rank_exited(f.rank);
        if (ending_ || ranks_[f.rank].reported) continue;  // ended by us or after the first failure
        if (f.job_status() == 0) continue;
        if (opt_.keep_going || WIFSIGNALED(f.wait_status)) {
            pending_.reset();
            settle_at_.reset();
            report(f);
        } else if (!pending_) {
            pending_ = f;
            settle_at_ = clock_type::now() + blame_settle;
        }
    }
    // The failing exit stands once no signal death came within blame_settle (or no rank is left).
    if (pending_ && !ending_ && (running() == 0 || clock_type::now() >= *settle_at_)) {
        failure f = *pending_;
        pending_.reset();
        settle_at_.reset();
        report(f);
    }
}

void job::on_signal(int sig) {
    // Forward to the ranks; a third interrupt means "now".
    ++forwarded_;
    if (forwarded_ >= 3) {
        say("received signal %d (%s) %d times; killing the ranks", sig, strsignal(sig), forwarded_);
        signal_all(SIGKILL);
        return;
    }
    signal_all(sig);
}

int job::poll_timeout() const {
    auto now = clock_type::now();
    long long t = server_.timeout_ms();
    for (auto &d : {kill_at_, job_deadline_, settle_at_}) {
        if (!d) continue;
        long long ms =
            std::max<long long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(*d - now).count() + 1);
        if (t < 0 || ms < t) t = ms;
    }
    return static_cast<int>(std::min(t, 1LL << 30));
}

bool job::start() {
    std::string token, why;
    if (!make_token(token)) {
        say("cannot make a job token: getrandom: %s", std::strerror(errno));
        return false;
    }
    server_.set_keep_going(opt_.keep_going);
    if (!server_.open(opt_.nranks, token, opt_.kvs_host, why)) {
        say("cannot start the key-value server: %s", why.c_str());
        return false;
    }
    bool stdin_tty = ::isatty(STDIN_FILENO);
    std::string kvs_addr = opt_.kvs_host + ":" + std::to_string(server_.port());
    for (int r = 0; r < opt_.nranks; ++r) {
        spawn_request req;
        req.command = &opt_.command;
        req.child_sigmask = &orig_mask_;
        // Ranks lead their own process groups, so a rank reading a terminal would stop with
        // SIGTTIN: only rank 0 gets stdin, and only when it is not a terminal.
        req.stdin_null = r != 0 || stdin_tty;
        req.env = opt_.exports;
        req.env.emplace_back(weft::kvs::env_rank, std::to_string(r));
        req.env.emplace_back(weft::kvs::env_size, std::to_string(opt_.nranks));
        req.env.emplace_back(weft::kvs::env_local_rank, std::to_string(r));
        req.env.emplace_back(weft::kvs::env_local_size, std::to_string(opt_.nranks));
        req.env.emplace_back(weft::kvs::env_kvs, kvs_addr);
        req.env.emplace_back(weft::kvs::env_token, token);
        if (!opt_.fabric.empty()) req.env.emplace_back("WEFT_FABRIC", opt_.fabric);
        int err = 0;
        pid_t pid = spawn_rank(req, err);
        if (pid < 0) {
            if (r == 0 || err != EAGAIN)
                say("cannot execute '%s': %s", opt_.command[0].c_str(), std::strerror(err));
            else
                say("cannot start rank %d: %s", r, std::strerror(err));
            status_ = err == ENOENT ? 127 : 126;
            ending_ = true;
            signal_all(SIGTERM);
            kill_at_ = clock_type::now() + kill_grace;
            return true;  // the loop reaps the ranks already started
        }
        ranks_[r] = {pid, true};
    }
    if (opt_.timeout_s > 0) job_deadline_ = clock_type::now() + std::chrono::seconds(opt_.timeout_s);
    return true;
}

int job::run() {
    sigset_t mask;
    sigemptyset(&mask);
    for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&mask, s);
    // Signals arrive through a signalfd in the poll loop, never as asynchronous handlers.
    if (::sigprocmask(SIG_BLOCK, &mask, &orig_mask_) != 0) {
        say("sigprocmask: %s", std::strerror(errno));
        return 1;
    }
    ::signal(SIGPIPE, SIG_IGN);
    int sigfd = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sigfd < 0) {
        say("signalfd: %s", std::strerror(errno));
        return 1;
    }
    if (!start()) return 1;

    std::vector<pollfd> fds;
    while (running() > 0) {
        fds.clear();
        fds.push_back({sigfd, POLLIN, 0});
        server_.add_pollfds(fds);
        int n = ::poll(fds.data(), fds.size(), poll_timeout());
        if (n < 0 && errno != EINTR) {
            say("poll: %s", std::strerror(errno));
            signal_all(SIGKILL);
            return 1;
        }
        if (n > 0 && (fds[0].revents & POLLIN)) {
            signalfd_siginfo si;
            while (::read(sigfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
                if (si.ssi_signo == SIGCHLD) continue;  // reaped below in any case
                on_signal(static_cast<int>(si.ssi_signo));
            }
        }
        if (n >= 0) server_.process(fds, 1);  // also on timeout: it drops silent connections
        // Before reaping: the aborting rank exits right after our reply, and its exit must
        // not be reported as a failure of its own.
        if (auto a = server_.take_abort(); a && !ending_) {
            say("rank %d (pid %d) called weft_abort with code %d%s%s", a->rank, ranks_[a->rank].pid, a->code,
                a->message.empty() ? "" : ": ", a->message.c_str());
            end_job(a->code & 0xff);
        }
        while (auto f = server_.take_failure_report()) on_failure_report(*f);
        reap();
        end_reported();
        auto now = clock_type::now();
        if (job_deadline_ && now >= *job_deadline_ && !ending_) {
            say("the job ran longer than --timeout %d seconds; ending it", opt_.timeout_s);
            end_job(timeout_status);
        }
        if (kill_at_ && now >= *kill_at_) {
            signal_all(SIGKILL);
            kill_at_.reset();
        }
    }
    return status_;
}

}  // namespace
}  // namespace weftrun

int main(int argc, char **argv) {
    weftrun::options opt;
    std::string why;
    std::vector<std::string> warnings;
    bool ok = weftrun::parse_options(argc, argv, opt, why, warnings);
    for (auto &w : warnings) std::fprintf(stderr, "weftrun: %s\n", w.c_str());
    if (opt.help) {
        std::fputs(weftrun::usage_text(), stdout);
        return 0;
    }
    if (!ok) {
        std::fprintf(stderr, "weftrun: %s\n%s", why.c_str(), weftrun::usage_text());
        return 2;
    }
    weftrun::job j(opt);
    return j.run();
}
