/* Galapagos cluster file: where each node of a Galapagos cluster listens, and which node hosts
 * each of its globally numbered kernels.  A node is a software node (a Weft process) or a
 * hardware node (an FPGA, or the GAScore functional model standing in for one).
 *
 *   {
 *     "nodes": [
 *       {"node": 0, "type": "sw", "address": "127.0.0.1:7000"},
 *       {"node": 1, "type": "hw", "address": "10.0.0.2:7001"}
 *     ],
 *     "kernels": [
 *       {"id": 0, "node": 0},
 *       {"id": 1, "node": 1, "function": "jacobi"}
 *     ]
 *   }
 *
 * Rules: "nodes" and "kernels" are required arrays.  Node indices are unique, 0..255, in any
 * order; "type" is "sw" or "hw"; "address" is "IPv4:port" with port 1..65535, except that a
 * software node may leave the port out or give 0, meaning any port.  Kernel ids are unique,
 * 0..255 (8-bit on the wire); each kernel's "node" must be defined; "function" (optional) names
 * a hardware kernel's function in the model.  A node may host no kernel.  Any other key, or a
 * key given twice in one object, is an error.
 *
 * World ranks: Weft numbers the software nodes in file order, so the i-th "sw" entry of "nodes"
 * is world rank i whatever its node index (software_rank()).  Hardware nodes have no rank.
 *
 * Errors read "<file>:<line>: <reason>", e.g. "cluster.json:7: kernel 3: node 9 is not defined".
 * The line is that of the offending byte for JSON syntax errors (a duplicate key included), of
 * the offending value for a bad value or an unknown key, and of the entry's opening '{' for a
 * missing key or an entry defined twice.  Entries whose index or id is not known yet are named
 * by array position ("nodes[2]", "kernels[0]"), the others as "node N" / "kernel N".  I/O
 * errors read "<path>: <strerror>".
 *
 * Internal C++ of the plugin: none of these types crosses the plugin's C ABI. */
#ifndef WEFT_GAL_CLUSTER_HPP
#define WEFT_GAL_CLUSTER_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gal {

struct cluster_node {
    int index;        /* "node" */
    bool hardware;    /* "type": "hw" */
    std::string host; /* dotted IPv4, as written */
    uint16_t port;    /* 0: any (software nodes only) */
    int line;         /* where the entry starts in the file */
};

struct cluster_kernel {
    int id;
    int node;             /* index of the hosting node */
    std::string function; /* empty when not given */
    int line;
};

struct cluster {
    std::vector<cluster_node> nodes;     /* in file order */
    std::vector<cluster_kernel> kernels; /* in file order */

    const cluster_node *node(int index) const;  /* nullptr: not defined */
    const cluster_kernel *kernel(int id) const; /* nullptr: not defined */
    int software_rank(int node_index) const;    /* world rank; -1 for hw or undefined nodes */
};

/* text: the file's contents; name: how to call the file in messages.  On error returns false,
 * sets why and leaves out as it was.  Never throws. */
bool cluster_parse(std::string_view text, const std::string &name, cluster &out, std::string &why);
/* Largest cluster file read, in bytes (16 MiB; 256 nodes and 256 kernels need well under
 * 100 KiB, so this only bounds hostile or mistaken input). */
constexpr uint64_t CLUSTER_FILE_MAX = uint64_t{16} << 20;
/* Reads and parses the file at path (also its name in messages): a regular file of at most
 * CLUSTER_FILE_MAX bytes.  Never throws, never blocks (a FIFO is refused, not waited on). */
bool cluster_load(const char *path, cluster &out, std::string &why);

}  // namespace gal

#endif
