#include "loader/loader.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <set>

#include "base/error.hpp"
#include "loader/plugin_trust.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

std::string libweft_dir() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(&loader_search_path), &info) == 0 || info.dli_fname == nullptr) return {};
    char resolved[PATH_MAX];
    std::string path = info.dli_fname;
    bool in_program = path.find(".so") == std::string::npos;
    if (in_program) {
        // Linked into a program (the unit tests): dladdr names the program as it was started
        // (argv[0], maybe relative to the working directory, which must never choose where
        // plugins come from), so ask the kernel for the program's own file.
        ssize_t n = readlink("/proc/self/exe", resolved, sizeof resolved - 1);
        if (n <= 0) return {};
        resolved[n] = '\0';
        path = resolved;
    } else if (realpath(info.dli_fname, resolved)) {
        path = resolved;
    }
    auto slash = path.rfind('/');
    if (slash == std::string::npos) return {};
    std::string dir = path.substr(0, slash);
    // The program lives in bin/, the plugins in the sibling lib/weft.
    if (in_program) dir += "/../" WEFT_LIBDIR_NAME;
    return realpath(dir.c_str(), resolved) ? std::string(resolved) : dir;
}

bool is_plugin_file_name(const std::string &file, std::string &name) {
    static const std::string prefix = "libweft-", suffix = ".so";
    if (file.size() <= prefix.size() + suffix.size()) return false;
    if (file.compare(0, prefix.size(), prefix) != 0) return false;
    if (file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) return false;
    name = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
    return true;
}

// The context space every 1.6 core gave (weft_fabric_ep_attr_t::context_space): a plugin built
// for minor 6 may count on it, and cannot ask for it (weft_fabric_caps_t::context_space came
// with minor 7).
constexpr size_t context_space_abi_1_6 = 336;

// Size of the fabric ops table as defined by each minor version of ABI 1, so that a plugin
// built against an older header is never read past the end of its table.
size_t fabric_ops_size_for_minor(uint32_t minor) {
    static const size_t sizes[] = {
        offsetof(weft_fabric_ops_v1_t, kernel_table),    // minor 0: up to ep_arm
        offsetof(weft_fabric_ops_v1_t, ep_peer_failed),  // minor 1: + the global-kernel operations
        offsetof(weft_fabric_ops_v1_t, ep_peer_failed),  // minor 2: queue plugins only
        offsetof(weft_fabric_ops_v1_t, ep_peer_failed),  // minor 3: queue plugins only
        offsetof(weft_fabric_ops_v1_t, tag_send_now),    // minor 4: + ep_peer_failed, stats
        offsetof(weft_fabric_ops_v1_t, tag_sendv),       // minor 5: + tag_send_now
        offsetof(weft_fabric_ops_v1_t, tag_sendv),       // minor 6: ep attr context_space
        offsetof(weft_fabric_ops_v1_t, tag_sendv),       // minor 7: caps context_space
        offsetof(weft_fabric_ops_v1_t, tag_send_sync),   // minor 8: + tag_sendv, tag_recvv
        sizeof(weft_fabric_ops_v1_t),                    // minor 9: + tag_send_sync
    };
    constexpr uint32_t known = sizeof(sizes) / sizeof(sizes[0]);
    return minor < known ? sizes[minor] : sizeof(weft_fabric_ops_v1_t);
}

const char *missing_fabric_op(const weft_fabric_ops_v1_t &ops) {
#define WEFT_REQUIRE_OP(op) \
    if (ops.op == nullptr) return #op
    WEFT_REQUIRE_OP(init);
    WEFT_REQUIRE_OP(finalize);
    WEFT_REQUIRE_OP(query);
    WEFT_REQUIRE_OP(ep_open);
    WEFT_REQUIRE_OP(ep_close);
    WEFT_REQUIRE_OP(ep_address);
    WEFT_REQUIRE_OP(ep_connect);
    WEFT_REQUIRE_OP(ep_disconnect);
    WEFT_REQUIRE_OP(tag_send);
    WEFT_REQUIRE_OP(tag_recv);
    WEFT_REQUIRE_OP(tag_probe);
    WEFT_REQUIRE_OP(cancel);
    WEFT_REQUIRE_OP(ep_progress);
#undef WEFT_REQUIRE_OP
    return nullptr;
}

std::string join(const std::vector<std::string> &parts, const char *sep) {
    std::string out;
    for (const auto &p : parts) out += (out.empty() ? "" : sep) + p;
    return out;
}

}  // namespace

// The directories WEFT_PLUGIN_PATH names, in order.
std::vector<std::string> plugin_path_from_env() {
    std::vector<std::string> dirs;
    if (const char *env = std::getenv("WEFT_PLUGIN_PATH")) {
        std::string s = env;
        size_t start = 0;
        while (start <= s.size()) {
            size_t end = s.find(':', start);
            if (end == std::string::npos) end = s.size();
            if (end > start) dirs.push_back(s.substr(start, end - start));
            start = end + 1;
        }
    }
    return dirs;
}

std::vector<std::string> loader_search_path() {
    std::vector<std::string> dirs = plugin_path_from_env();
    std::string own = libweft_dir();
    if (!own.empty()) dirs.push_back(own + "/" WEFT_PLUGIN_SUBDIR);
    dirs.push_back(WEFT_INSTALL_PLUGIN_DIR);
    std::vector<std::string> unique;
    for (auto &d : dirs)
        if (std::find(unique.begin(), unique.end(), d) == unique.end()) unique.push_back(d);
    return unique;
}

std::vector<plugin_file> loader_scan() {
    std::vector<plugin_file> found;
    std::set<std::string> names;
    const std::vector<std::string> named = plugin_path_from_env();
    for (const auto &dir : loader_search_path()) {
        // Directories Weft derived itself must be safe from other users; WEFT_PLUGIN_PATH's
        // are the user's own choice.
        const bool chosen = std::find(named.begin(), named.end(), dir) != named.end();
        DIR *d = opendir(dir.c_str());
        if (d == nullptr) {
            log(WEFT_LOG_DEBUG, "plugin directory %s: %s", dir.c_str(), std::strerror(errno));
            continue;
        }
        std::string why;
        if (!chosen && !plugin_dir_trusted(dir, why)) {
            log(WEFT_LOG_WARN, "%s", why.c_str());
            closedir(d);
            continue;
        }
        log(WEFT_LOG_DEBUG, "searching plugin directory %s (%s)", dir.c_str(),
            chosen ? "WEFT_PLUGIN_PATH" : "beside libweft, or the install directory");
        std::vector<plugin_file> here;
        while (dirent *e = readdir(d)) {
            std::string name;
            if (!is_plugin_file_name(e->d_name, name)) continue;
            std::string path = dir + "/" + e->d_name;
            if (!chosen && !plugin_file_trusted(path, why)) {
                log(WEFT_LOG_WARN, "%s", why.c_str());
                continue;
            }
            here.push_back({name, path});
        }
        closedir(d);
        std::sort(here.begin(), here.end(), [](auto &a, auto &b) { return a.name < b.name; });
        for (auto &p : here)
            if (names.insert(p.name).second) found.push_back(p);
    }
    return found;
}

bool loader_load(const plugin_file &file, plugin_loaded &out, std::string &why) {
    if (!plugin_file_whole(file.path, why)) return false;
    dlerror();
    // RTLD_NODELETE: a vendor library, once its constructors ran, stays mapped even when the
    // plugin is not chosen; unloading one (atexit handlers, globals its constructors filled)
    // is riskier than the memory it holds.
    void *dl = dlopen(file.path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (dl == nullptr) {
        const char *e = dlerror();
        why = std::string("dlopen failed: ") + (e ? e : "unknown error");
        return false;
    }
    auto *desc = static_cast<const weft_plugin_v1_t *>(dlsym(dl, WEFT_PLUGIN_SYMBOL));
    if (desc == nullptr) {
        const char *e = dlerror();
        why = std::string("does not export the symbol " WEFT_PLUGIN_SYMBOL " (") + (e ? e : "") +
            "); is it a Weft plugin built against api/weft/plugin.h?";
        dlclose(dl);
        return false;
    }
    if (desc->abi_major != WEFT_PLUGIN_ABI_MAJOR) {
        why = "built for plugin ABI " + std::to_string(desc->abi_major) + "." + std::to_string(desc->abi_minor) +
            ", this Weft needs ABI " + std::to_string(WEFT_PLUGIN_ABI_MAJOR) +
            ".x; rebuild the plugin against this Weft";
        dlclose(dl);
        return false;
    }
    if (desc->name == nullptr || desc->ops == nullptr ||
        (desc->kind != WEFT_PLUGIN_KIND_FABRIC && desc->kind != WEFT_PLUGIN_KIND_QUEUE)) {
        why = "malformed plugin descriptor (name, ops or kind missing)";
        dlclose(dl);
        return false;
    }
    out = plugin_loaded{};
    out.name = file.name;
    out.path = file.path;
    out.dl = dl;
    out.desc = desc;
    if (desc->kind == WEFT_PLUGIN_KIND_FABRIC) {
        std::memcpy(&out.fabric_ops, desc->ops, fabric_ops_size_for_minor(desc->abi_minor));
        if (const char *op = missing_fabric_op(out.fabric_ops)) {
            why = std::string("fabric operation '") + op + "' is missing from its ops table";
            dlclose(dl);
            out = plugin_loaded{};
            return false;
        }
    }
    return true;
}

bool loader_parse_preference(const std::string &text, fabric_preference &out, std::string &why) {
    out = {};
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find(',', start);
        if (end == std::string::npos) end = text.size();
        std::string item = text.substr(start, end - start);
        start = end + 1;
        item.erase(0, item.find_first_not_of(" \t"));
        if (auto last = item.find_last_not_of(" \t"); last != std::string::npos) item.erase(last + 1);
        if (item.empty()) continue;
        bool excluded = item[0] == '^';
        if (excluded) item.erase(0, 1);
        if (item.empty() || item.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos) {
            why = "'" + item + "' is not a plugin name (letters, digits, '_' and '-'; '^name' excludes)";
            return false;
        }
        (excluded ? out.exclude : out.include).push_back(item);
    }
    // Only separators ("," or ",,,"): a list was meant, and it names nothing.
    if (out.include.empty() && out.exclude.empty() && text.find_first_not_of(" \t") != std::string::npos) {
        why = "'" + text + "' names no plugin (a comma-separated list of names; '^name' excludes)";
        return false;
    }
    return true;
}

int loader_open_fabric(const fabric_preference &pref, const std::string &source, const weft_plugin_host_t *host,
                       fabric_open &out) {
    // Queue plugins (libweft-queue-<name>.so, as NCCL names its kinds: libnccl-net-*, libnccl-tuner-*)
    // are left alone: loading one pulls in a GPU runtime, which fabric selection must not pay for.
    std::vector<plugin_file> files = loader_scan();
    std::erase_if(files, [](const plugin_file &f) { return f.name.rfind("queue-", 0) == 0; });
    auto excluded = [&](const std::string &n) {
        return std::find(pref.exclude.begin(), pref.exclude.end(), n) != pref.exclude.end();
    };
    std::vector<std::string> tried;  // "name (path): reason"
    // A plugin that refused the user's settings for it (init's WEFT_PLUGIN_ERR_INVALID): that is
    // an error to fix, never a reason to fall through silently to another fabric.
    std::string refused_settings;

    auto try_open = [&](const plugin_file &f, bool requested) -> bool {
        plugin_loaded p;
        std::string why;
        if (!loader_load(f, p, why)) {
            tried.push_back(f.name + " (" + f.path + "): " + why);
            log(requested ? WEFT_LOG_WARN : WEFT_LOG_DEBUG, "fabric %s skipped: %s", f.name.c_str(),
                tried.back().c_str());
            return false;
        }
        if (p.desc->kind != WEFT_PLUGIN_KIND_FABRIC) {
            if (requested) tried.push_back(f.name + " (" + f.path + "): is a queue plugin, not a fabric");
            dlclose(p.dl);
            return false;
        }
        char reason[512] = "";
        weft_fabric_t *fabric = nullptr;
        int rc = p.fabric_ops.init(host, &fabric, reason, sizeof reason);
        if (rc != WEFT_PLUGIN_OK || fabric == nullptr) {
            tried.push_back(f.name + " (" + f.path + "): failed to open: " +
                            (reason[0] ? reason : "no reason given (code " + std::to_string(rc) + ")"));
            if (rc == WEFT_PLUGIN_ERR_INVALID) refused_settings = f.name + ": " + (reason[0] ? reason : "bad setting");
            log(requested ? WEFT_LOG_WARN : WEFT_LOG_DEBUG, "fabric %s skipped: %s", f.name.c_str(),
                tried.back().c_str());
            // The library stays loaded: unloading a vendor library after a failed init is
            // riskier (atexit handlers, threads) than the memory it holds.
            return false;
        }
        out.plugin = p;
        out.fabric = fabric;
        out.caps = weft_fabric_caps_t{};
        out.caps.struct_size = sizeof out.caps;
        if (p.fabric_ops.query(fabric, &out.caps) != WEFT_PLUGIN_OK) {
            tried.push_back(f.name + " (" + f.path + "): query of capabilities failed");
            p.fabric_ops.finalize(fabric);
            return false;
        }
        // Plugins older than minor 7 do not ask for context space: one built for minor 6 gets
        // what 1.6 cores gave every plugin, an older one none (it cannot read the field).
        if (p.desc->abi_minor < 7) out.caps.context_space = p.desc->abi_minor == 6 ? context_space_abi_1_6 : 0;
        if (p.desc->abi_minor < 8) out.caps.iov_limit = 0;  // it has no tag_sendv either
        log(WEFT_LOG_INFO, "fabric %s %s selected (%s)", f.name.c_str(), p.desc->version ? p.desc->version : "",
            f.path.c_str());
        return true;
    };

    if (!pref.include.empty()) {
        for (const auto &name : pref.include) {
            if (excluded(name)) continue;
            auto it = std::find_if(files.begin(), files.end(), [&](auto &f) { return f.name == name; });
            if (it == files.end()) {
                tried.push_back(name + ": no file libweft-" + name + ".so in the search path");
                continue;
            }
            if (try_open(*it, true)) return WEFT_SUCCESS;
            if (!refused_settings.empty()) break;
        }
    } else {
        // No stated preference: every fabric plugin, highest priority first.
        struct ranked {
            plugin_file file;
            int priority;
        };
        std::vector<ranked> order;
        for (const auto &f : files) {
            if (excluded(f.name)) continue;
            plugin_loaded p;
            std::string why;
            if (!loader_load(f, p, why)) {
                tried.push_back(f.name + " (" + f.path + "): " + why);
                log(WEFT_LOG_DEBUG, "plugin skipped: %s", tried.back().c_str());
                continue;
            }
            if (p.desc->kind == WEFT_PLUGIN_KIND_FABRIC) order.push_back({f, p.desc->priority});
            dlclose(p.dl);  // reopened by try_open; dlopen refcounts, nothing ran yet
        }
        std::stable_sort(order.begin(), order.end(), [](auto &a, auto &b) { return a.priority > b.priority; });
        for (const auto &r : order) {
            if (try_open(r.file, false)) return WEFT_SUCCESS;
            if (!refused_settings.empty()) break;
        }
    }
    if (!refused_settings.empty())
        return fail(WEFT_ERR_PLUGIN, "fabric %s (fix the setting, or leave this fabric out with WEFT_FABRIC=^%s)",
                    refused_settings.c_str(), refused_settings.substr(0, refused_settings.find(':')).c_str());

    std::string what = pref.include.empty()
        ? "no fabric plugin could be opened"
        : "none of the fabrics requested by " + source + " (" + join(pref.include, ",") + ") could be opened";
    if (tried.empty()) tried.push_back("no libweft-*.so fabric plugin found");
    return fail(WEFT_ERR_PLUGIN, "%s; tried: %s; searched: %s (set WEFT_PLUGIN_PATH to add directories)", what.c_str(),
                join(tried, "; ").c_str(), join(loader_search_path(), ":").c_str());
}

}  // namespace weft
