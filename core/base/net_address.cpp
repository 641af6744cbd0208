#include "base/net_address.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/error.hpp"
#include "weft/weft.h"

namespace weft {

int net_pick_address(in_addr &out) {
    if (const char *a = std::getenv("WEFT_PEER_ADDR"); a != nullptr && *a != '\0') {
        if (inet_pton(AF_INET, a, &out) != 1)
            return fail(WEFT_ERR_ARG, "WEFT_PEER_ADDR='%s' is not an IPv4 address", a);
        return WEFT_SUCCESS;
    }
    if (const char *kvs = std::getenv("WEFT_KVS"); kvs != nullptr && *kvs != '\0') {
        std::string host(kvs);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_port = htons(static_cast<uint16_t>(std::atoi(host.substr(host.rfind(':') + 1).c_str())));
        host = host.substr(0, host.rfind(':'));
        // A connected UDP socket sends nothing; its local address is the route's source.
        int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        socklen_t len = sizeof sa;
        bool found = fd >= 0 && inet_pton(AF_INET, host.c_str(), &sa.sin_addr) == 1 &&
            ::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len) == 0;
        if (fd >= 0) ::close(fd);
        if (found) {
            out = sa.sin_addr;
            return WEFT_SUCCESS;
        }
    }
    out.s_addr = htonl(INADDR_LOOPBACK);
    ifaddrs *list = nullptr;
    if (getifaddrs(&list) != 0) return WEFT_SUCCESS;
    for (ifaddrs *i = list; i != nullptr; i = i->ifa_next)
        if (i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
            !(i->ifa_flags & IFF_LOOPBACK)) {
            out = reinterpret_cast<sockaddr_in *>(i->ifa_addr)->sin_addr;
            break;
        }
    freeifaddrs(list);
    return WEFT_SUCCESS;
}

int net_listen(const char *who, const char *advice, int &fd, uint64_t &token, std::string &published) {
    in_addr addr{};
    if (int rc = net_pick_address(addr)) return rc;
    if (getrandom(&token, sizeof token, 0) != sizeof token)
        return fail(WEFT_ERR_BOOTSTRAP, "%s: getrandom: %s", who, std::strerror(errno));
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr = addr;
    socklen_t len = sizeof sa;
    char text[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &addr, text, sizeof text);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0 || ::listen(fd, SOMAXCONN) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len) != 0) {
        int e = errno;
        if (fd >= 0) ::close(fd);
        fd = -1;
        return fail(WEFT_ERR_BOOTSTRAP, "%s: cannot listen on %s: %s (%s)", who, text, std::strerror(e), advice);
    }
    published = std::string(text) + " " + std::to_string(ntohs(sa.sin_port)) + " " + std::to_string(token);
    return WEFT_SUCCESS;
}

}  // namespace weft
