// Galapagos cluster file: a valid file, then every way to refuse one, each with its exact
// "<file>:<line>: <reason>".
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <unistd.h>

#include "gal_cluster.hpp"

using gal::cluster;

namespace {

// Parsing must fail and leave the output alone; returns the message.
std::string refused(std::string_view text) {
    cluster out;
    out.nodes.push_back({42, false, "keep", 1, 1});
    std::string why;
    EXPECT_FALSE(gal::cluster_parse(text, "cluster.json", out, why)) << "accepted:\n" << text;
    EXPECT_EQ(out.nodes.size(), 1u);
    EXPECT_TRUE(out.kernels.empty());
    return why;
}

// A file with node 0 on line 3, then `node` (one line) on line 4, and no kernels.
std::string with_node(const std::string &node) {
    return "{\n"
           "  \"nodes\": [\n"
           "    {\"node\": 0, \"type\": \"sw\", \"address\": \"127.0.0.1:7000\"},\n"
           "    " +
        node +
        "\n"
        "  ],\n"
        "  \"kernels\": []\n"
        "}\n";
}

// A file with nodes 0 (sw) and 1 (hw), kernel 0 on line 7, then `kernel` (one line) on line 8.
std::string with_kernel(const std::string &kernel) {
    return "{\n"
           "  \"nodes\": [\n"
           "    {\"node\": 0, \"type\": \"sw\", \"address\": \"127.0.0.1:7000\"},\n"
           "    {\"node\": 1, \"type\": \"hw\", \"address\": \"10.0.0.2:7001\"}\n"
           "  ],\n"
           "  \"kernels\": [\n"
           "    {\"id\": 0, \"node\": 0},\n"
           "    " +
        kernel +
        "\n"
        "  ]\n"
        "}\n";
}

const char *const VALID = R"({
  "nodes": [
    {"node": 3, "type": "hw", "address": "10.0.0.2:7001"},
    {"node": 0, "type": "sw", "address": "127.0.0.1:7000"},
    {"node": 1, "type": "sw", "address": "127.0.0.1"},
    {
      "node": 2,
      "type": "sw",
      "address": "192.168.1.20:0"
    },
    {"node": 255, "type": "hw", "address": "10.0.0.3:65535"}
  ],
  "kernels": [
    {"id": 0, "node": 0},
    {"id": 255, "node": 3, "function": "jacobi"},
    {"id": 7, "node": 1}
  ]
}
)";

}  // namespace

TEST(GalCluster, ValidFile) {
    cluster c;
    std::string why;
    ASSERT_TRUE(gal::cluster_parse(VALID, "cluster.json", c, why)) << why;
    ASSERT_EQ(c.nodes.size(), 5u);
    ASSERT_EQ(c.kernels.size(), 3u);

    const gal::cluster_node *hw = c.node(3);
    ASSERT_NE(hw, nullptr);
    EXPECT_TRUE(hw->hardware);
    EXPECT_EQ(hw->host, "10.0.0.2");
    EXPECT_EQ(hw->port, 7001);
    EXPECT_EQ(hw->line, 3);
    EXPECT_EQ(c.node(1)->port, 0);  // port left out: any
    EXPECT_EQ(c.node(2)->port, 0);  // port 0: any
    EXPECT_EQ(c.node(2)->host, "192.168.1.20");
    EXPECT_EQ(c.node(2)->line, 6);  // where the entry's '{' is
    EXPECT_EQ(c.node(255)->port, 65535);
    EXPECT_EQ(c.node(4), nullptr);

    const gal::cluster_kernel *k = c.kernel(255);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->node, 3);
    EXPECT_EQ(k->function, "jacobi");
    EXPECT_EQ(k->line, 15);
    EXPECT_EQ(c.kernel(0)->function, "");
    EXPECT_EQ(c.kernel(7)->node, 1);
    EXPECT_EQ(c.kernel(1), nullptr);

    // Software nodes are ranked in file order, whatever their index; node 255 hosts nothing.
    EXPECT_EQ(c.software_rank(0), 0);
    EXPECT_EQ(c.software_rank(1), 1);
    EXPECT_EQ(c.software_rank(2), 2);
    EXPECT_EQ(c.software_rank(3), -1);
    EXPECT_EQ(c.software_rank(255), -1);
    EXPECT_EQ(c.software_rank(9), -1);
}

TEST(GalCluster, EmptyListsAndCrlf) {
    cluster c;
    std::string why;
    EXPECT_TRUE(gal::cluster_parse("{\"nodes\": [], \"kernels\": []}", "c", c, why)) << why;
    EXPECT_TRUE(c.nodes.empty());
    // Windows line ends count one line each.
    EXPECT_EQ(refused("{\r\n\"nodes\": [],\r\n\"kernels\": [],\r\n\"x\": 1\r\n}"),
              "cluster.json:4: unknown key \"x\" at the top level");
}

TEST(GalCluster, SyntaxErrorLine) {
    EXPECT_EQ(refused(with_node("{\"node\": 1, \"type\": \"sw\", \"address\": \"127.0.0.1\"},")),
              "cluster.json:5: syntax error while parsing value - unexpected ']'; "
              "expected '[', '{', or a literal");
    EXPECT_EQ(refused("{\n  \"nodes\": [\n    {\"node\": tru}\n  ]\n}\n"),
              "cluster.json:3: syntax error while parsing value - invalid literal; "
              "last read: '\"node\": tru}'");
    // A raw newline inside a string: blamed on the string's line.
    EXPECT_EQ(refused("{\n  \"nodes\": [\"abc\ndef\"]\n}"),
              "cluster.json:2: syntax error while parsing value - invalid string: control character "
              "U+000A (LF) must be escaped to \\u000A or \\n; last read: '\"abc<U+000A>'");
    // Input ending early: the last line, not the empty one after the final newline.
    EXPECT_EQ(refused("{\n  \"nodes\": [\n"),
              "cluster.json:2: syntax error while parsing value - unexpected end of input; "
              "expected '[', '{', or a literal");
    EXPECT_EQ(refused("{\"nodes\": [], \"kernels\": []}\n\n{}"),
              "cluster.json:3: syntax error while parsing value - unexpected '{'; expected end of input");
    EXPECT_EQ(refused("{\n\"nodes\": [],\n\"kernels\": [{\"id\": 1e999}]}"),
              "cluster.json:3: number overflow parsing '1e999'");
}

TEST(GalCluster, EmptyFile) {
    EXPECT_EQ(refused(""), "cluster.json:1: the file is empty");
    EXPECT_EQ(refused(" \n\t\r\n"), "cluster.json:1: the file is empty");
}

TEST(GalCluster, TopLevelNotAnObject) {
    EXPECT_EQ(refused("\n[1, 2]\n"), "cluster.json:2: the top level must be an object, not an array");
    EXPECT_EQ(refused("\"nodes\""), "cluster.json:1: the top level must be an object, not \"nodes\"");
    EXPECT_EQ(refused("\n\n42\n"), "cluster.json:3: the top level must be an object, not 42");
}

TEST(GalCluster, MissingOrWrongLists) {
    EXPECT_EQ(refused("\n{\"kernels\": []}"), "cluster.json:2: missing \"nodes\"");
    EXPECT_EQ(refused("{\n\"nodes\": []\n}"), "cluster.json:1: missing \"kernels\"");
    EXPECT_EQ(refused("{\n\"nodes\": {},\n\"kernels\": []}"),
              "cluster.json:2: \"nodes\" must be an array, not an object");
    EXPECT_EQ(refused("{\"nodes\": [],\n\"kernels\": null}"), "cluster.json:2: \"kernels\" must be an array, not null");
}

TEST(GalCluster, UnknownKey) {
    EXPECT_EQ(refused("{\n\"nodes\": [],\n\"kernels\": [],\n\"routers\": []\n}"),
              "cluster.json:4: unknown key \"routers\" at the top level");
    EXPECT_EQ(refused(with_node("{\"node\": 1, \"type\": \"sw\", \"address\": \"1.2.3.4\", \"mac\": 1}")),
              "cluster.json:4: node 1: unknown key \"mac\"");
    EXPECT_EQ(refused(with_kernel("{\"id\": 3, \"node\": 1, \"fn\": \"jacobi\"}")),
              "cluster.json:8: kernel 3: unknown key \"fn\"");
}

TEST(GalCluster, DuplicateJsonKey) {
    EXPECT_EQ(refused(with_node("{\"node\": 1, \"type\": \"sw\", \"type\": \"hw\", "
                                "\"address\": \"1.2.3.4\"}")),
              "cluster.json:4: duplicate key \"type\"");
}

TEST(GalCluster, DuplicateNode) {
    EXPECT_EQ(refused(with_node("{\"node\": 0, \"type\": \"hw\", \"address\": \"10.0.0.2:7001\"}")),
              "cluster.json:4: node 0: defined twice (first at line 3)");
}

TEST(GalCluster, DuplicateKernel) {
    EXPECT_EQ(refused(with_kernel("{\"id\": 0, \"node\": 1}")),
              "cluster.json:8: kernel 0: defined twice (first at line 7)");
}

TEST(GalCluster, IndexOutOfRange) {
    EXPECT_EQ(refused(with_node("{\"node\": 256, \"type\": \"sw\", \"address\": \"127.0.0.1\"}")),
              "cluster.json:4: nodes[1]: node index 256 is out of range 0..255");
    EXPECT_EQ(refused(with_node("{\"node\": -1, \"type\": \"sw\", \"address\": \"127.0.0.1\"}")),
              "cluster.json:4: nodes[1]: node index -1 is out of range 0..255");
    EXPECT_EQ(refused(with_kernel("{\"id\": 300, \"node\": 1}")),
              "cluster.json:8: kernels[1]: kernel id 300 is out of range 0..255");
    EXPECT_EQ(refused(with_kernel("{\"id\": 18446744073709551615, \"node\": 1}")),
              "cluster.json:8: kernels[1]: kernel id 18446744073709551615 is out of range 0..255");
    EXPECT_EQ(refused(with_kernel("{\"id\": -9223372036854775808, \"node\": 1}")),
              "cluster.json:8: kernels[1]: kernel id -9223372036854775808 is out of range 0..255");
}

TEST(GalCluster, BadType) {
    EXPECT_EQ(refused(with_node("{\"node\": 1, \"type\": \"fpga\", \"address\": \"127.0.0.1\"}")),
              "cluster.json:4: node 1: \"type\" must be \"sw\" or \"hw\", not \"fpga\"");
    EXPECT_EQ(refused(with_node("{\"node\": 1, \"type\": 1, \"address\": \"127.0.0.1\"}")),
              "cluster.json:4: node 1: \"type\" must be \"sw\" or \"hw\", not 1");
}

TEST(GalCluster, BadAddress) {
    auto node = [](const std::string &type, const std::string &address) {
        return refused(with_node("{\"node\": 1, \"type\": \"" + type + "\", \"address\": " + address + "}"));
    };
    for (std::string bad : {"localhost:7000", "10.0.0:7000", "10.0.0.256", "10.0.0.1:", "10.0.0.1:x7", "10.0.0.1:-7",
                            "10.0.0.1:+7", "10.0.0.1:7:7", "10.0.0.1:123456", "", " 10.0.0.1", "10.0.0.1\\u0000x:7"}) {
        EXPECT_EQ(node("sw", "\"" + bad + "\""),
                  "cluster.json:4: node 1: address \"" + bad + "\" is not \"IPv4:port\"");
    }
    EXPECT_EQ(node("hw", "\"10.0.0.2:65536\""),
              "cluster.json:4: node 1: address \"10.0.0.2:65536\": port 65536 is out of range 1..65535");
    EXPECT_EQ(node("sw", "7000"), "cluster.json:4: node 1: \"address\" must be a string, not 7000");
}

TEST(GalCluster, HardwareNodeNeedsPort) {
    EXPECT_EQ(refused(with_node("{\"node\": 1, \"type\": \"hw\", \"address\": \"10.0.0.2\"}")),
              "cluster.json:4: node 1: address \"10.0.0.2\": a hardware node needs a port");
    EXPECT_EQ(refused(with_node("{\"node\": 1, \"type\": \"hw\", \"address\": \"10.0.0.2:0\"}")),
              "cluster.json:4: node 1: address \"10.0.0.2:0\": a hardware node needs a port");
}

TEST(GalCluster, UnknownNode) {
    EXPECT_EQ(refused(with_kernel("{\"id\": 3, \"node\": 9}")), "cluster.json:8: kernel 3: node 9 is not defined");
    EXPECT_EQ(refused(with_kernel("{\"id\": 3, \"node\": -1}")), "cluster.json:8: kernel 3: node -1 is not defined");
    EXPECT_EQ(refused(with_kernel("{\"id\": 3, \"node\": 256}")), "cluster.json:8: kernel 3: node 256 is not defined");
    // The example of the header comment, verbatim.
    EXPECT_EQ(refused("{\n\"nodes\": [\n{\"node\": 0, \"type\": \"sw\", \"address\": \"127.0.0.1\"}\n],\n"
                      "\"kernels\": [\n{\"id\": 0, \"node\": 0},\n{\"id\": 3, \"node\": 9}\n]\n}\n"),
              "cluster.json:7: kernel 3: node 9 is not defined");
}

TEST(GalCluster, MissingKeys) {
    EXPECT_EQ(refused(with_node("{\"type\": \"sw\", \"address\": \"127.0.0.1\"}")),
              "cluster.json:4: nodes[1]: missing \"node\"");
    EXPECT_EQ(refused(with_node("{\"node\": 1, \"address\": \"127.0.0.1\"}")),
              "cluster.json:4: node 1: missing \"type\"");
    EXPECT_EQ(refused(with_node("{\"node\": 1, \"type\": \"sw\"}")), "cluster.json:4: node 1: missing \"address\"");
    EXPECT_EQ(refused(with_kernel("{\"node\": 1}")), "cluster.json:8: kernels[1]: missing \"id\"");
    EXPECT_EQ(refused(with_kernel("{\"id\": 5}")), "cluster.json:8: kernel 5: missing \"node\"");
}

TEST(GalCluster, WrongJsonTypes) {
    EXPECT_EQ(refused(with_node("7")), "cluster.json:4: nodes[1] must be an object, not 7");
    EXPECT_EQ(refused(with_kernel("[3, 1]")), "cluster.json:8: kernels[1] must be an object, not an array");
    EXPECT_EQ(refused(with_node("{\"node\": \"1\", \"type\": \"sw\", \"address\": \"127.0.0.1\"}")),
              "cluster.json:4: nodes[1]: \"node\" must be an integer, not \"1\"");
    EXPECT_EQ(refused(with_node("{\"node\": 1.5, \"type\": \"sw\", \"address\": \"127.0.0.1\"}")),
              "cluster.json:4: nodes[1]: \"node\" must be an integer, not 1.5");
    EXPECT_EQ(refused(with_kernel("{\"id\": true, \"node\": 1}")),
              "cluster.json:8: kernels[1]: \"id\" must be an integer, not true");
    EXPECT_EQ(refused(with_kernel("{\"id\": 3, \"node\": \"0\"}")),
              "cluster.json:8: kernel 3: \"node\" must be an integer, not \"0\"");
    EXPECT_EQ(refused(with_kernel("{\"id\": 3, \"node\": 1, \"function\": 5}")),
              "cluster.json:8: kernel 3: \"function\" must be a string, not 5");
    EXPECT_EQ(refused(with_kernel("{\"id\": 3, \"node\": 1, \"function\": {\"name\": \"f\"}}")),
              "cluster.json:8: kernel 3: \"function\" must be a string, not an object");
}

// Value errors point at the value's line, missing keys and duplicates at the entry's '{'.
TEST(GalCluster, LinesWithinAnEntry) {
    const std::string spread =
        "{\n"
        "  \"nodes\": [\n"
        "    {\n"
        "      \"type\": \"hw\",\n"
        "      \"address\": \"10.0.0.2\",\n"
        "      \"node\": 300\n"  // a number read one byte ahead: the '\n'
        "    }\n"
        "  ],\n"
        "  \"kernels\": []\n"
        "}\n";
    EXPECT_EQ(refused(spread), "cluster.json:6: nodes[0]: node index 300 is out of range 0..255");
    std::string bad_address = spread;
    bad_address.replace(bad_address.find("300"), 3, "4");
    EXPECT_EQ(refused(bad_address), "cluster.json:5: node 4: address \"10.0.0.2\": a hardware node needs a port");
    std::string no_address = bad_address;
    no_address.replace(no_address.find("\"address\""), 9, "\"addr\"");
    EXPECT_EQ(refused(no_address), "cluster.json:5: node 4: unknown key \"addr\"");
    no_address.replace(no_address.find("      \"addr\": \"10.0.0.2\",\n"), 27, "");
    EXPECT_EQ(refused(no_address), "cluster.json:3: node 4: missing \"address\"");
}

// Hostile input: refused with a reason, never a crash, an exception or an abort.
TEST(GalCluster, HostileInput) {
    EXPECT_EQ(refused(std::string(100000, '[')), "cluster.json:1: nested too deeply");
    EXPECT_EQ(refused("{\"nodes\": [\"\xff\"]}"),
              "cluster.json:1: syntax error while parsing value - invalid string: ill-formed UTF-8 byte; "
              "last read: '\"\xff'");
    // nlohmann would stop at a NUL and ignore what follows.
    EXPECT_EQ(refused(std::string("{\"nodes\": [], \"kernels\": []}\n") + '\0' + "junk"),
              "cluster.json:2: NUL byte in the file");
    const std::string valid = VALID;
    for (size_t cut = 0; cut < valid.size() - 2; ++cut) {  // every truncation (the end is "}\n")
        cluster c;
        std::string why;
        EXPECT_FALSE(gal::cluster_parse(valid.substr(0, cut), "c", c, why)) << cut;
        EXPECT_EQ(why.rfind("c:", 0), 0u) << why;
    }
    std::mt19937 random(12345);
    for (int round = 0; round < 1000; ++round) {  // random single-byte corruptions
        std::string text = valid;
        text[random() % text.size()] = static_cast<char>(random() % 256);
        cluster c;
        std::string why;
        if (!gal::cluster_parse(text, "c", c, why)) {
            EXPECT_EQ(why.rfind("c:", 0), 0u) << why;
        }
    }
}

TEST(GalCluster, LoadFile) {
    char path[] = "/tmp/test_gal_cluster_XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    std::string text = with_kernel("{\"id\": 3, \"node\": 9}");
    ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    close(fd);
    cluster c;
    std::string why;
    EXPECT_FALSE(gal::cluster_load(path, c, why));
    EXPECT_EQ(why, std::string(path) + ":8: kernel 3: node 9 is not defined");

    FILE *file = fopen(path, "w");
    ASSERT_NE(file, nullptr);
    fputs(VALID, file);
    fclose(file);
    EXPECT_TRUE(gal::cluster_load(path, c, why)) << why;
    EXPECT_EQ(c.nodes.size(), 5u);
    unlink(path);
}

TEST(GalCluster, LoadFileNotFound) {
    cluster c;
    std::string why;
    EXPECT_FALSE(gal::cluster_load("/nonexistent/cluster.json", c, why));
    EXPECT_EQ(why, "/nonexistent/cluster.json: No such file or directory");
    EXPECT_FALSE(gal::cluster_load("/tmp", c, why));
    EXPECT_NE(why.find("/tmp: not a regular file"), std::string::npos) << why;
    EXPECT_FALSE(gal::cluster_load(nullptr, c, why));
    EXPECT_EQ(why, "no cluster file given");
}

namespace {

enum class limit { wall, cpu };

// Runs body in a child that is ended after `seconds` of wall-clock time (SIGALRM: a regression
// to blocking) or of CPU time (SIGXCPU: a regression to quadratic work, whatever else loads
// the machine), so that the test fails instead of hanging.
void in_child_within(unsigned seconds, limit kind, const std::function<bool()> &body) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (kind == limit::wall) {
            alarm(seconds);
        } else {
            rlimit cpu{seconds, seconds + 1};
            setrlimit(RLIMIT_CPU, &cpu);
        }
        _exit(body() ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_FALSE(WIFSIGNALED(status)) << "not done within " << seconds << " s of "
                                      << (kind == limit::wall ? "time" : "CPU time") << " (signal " << WTERMSIG(status)
                                      << ")";
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace

// WEFT_GALAPAGOS_CLUSTER=/dev/zero grew to 4 GB, a FIFO blocked weft_init for ever.
TEST(GalCluster, LoadOnlyBoundedRegularFiles) {
    in_child_within(10, limit::wall, [] {
        cluster c;
        std::string why;
        return !gal::cluster_load("/dev/zero", c, why) && why.find("not a regular file") != std::string::npos;
    });
    char dir[] = "/tmp/test_gal_cluster_fifo_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    std::string fifo = std::string(dir) + "/cluster.json";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    in_child_within(10, limit::wall, [&] {
        cluster c;
        std::string why;
        return !gal::cluster_load(fifo.c_str(), c, why) && why.find("not a regular file") != std::string::npos;
    });
    unlink(fifo.c_str());
    rmdir(dir);
    // One byte over the limit (a sparse file).
    char big[] = "/tmp/test_gal_cluster_big_XXXXXX";
    int fd = mkstemp(big);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, static_cast<off_t>(gal::CLUSTER_FILE_MAX + 1)), 0);
    close(fd);
    cluster c;
    std::string why;
    EXPECT_FALSE(gal::cluster_load(big, c, why));
    EXPECT_NE(why.find("more than a cluster file's limit of " + std::to_string(gal::CLUSTER_FILE_MAX)),
              std::string::npos)
        << why;
    unlink(big);
}

// Parse time grew quadratically (80,000 kernels 1.8 s, 400,000 killed after 84 s): 400,000
// kernels (all but 256 of them duplicates, refused after the parse) take about a second of CPU
// time here (5-6 s under ASan); the quadratic parser took 38 (without ASan).
TEST(GalCluster, ParseIsLinear) {
    std::string text = "{\"nodes\": [{\"node\": 0, \"type\": \"sw\", \"address\": \"127.0.0.1\"}],\n\"kernels\": [\n";
    for (int i = 0; i < 400000; ++i)
        text += std::string(i ? ",\n" : "") + "{\"id\": " + std::to_string(i % 256) + ", \"node\": 0}";
    text += "]}\n";
    in_child_within(20, limit::cpu, [&] {
        cluster c;
        std::string why;
        return !gal::cluster_parse(text, "big.json", c, why) &&
            why == "big.json:259: kernel 0: defined twice (first at line 3)";
    });
}
