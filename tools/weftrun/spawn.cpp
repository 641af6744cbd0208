// fork + exec of one rank, reporting exec failure through a close-on-exec pipe: the parent
// reads EOF when exec succeeded, or the child's errno when it did not.
#include "spawn.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>

namespace weftrun {

pid_t spawn_rank(const spawn_request &req, int &exec_errno) {
    exec_errno = 0;
    int pfd[2];
    if (::pipe2(pfd, O_CLOEXEC) != 0) {
        exec_errno = errno;
        return -1;
    }
    // Build argv before fork: the child should only call async-signal-safe functions and
    // setenv (weftrun is single-threaded, so setenv after fork is safe).
    std::vector<char *> argv;
    for (auto &a : *req.command) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);

    const pid_t launcher = ::getpid();
    pid_t pid = ::fork();
    if (pid < 0) {
        exec_errno = errno;
        ::close(pfd[0]);
        ::close(pfd[1]);
        return -1;
    }
    if (pid == 0) {
        ::close(pfd[0]);
        // A rank must not outlive weftrun (kill -9 of weftrun left every rank running, parent
        // 1): the kernel kills it when weftrun dies (weftrun is single-threaded, so its one
        // thread's exit is its death), also if that happened before this line.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != launcher) ::_exit(127);
        ::setpgid(0, 0);
        // weftrun ignores SIGPIPE and blocks the signals it reads through signalfd; both are
        // inherited across exec, so restore defaults for the program.
        ::signal(SIGPIPE, SIG_DFL);
        ::sigprocmask(SIG_SETMASK, req.child_sigmask, nullptr);
        for (auto &[k, v] : req.env) ::setenv(k.c_str(), v.c_str(), 1);
        if (req.stdin_null) {
            int fd = ::open("/dev/null", O_RDONLY);
            if (fd >= 0 && fd != STDIN_FILENO) {
                ::dup2(fd, STDIN_FILENO);
                ::close(fd);
            }
        }
        ::execvp(argv[0], argv.data());
        int e = errno;
        (void)!::write(pfd[1], &e, sizeof e);
        ::_exit(127);
    }
    ::close(pfd[1]);
    // Also set the group from the parent, so that it exists before we might signal it.
    ::setpgid(pid, pid);
    int e = 0;
    ssize_t n;
    do n = ::read(pfd[0], &e, sizeof e);
    while (n < 0 && errno == EINTR);
    ::close(pfd[0]);
    if (n == static_cast<ssize_t>(sizeof e)) {
        int st;
        while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
        exec_errno = e;
        return -1;
    }
    return pid;
}

}  // namespace weftrun
