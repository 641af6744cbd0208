// Fuzz target: plugins/galapagos/gal_cluster.cpp, the Galapagos cluster file parser
// (gal::cluster_parse and the cluster lookups node(), kernel(), software_rank()).
//
// Invariants: it never throws; a refusal reads "<name>:<line>: <reason>" with a line inside the
// text and leaves the output untouched; an accepted file follows gal_cluster.hpp's rules (node
// indices and kernel ids unique in 0..255, "sw"/"hw", a dotted IPv4 host, a port on every
// hardware node, every kernel on a defined node, entry lines inside the text), the lookups find
// each entry, and software_rank numbers the "sw" nodes 0, 1, ... in file order.
#include <arpa/inet.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>

#include "fuzz_common.hpp"
#include "gal_cluster.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    const int lines = 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
    const std::string name = "cluster.json";

    gal::cluster out;
    out.nodes.push_back({7, false, "sentinel", 1, 1});  // a refusal must leave this alone
    std::string why;
    bool ok = false;
    try {
        ok = gal::cluster_parse(text, name, out, why);
    } catch (...) {
        FUZZ_CHECK(!"cluster_parse threw");
    }
    if (!ok) {
        FUZZ_CHECK(out.nodes.size() == 1 && out.nodes[0].host == "sentinel" && out.kernels.empty());
        FUZZ_CHECK(why.rfind(name + ":", 0) == 0);
        size_t digits = why.find_first_not_of("0123456789", name.size() + 1);
        FUZZ_CHECK(digits != std::string::npos && digits > name.size() + 1);
        FUZZ_CHECK(why.compare(digits, 2, ": ") == 0);
        int line = std::stoi(why.substr(name.size() + 1, digits - name.size() - 1));
        FUZZ_CHECK(line >= 1 && line <= lines);
        return 0;
    }

    std::set<int> indices, ids;
    int rank = 0;
    for (const gal::cluster_node &n : out.nodes) {
        FUZZ_CHECK(n.index >= 0 && n.index <= 255 && indices.insert(n.index).second);
        in_addr a;
        FUZZ_CHECK(n.host.find('\0') == std::string::npos && inet_pton(AF_INET, n.host.c_str(), &a) == 1);
        if (n.hardware) FUZZ_CHECK(n.port != 0);
        FUZZ_CHECK(n.line >= 1 && n.line <= lines);
        FUZZ_CHECK(out.node(n.index) == &n);
        FUZZ_CHECK(out.software_rank(n.index) == (n.hardware ? -1 : rank));
        rank += !n.hardware;
    }
    for (const gal::cluster_kernel &k : out.kernels) {
        FUZZ_CHECK(k.id >= 0 && k.id <= 255 && ids.insert(k.id).second);
        FUZZ_CHECK(indices.count(k.node) == 1);
        FUZZ_CHECK(k.line >= 1 && k.line <= lines);
        FUZZ_CHECK(out.kernel(k.id) == &k);
    }
    FUZZ_CHECK(out.node(-1) == nullptr && out.node(256) == nullptr && out.kernel(256) == nullptr);
    FUZZ_CHECK(out.software_rank(256) == -1);

    // Parsing is a function of the text.
    gal::cluster again;
    std::string why2;
    FUZZ_CHECK(gal::cluster_parse(text, name, again, why2));
    FUZZ_CHECK(again.nodes.size() == out.nodes.size() && again.kernels.size() == out.kernels.size());
    for (size_t i = 0; i < out.nodes.size(); ++i)
        FUZZ_CHECK(again.nodes[i].index == out.nodes[i].index && again.nodes[i].host == out.nodes[i].host &&
                   again.nodes[i].port == out.nodes[i].port && again.nodes[i].hardware == out.nodes[i].hardware);
    for (size_t i = 0; i < out.kernels.size(); ++i)
        FUZZ_CHECK(again.kernels[i].id == out.kernels[i].id && again.kernels[i].node == out.kernels[i].node &&
                   again.kernels[i].function == out.kernels[i].function);
    return 0;
}
