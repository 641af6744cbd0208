#include "base/node.hpp"

#include <unistd.h>

#include <climits>
#include <fstream>

namespace weft {
namespace {

std::string read_link(const char *path) {
    char buf[PATH_MAX];
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("?");
}

std::string compute() {
    char host[256] = "unknown";
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    host[sizeof host - 1] = '\0';
    std::string boot;
    std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
    return std::string(host) + '|' + boot + '|' + read_link("/proc/self/ns/net") + '|' + read_link("/proc/self/ns/mnt");
}

}  // namespace

const std::string &node_identity() {
    static const std::string id = compute();
    return id;
}

}  // namespace weft
