// Starting one rank: fork, set its environment, exec the program.
#pragma once
#include <signal.h>
#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace weftrun {

struct spawn_request {
    const std::vector<std::string> *command;
    std::vector<std::pair<std::string, std::string>> env;  // set on top of weftrun's environment
    const sigset_t *child_sigmask;                         // mask the child execs with
    bool stdin_null;                                       // give the rank /dev/null as stdin
};

// Returns the child's pid (it leads its own process group, so that ending a rank also ends
// what it started), or -1 with `exec_errno` set when the program could not be executed (the
// child has then been reaped) or fork failed.
pid_t spawn_rank(const spawn_request &req, int &exec_errno);

}  // namespace weftrun
