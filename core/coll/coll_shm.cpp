#include "coll/coll_shm.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/node.hpp"
#include "coll/coll_algorithms.hpp"
#include "coll/coll_call.hpp"

namespace weft {

coll_shm::~coll_shm() {
    if (base != nullptr) munmap(base, bytes);
}

namespace {

constexpr const char *prefix = "weft-coll-";  // then <creator pid>-<random hex>

// Objects whose creator died before unlinking them (killed during a setup): nobody can map
// them any more, so they only hold memory.  Only names of this form, only dead creators.
void remove_stale() {
    DIR *d = opendir("/dev/shm");
    if (d == nullptr) return;
    size_t plen = std::strlen(prefix);
    while (dirent *e = readdir(d)) {
        if (std::strncmp(e->d_name, prefix, plen) != 0) continue;
        char *end = nullptr;
        long pid = std::strtol(e->d_name + plen, &end, 10);
        if (pid <= 0 || end == nullptr || *end != '-') continue;
        if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
        std::string name = std::string("/") + e->d_name;
        if (shm_unlink(name.c_str()) == 0)
            log(WEFT_LOG_INFO, "collectives: removed /dev/shm%s of dead process %ld", name.c_str(), pid);
    }
    closedir(d);
}

void warn_once(const char *what, const char *name) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
        log(WEFT_LOG_WARN, "collectives: %s %s: %s; small collectives on one node go through messages instead", what,
            name, std::strerror(errno));
}

// What rank 0 tells the others.
struct offer {
    char name[64];   // empty: no segment
    char node[192];  // rank 0's node_identity()
};

// Runs one of the core's message algorithms on c (the setup's own exchanges).
int run(comm &c, coll_build_fn build, const coll_args &a) {
    coll_sched s;
    s.c = &c;
    s.endpoint = c.local[0];
    s.ctx = static_cast<uint16_t>(c.context_id + 1);
    if (int rc = build(s, a)) return rc;
    s.tag = coll_next_tag(c);
    return coll_sched_run(s);
}

char *map(int fd, size_t bytes) {
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return p == MAP_FAILED ? nullptr : static_cast<char *>(p);
}

int setup(comm &c, std::unique_ptr<coll_shm> &out) {
    int n = c.size, me = c.rank;
    size_t bytes = coll_shm::size_for(n);
    offer o{};
    std::unique_ptr<coll_shm> seg(new (std::nothrow) coll_shm);
    if (seg == nullptr) return fail(WEFT_ERR_NO_MEM, "collectives: out of memory");
    seg->bytes = bytes;
    seg->procs = n;
    // Rank 0 unlinks its object on every way out of here, once the others had their chance.
    struct unlink_at_end {
        const char *name = nullptr;
        ~unlink_at_end() {
            if (name != nullptr && *name != '\0') shm_unlink(name);
        }
    } created;
    if (me == 0) {
        remove_stale();
        uint64_t token = 0;
        if (getrandom(&token, sizeof token, 0) != sizeof token)
            token = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&o)) ^ static_cast<uint64_t>(getpid());
        std::snprintf(o.name, sizeof o.name, "/%s%d-%016" PRIx64, prefix, static_cast<int>(getpid()), token);
        int fd = shm_open(o.name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0) {
            warn_once("cannot create", o.name);
            o.name[0] = '\0';
        } else {
            created.name = o.name;
            if (ftruncate(fd, static_cast<off_t>(bytes)) != 0 || (seg->base = map(fd, bytes)) == nullptr) {
                warn_once("cannot size or map", o.name);
                shm_unlink(o.name);
                o.name[0] = '\0';
            }
            close(fd);
        }
        std::snprintf(o.node, sizeof o.node, "%s", node_identity().c_str());
    }
    if (int rc = run(c, coll_bcast_binomial, {.out = reinterpret_cast<char *>(&o), .bytes = sizeof o, .root = 0}))
        return rc;
    if (me != 0 && o.name[0] != '\0' && o.name[sizeof o.name - 1] == '\0') {
        std::string node = node_identity();
        if (node.size() < sizeof o.node && std::strncmp(node.c_str(), o.node, sizeof o.node) == 0) {
            int fd = shm_open(o.name, O_RDWR, 0);
            struct stat st;
            // The size is checked so that a foreign object under the name cannot make us
            // read or write past its end.
            if (fd >= 0 && fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) == bytes) seg->base = map(fd, bytes);
            if (fd >= 0) close(fd);
        }
    }
    // Everyone mapped it, or nobody uses it.
    std::vector<char> mapped(static_cast<size_t>(n));
    mapped[static_cast<size_t>(me)] = seg->base != nullptr;
    if (int rc = run(c, coll_allgather_bruck, {.out = mapped.data(), .bytes = 1})) return rc;
    for (char m : mapped)
        if (!m) return WEFT_SUCCESS;
    out = std::move(seg);
    return WEFT_SUCCESS;
}

}  // namespace

int coll_shm_get(comm &c, const char *fn, coll_shm *&seg) {
    comm::shm_segment &st = c.coll_shm_state;
    if (!st.asked) {
        if (c.size < 2 || c.size > coll_shm::max_procs) {
            st.asked = true;
        } else {
            std::unique_ptr<coll_shm> made;
            if (int rc = setup(c, made)) {
                seg = nullptr;
                std::string why = current_error_detail();
                return fail(rc, "%s: setting up the shared-memory collectives: %s", fn, why.c_str());
            }
            st.seg = std::move(made);
            st.asked = true;
        }
    }
    seg = st.seg.get();
    return WEFT_SUCCESS;
}

}  // namespace weft
