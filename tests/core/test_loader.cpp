// Loader: search path, preference lists, and each way a plugin can be broken.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.hpp"
#include "loader/loader.hpp"
#include "loader/plugin_trust.hpp"
#include "weft/weft.h"

namespace {

void quiet(int, const char *, const char *) {}
const char *no_hint(void *, const char *) { return nullptr; }
const weft_plugin_host_t host{sizeof(weft_plugin_host_t), quiet, no_hint, nullptr};

// Plugins of this test live in their own directory, first on the search path.
class Loader : public ::testing::Test {
  protected:
    void SetUp() override { setenv("WEFT_PLUGIN_PATH", TEST_PLUGIN_DIR, 1); }
    void TearDown() override { unsetenv("WEFT_PLUGIN_PATH"); }

    // Opens with the given preference; returns the code and leaves the detail in `detail`.
    int open(const std::string &pref_text, std::string &selected) {
        weft::fabric_preference pref;
        std::string why;
        EXPECT_TRUE(weft::loader_parse_preference(pref_text, pref, why)) << why;
        weft::fabric_open out;
        int rc = weft::loader_open_fabric(pref, "WEFT_FABRIC", &host, out);
        detail = weft::current_error_detail();
        if (rc == WEFT_SUCCESS) {
            selected = out.plugin.name;
            out.plugin.fabric_ops.finalize(out.fabric);
        }
        return rc;
    }
    std::string detail;
};

TEST_F(Loader, SearchPathStartsWithEnvironment) {
    setenv("WEFT_PLUGIN_PATH", "/a:/b::/c", 1);
    auto dirs = weft::loader_search_path();
    ASSERT_GE(dirs.size(), 4u);
    EXPECT_EQ(dirs[0], "/a");
    EXPECT_EQ(dirs[1], "/b");
    EXPECT_EQ(dirs[2], "/c");
}

TEST_F(Loader, ScanFindsTestPlugins) {
    auto files = weft::loader_scan();
    int n = 0;
    for (auto &f : files)
        if (f.path.rfind(TEST_PLUGIN_DIR, 0) == 0) ++n;
    EXPECT_GE(n, 7);
}

TEST(LoaderPreference, Parses) {
    weft::fabric_preference p;
    std::string why;
    ASSERT_TRUE(weft::loader_parse_preference(" ucx , ofi,^tcp", p, why));
    EXPECT_EQ(p.include, (std::vector<std::string>{"ucx", "ofi"}));
    EXPECT_EQ(p.exclude, (std::vector<std::string>{"tcp"}));
    ASSERT_TRUE(weft::loader_parse_preference("", p, why));
    EXPECT_TRUE(p.include.empty());
    EXPECT_FALSE(weft::loader_parse_preference("ucx,^", p, why));
    EXPECT_FALSE(weft::loader_parse_preference("u x", p, why));
    EXPECT_FALSE(weft::loader_parse_preference("../evil", p, why));
    // Separators only: a list was meant and names nothing (WEFT_FABRIC=,,, was accepted).
    EXPECT_FALSE(weft::loader_parse_preference(",,,", p, why));
    EXPECT_NE(why.find("names no plugin"), std::string::npos) << why;
    EXPECT_FALSE(weft::loader_parse_preference(" , ", p, why));
    ASSERT_TRUE(weft::loader_parse_preference("  ", p, why));
}

TEST_F(Loader, MissingPluginNamesSearchPath) {
    std::string sel;
    EXPECT_EQ(open("nonexistent", sel), WEFT_ERR_PLUGIN);
    EXPECT_NE(detail.find("nonexistent"), std::string::npos) << detail;
    EXPECT_NE(detail.find("libweft-nonexistent.so"), std::string::npos) << detail;
    EXPECT_NE(detail.find(TEST_PLUGIN_DIR), std::string::npos) << detail;
    EXPECT_NE(detail.find("WEFT_PLUGIN_PATH"), std::string::npos) << detail;
}

TEST_F(Loader, MissingSymbol) {
    std::string sel;
    EXPECT_EQ(open("tnosym", sel), WEFT_ERR_PLUGIN);
    EXPECT_NE(detail.find("libweft-tnosym.so"), std::string::npos) << detail;
    EXPECT_NE(detail.find("weft_plugin_v1"), std::string::npos) << detail;
}

TEST_F(Loader, WrongAbiMajor) {
    std::string sel;
    EXPECT_EQ(open("tbadabi", sel), WEFT_ERR_PLUGIN);
    EXPECT_NE(detail.find("libweft-tbadabi.so"), std::string::npos) << detail;
    EXPECT_NE(detail.find("ABI 99."), std::string::npos) << detail;
}

TEST_F(Loader, InitFailureReasonIsReported) {
    std::string sel;
    EXPECT_EQ(open("tfailinit", sel), WEFT_ERR_PLUGIN);
    EXPECT_NE(detail.find("WEFT_TEST_DEVICE"), std::string::npos) << detail;
}

TEST_F(Loader, MissingOperation) {
    std::string sel;
    EXPECT_EQ(open("tnoops", sel), WEFT_ERR_PLUGIN);
    EXPECT_NE(detail.find("tag_send"), std::string::npos) << detail;
}

TEST_F(Loader, UnresolvedSymbolShowsDlerror) {
    std::string sel;
    EXPECT_EQ(open("tunresolved", sel), WEFT_ERR_PLUGIN);
    EXPECT_NE(detail.find("dlopen failed"), std::string::npos) << detail;
    EXPECT_NE(detail.find("weft_test_symbol_that_does_not_exist"), std::string::npos) << detail;
}

TEST_F(Loader, QueuePluginIsNotAFabric) {
    std::string sel;
    EXPECT_EQ(open("tqueue", sel), WEFT_ERR_PLUGIN);
    EXPECT_NE(detail.find("queue plugin"), std::string::npos) << detail;
}

TEST_F(Loader, PreferenceOrderFallsThrough) {
    std::string sel;
    ASSERT_EQ(open("tbadabi,tlow", sel), WEFT_SUCCESS) << detail;
    EXPECT_EQ(sel, "tlow");
    ASSERT_EQ(open("tlow,thigh", sel), WEFT_SUCCESS) << detail;
    EXPECT_EQ(sel, "tlow");
}

// A plugin that refuses the settings meant for it fails the selection, naming the setting,
// even when no plugin was asked for (WEFT_UCX_ERROR_MODE=bogus ran on ofi without a word).
TEST_F(Loader, RefusedSettingIsAnErrorNotAFallThrough) {
    std::string sel;
    setenv("TEST_PLUGIN_SETTING", "bogus", 1);
    EXPECT_EQ(open("", sel), WEFT_ERR_PLUGIN) << "selected " << sel;
    EXPECT_NE(detail.find("TEST_PLUGIN_SETTING='bogus'"), std::string::npos) << detail;
    EXPECT_NE(detail.find("WEFT_FABRIC=^tsetting"), std::string::npos) << detail;
    EXPECT_EQ(open("tsetting,thigh", sel), WEFT_ERR_PLUGIN) << "selected " << sel;
    setenv("TEST_PLUGIN_SETTING", "good", 1);
    EXPECT_EQ(open("", sel), WEFT_SUCCESS) << detail;
    EXPECT_EQ(sel, "thigh");
    unsetenv("TEST_PLUGIN_SETTING");
}

TEST_F(Loader, ExclusionAndPriority) {
    // With no stated preference, the highest priority that opens wins; the plugins of this
    // test outrank any real fabric (priority 1000+).
    std::string sel;
    ASSERT_EQ(open("", sel), WEFT_SUCCESS) << detail;
    EXPECT_EQ(sel, "thigh");
    ASSERT_EQ(open("^thigh", sel), WEFT_SUCCESS) << detail;
    EXPECT_EQ(sel, "tlow");
    EXPECT_EQ(open("thigh,^thigh", sel), WEFT_ERR_PLUGIN);
}

// The context space a plugin asks for (ABI 1.7) reaches the core's caps; older plugins cannot
// ask: one built for 1.6 gets the 336 bytes 1.6 cores gave, an older one none.
TEST_F(Loader, ContextSpaceAskedOrByMinor) {
    for (auto [name, expected] : {std::pair<const char *, size_t>{"tasks7", 100}, {"tasks6", 336}, {"tasks5", 0}}) {
        weft::fabric_preference pref;
        std::string why;
        ASSERT_TRUE(weft::loader_parse_preference(name, pref, why)) << why;
        weft::fabric_open out;
        ASSERT_EQ(weft::loader_open_fabric(pref, "WEFT_FABRIC", &host, out), WEFT_SUCCESS)
            << weft::current_error_detail();
        EXPECT_EQ(out.caps.context_space, expected) << name;
        out.plugin.fabric_ops.finalize(out.fabric);
    }
}

// Through the public API: weft_init fails, names what was tried, and leaves the process usable.
TEST_F(Loader, InitFailsCleanly) {
    setenv("WEFT_FABRIC", "nonexistent", 1);
    unsetenv("WEFT_KVS");
    EXPECT_EQ(weft_init(nullptr, nullptr), WEFT_ERR_PLUGIN);
    char text[WEFT_MAX_ERROR_STRING];
    size_t len = 0;
    ASSERT_EQ(weft_error_detail(text, &len), WEFT_SUCCESS);
    EXPECT_NE(std::string(text).find("nonexistent"), std::string::npos) << text;
    int flag = 1;
    weft_initialized(&flag);
    EXPECT_EQ(flag, 0);
    int rank;
    EXPECT_EQ(weft_comm_rank(WEFT_COMM_WORLD, &rank), WEFT_ERR_NOT_INITIALIZED);
    unsetenv("WEFT_FABRIC");
}

}  // namespace

// A directory or plugin file the loader finds on its own must be safe from other users; a cut
// plugin is refused before dlopen (which died of SIGBUS on one).
class PluginFiles : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/weft-test-plugins.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir = tmpl;
    }
    void TearDown() override {
        std::filesystem::remove_all(dir);
        unsetenv("WEFT_PLUGIN_PATH");
    }
    std::string dir;
};

TEST_F(PluginFiles, DerivedDirectoriesAndFilesMustNotBeWritableByOthers) {
    std::string why;
    ASSERT_EQ(chmod(dir.c_str(), 0755), 0);
    EXPECT_TRUE(weft::plugin_dir_trusted(dir, why)) << why;
    ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
    EXPECT_FALSE(weft::plugin_dir_trusted(dir, why));
    EXPECT_NE(why.find("writable by every user"), std::string::npos) << why;
    ASSERT_EQ(chmod(dir.c_str(), 0775), 0);
    EXPECT_FALSE(weft::plugin_dir_trusted(dir, why));
    EXPECT_NE(why.find("writable by its group"), std::string::npos) << why;
    std::string file = dir + "/libweft-x.so";
    std::ofstream(file) << "x";
    ASSERT_EQ(chmod(file.c_str(), 0666), 0);
    EXPECT_FALSE(weft::plugin_file_trusted(file, why));
    ASSERT_EQ(chmod(file.c_str(), 0644), 0);
    EXPECT_TRUE(weft::plugin_file_trusted(file, why)) << why;
}

TEST_F(PluginFiles, NamedInWeftPluginPathIsTheUsersChoice) {
    ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
    std::filesystem::copy_file(std::string(TEST_PLUGIN_DIR) + "/libweft-tlow.so", dir + "/libweft-tlow.so");
    setenv("WEFT_PLUGIN_PATH", dir.c_str(), 1);
    bool found = false;
    for (const auto &f : weft::loader_scan()) found = found || f.path == dir + "/libweft-tlow.so";
    EXPECT_TRUE(found) << "a directory named in WEFT_PLUGIN_PATH is searched whatever its mode";
}

#ifdef TEST_REAL_PLUGIN
TEST_F(PluginFiles, TruncatedPluginIsRefusedNotACrash) {
    const uintmax_t full = std::filesystem::file_size(TEST_REAL_PLUGIN);
    for (uintmax_t cut : {uintmax_t{2000}, uintmax_t{20000}, full / 2}) {
        SCOPED_TRACE("cut to " + std::to_string(cut) + " of " + std::to_string(full) + " bytes");
        std::string path = dir + "/libweft-tcut.so";
        std::filesystem::remove(path);
        std::filesystem::copy_file(TEST_REAL_PLUGIN, path);
        std::filesystem::resize_file(path, cut);
        // In a child: before the check, dlopen of such a file died of SIGBUS.
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            weft::plugin_loaded p;
            std::string why;
            bool refused = !weft::loader_load({"tcut", path}, p, why) &&
                why.find("truncated or corrupt plugin " + path) != std::string::npos;
            _exit(refused ? 0 : 1);
        }
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_FALSE(WIFSIGNALED(status)) << "killed by signal " << WTERMSIG(status);
        EXPECT_EQ(WEXITSTATUS(status), 0) << "not refused as truncated";
    }
    std::string why;
    EXPECT_TRUE(weft::plugin_file_whole(TEST_REAL_PLUGIN, why)) << why;
}
#endif
