// The shared-memory collectives (core/coll/coll_shm.hpp): small blocking collectives on a
// communicator whose processes share a node run through its segment (weft_get_stats counts
// them), the others do not; the segment's name is unlinked once everyone mapped it, and an
// object left by a dead creator is removed by the next setup on the node.  The data suites
// (test_data.cpp, test_reduce.cpp) check the results through it at every count that fits.
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "coll_env.hpp"
#include "weft/weft.h"

using namespace coll_test;

namespace {

long shm_collectives() {
    weft_info info;
    char v[32] = "-1";
    int flag = 0;
    if (weft_get_stats(&info) != WEFT_SUCCESS) return -1;
    weft_info_get(info, "shm_collectives", sizeof v, v, &flag);
    weft_info_free(&info);
    return flag ? std::atol(v) : -1;
}

std::string forced(const char *name) {
    const char *v = std::getenv((std::string("WEFT_COLL_") + name).c_str());
    return v == nullptr || *v == '\0' ? "auto" : v;
}
// Whether this run lets collective NAME choose shm (auto, or forced to shm).
bool shm_allowed(const char *name) { return forced(name) == "auto" || forced(name) == "shm"; }

// /dev/shm names that start with prefix.
std::vector<std::string> shm_names(const std::string &prefix) {
    std::vector<std::string> out;
    if (DIR *d = opendir("/dev/shm")) {
        while (dirent *e = readdir(d))
            if (std::string(e->d_name).rfind(prefix, 0) == 0) out.push_back(e->d_name);
        closedir(d);
    }
    return out;
}

::testing::AssertionResult ok(int rc) {
    if (rc == WEFT_SUCCESS) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << err(rc);
}

class Shm : public coll_fixture {};

// Which calls go through the segment: small blocking ones with two processes or more.
TEST_F(Shm, SmallBlockingCallsUseIt) {
    int n = world_size();
    weft_comm c;
    ASSERT_TRUE(ok(weft_comm_dup(WEFT_COMM_WORLD, &c)));
    long in = 1, out = 0;
    long before = shm_collectives();
    ASSERT_GE(before, 0) << "weft_get_stats has no shm_collectives";
    ASSERT_TRUE(ok(weft_allreduce(&in, &out, 1, WEFT_LONG, WEFT_SUM, c)));
    EXPECT_EQ(out, n);
    long expect = before + (n > 1 && shm_allowed("ALLREDUCE"));
    EXPECT_EQ(shm_collectives(), expect) << "a blocking 8-byte allreduce on " << n << " processes";
    ASSERT_TRUE(ok(weft_barrier(c)));
    expect += n > 1 && shm_allowed("BARRIER");
    EXPECT_EQ(shm_collectives(), expect) << "a blocking barrier";
    int v = world_rank();  // the root's 0 everywhere after
    ASSERT_TRUE(ok(weft_bcast(&v, 1, WEFT_INT, 0, c)));
    EXPECT_EQ(v, 0);
    expect += n > 1 && forced("BCAST") == "shm";  // rooted calls: only when forced
    EXPECT_EQ(shm_collectives(), expect) << "a blocking 4-byte bcast";

    // Nonblocking: never (it may overlap blocking ones on the segment).
    weft_request r;
    ASSERT_TRUE(ok(weft_iallreduce(&in, &out, 1, WEFT_LONG, WEFT_SUM, c, &r)));
    ASSERT_TRUE(ok(weft_wait(&r, WEFT_STATUS_IGNORE)));
    EXPECT_EQ(out, n);
    EXPECT_EQ(shm_collectives(), expect) << "a nonblocking allreduce";

    // Larger than a slot: through messages.
    std::vector<long> big_in(1025, 1), big_out(1025, 0);  // 8200 bytes: more than a slot
    ASSERT_TRUE(ok(weft_allreduce(big_in.data(), big_out.data(), big_in.size(), WEFT_LONG, WEFT_SUM, c)));
    EXPECT_EQ(big_out[1024], n);
    EXPECT_EQ(shm_collectives(), expect) << "an 8200-byte allreduce";
    std::vector<long> fits(512, 1), fits_out(512, 0);  // 4096 bytes: auto takes shm up to here
    ASSERT_TRUE(ok(weft_allreduce(fits.data(), fits_out.data(), fits.size(), WEFT_LONG, WEFT_SUM, c)));
    EXPECT_EQ(fits_out[511], n);
    expect += n > 1 && shm_allowed("ALLREDUCE");
    EXPECT_EQ(shm_collectives(), expect) << "a 4096-byte allreduce";
    ASSERT_TRUE(ok(weft_comm_free(&c)));
}

// No name is left in /dev/shm after a setup; one of a dead creator is removed by the next
// setup on the node, one of a living process is kept.
TEST_F(Shm, NamesDoNotOutliveTheSetup) {
    int me = world_rank();
    std::string dead_name, live_name;
    if (me == 0) {
        pid_t child = fork();
        if (child == 0) _exit(0);
        ASSERT_GT(child, 0);
        ASSERT_EQ(waitpid(child, nullptr, 0), child);  // reaped: its pid names nobody now
        dead_name = "/weft-coll-" + std::to_string(child) + "-00000000deadbeef";
        live_name = "/weft-coll-" + std::to_string(getppid()) + "-00000000a11ea11e";
        for (const std::string &name : {dead_name, live_name}) {
            int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
            ASSERT_GE(fd, 0) << name;
            close(fd);
        }
    }
    int pid0 = static_cast<int>(getpid());
    ASSERT_TRUE(ok(weft_bcast(&pid0, 1, WEFT_INT, 0, WEFT_COMM_WORLD)));
    weft_comm c;
    ASSERT_TRUE(ok(weft_comm_dup(WEFT_COMM_WORLD, &c)));
    ASSERT_TRUE(ok(weft_barrier(c)));  // sets up c's segment (with 2 or more)
    // Rank 0's own names (weft-coll-<its pid>-<random>) are gone on every process's view.
    EXPECT_EQ(shm_names("weft-coll-" + std::to_string(pid0) + "-").size(), 0u);
    if (me == 0) {
        bool sets_up = world_size() > 1;
        EXPECT_EQ(shm_names(dead_name.substr(1)).size(), sets_up ? 0u : 1u) << dead_name;
        EXPECT_EQ(shm_names(live_name.substr(1)).size(), 1u) << live_name << " (its creator lives)";
        shm_unlink(dead_name.c_str());
        shm_unlink(live_name.c_str());
    }
    ASSERT_TRUE(ok(weft_barrier(c)));
    ASSERT_TRUE(ok(weft_comm_free(&c)));
}

}  // namespace
