/* Galapagos cluster file parser.  nlohmann/json keeps no positions, so a first SAX pass reads the
 * text through an iterator that remembers the last byte taken and notes there the line where
 * each value starts, keyed by its JSON pointer; a second pass builds the document, and the checks
 * look up the line of what they refuse.  (nlohmann's parse callback did both at once, but its
 * end_object scans the whole enclosing array: 80,000 kernels took 1.8 s, 400,000 minutes.) */
#include "gal_cluster.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace gal {
namespace {

using json = nlohmann::json;
using pointer = json::json_pointer;

constexpr int MAX_INDEX = 255;   /* node indices and kernel ids are 8-bit on the wire */
constexpr size_t LINE_DEPTH = 3; /* deepest value whose line is kept: an entry's field */
constexpr size_t MAX_DEPTH = 64; /* the format needs 4 levels; bounds work on hostile input */

/* A const char * that remembers the last byte nlohmann took.  When a parse event arrives, that
 * byte is the token's last one (a '{', a string's closing quote), or for a number the byte read
 * ahead: on the number's line, or the '\n' ending it, which line counts leave out.  JSON strings
 * hold no raw newline, so that byte's line is the one the value starts on. */
struct tracking_iterator {
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char *;
    using reference = const char &;

    const char *at;
    const char **last_read;

    reference operator*() const {
        *last_read = at;
        return *at;
    }
    tracking_iterator &operator++() {
        ++at;
        return *this;
    }
    tracking_iterator operator++(int) {
        tracking_iterator old = *this;
        ++at;
        return old;
    }
    bool operator==(const tracking_iterator &other) const { return at == other.at; }
};

/* Thrown by the SAX handler to stop the parse; it holds the line and reason. */
struct parse_stopped {};

/* The SAX handler of the first pass: for each value down to LINE_DEPTH the line where it starts,
 * by JSON pointer.  Also refuses duplicate keys, which nlohmann would silently overwrite, and
 * nesting beyond MAX_DEPTH, and keeps nlohmann's syntax error. */
class line_recorder : public nlohmann::json_sax<json> {
  public:
    const char *last_read;
    std::unordered_map<std::string, int> lines;
    std::string error;
    int error_line = 0;
    /* A syntax error: nlohmann's message and the byte it counts (json::parse_error::byte). */
    std::string syntax_error;
    size_t syntax_byte = 0;
    bool syntax_failed = false;

    explicit line_recorder(const char *text) : last_read(text), counted_(text) {}

    bool null() override { return value_starts(false, false); }
    bool boolean(bool) override { return value_starts(false, false); }
    bool number_integer(number_integer_t) override { return value_starts(false, false); }
    bool number_unsigned(number_unsigned_t) override { return value_starts(false, false); }
    bool number_float(number_float_t, const string_t &) override { return value_starts(false, false); }
    bool string(string_t &) override { return value_starts(false, false); }
    bool binary(binary_t &) override { return value_starts(false, false); }
    bool start_object(std::size_t) override { return value_starts(true, false); }
    bool start_array(std::size_t) override { return value_starts(true, true); }
    bool end_object() override { return end(); }
    bool end_array() override { return end(); }
    bool key(string_t &name) override {
        container &object = open_.back();
        object.key = name;
        if (!object.keys.insert(object.key).second) stop("duplicate key " + json(name).dump());
        return true;
    }
    bool parse_error(std::size_t position, const std::string &, const nlohmann::detail::exception &e) override {
        syntax_failed = true;
        syntax_byte = position;
        syntax_error = e.what();
        return false;
    }

    /* Line of the last byte read (offsets only grow: count on from the last call). */
    int line() {
        for (; counted_ < last_read; ++counted_) line_ += *counted_ == '\n';
        return line_;
    }

  private:
    struct container {
        std::string path; /* empty below LINE_DEPTH */
        bool is_array;
        size_t count = 0; /* values so far: an array's next index */
        std::string key;  /* objects: the key of the next value */
        std::set<std::string> keys;
    };

    /* A value starts: a scalar, or an object or array opening. */
    bool value_starts(bool opens, bool is_array) {
        std::string path;
        if (!open_.empty()) {
            container &parent = open_.back();
            size_t index = parent.count++;
            if (open_.size() <= LINE_DEPTH)
                path = (parent.is_array ? pointer(parent.path) / index : pointer(parent.path) / parent.key).to_string();
        }
        if (open_.size() <= LINE_DEPTH) lines.emplace(path, line());
        if (opens) {
            if (open_.size() == MAX_DEPTH) stop("nested too deeply");
            open_.push_back({std::move(path), is_array, 0, {}, {}});
        }
        return true;
    }

    bool end() {
        open_.pop_back();
        return true;
    }

    [[noreturn]] void stop(std::string reason) {
        error = std::move(reason);
        error_line = line();
        throw parse_stopped{};
    }

    const char *counted_;
    int line_ = 1;
    std::vector<container> open_;
};

std::string as_json(const std::string &s) { return json(s).dump(); }

/* How a refused value reads in a message: scalars as written, containers by kind. */
std::string describe(const json &value) {
    if (value.is_object()) return "an object";
    if (value.is_array()) return "an array";
    return value.dump();
}

/* Checks the document and fills a cluster; on the first problem keeps its line and reason. */
class cluster_checker {
  public:
    std::string error;
    int error_line = 1;

    explicit cluster_checker(const std::unordered_map<std::string, int> &lines) : lines_(lines) {}

    bool check(const json &root, cluster &out) {
        const pointer top;
        if (!root.is_object()) return fail(top, "the top level must be an object, not " + describe(root));
        for (const auto &[key, value] : root.items())
            if (key != "nodes" && key != "kernels")
                return fail(top / key, "unknown key " + as_json(key) + " at the top level");
        for (const char *list : {"nodes", "kernels"}) {
            const json *value = require(root, top, "", list);
            if (!value) return false;
            if (!value->is_array())
                return fail(top / list, as_json(list) + " must be an array, not " + describe(*value));
        }
        /* Nodes first: kernels refer to them. */
        for (size_t i = 0; i < root["nodes"].size(); ++i)
            if (!check_node(root["nodes"][i], pointer("/nodes") / i, out)) return false;
        for (size_t i = 0; i < root["kernels"].size(); ++i)
            if (!check_kernel(root["kernels"][i], pointer("/kernels") / i, out)) return false;
        return true;
    }

  private:
    int line_of(const pointer &where) const {
        auto it = lines_.find(where.to_string());
        return it == lines_.end() ? 1 : it->second;
    }

    bool fail(const pointer &where, std::string reason) {
        error_line = line_of(where);
        error = std::move(reason);
        return false;
    }

    /* entry[key], or nullptr once the error is set.  who names the entry ("" at the top). */
    const json *require(const json &entry, const pointer &at, const std::string &who, const char *key) {
        auto it = entry.find(key);
        if (it != entry.end()) return &*it;
        fail(at, who + (who.empty() ? "" : ": ") + "missing \"" + key + "\"");
        return nullptr;
    }

    static bool is_index(const json &value) /* non-negative integers parse as unsigned */
    {
        return value.is_number_unsigned() && value.get<uint64_t>() <= MAX_INDEX;
    }

    /* What nodes and kernels share: an object numbered 0..255 by number_key, each number once,
     * no unknown key.  Sets who to "node N" / "kernel N"; until the number is known the entry
     * is "nodes[i]" / "kernels[i]", from its pointer "/nodes/i". */
    bool check_entry(const json &entry, const pointer &at, const char *kind, const char *number_key,
                     const char *number_name, std::initializer_list<std::string_view> known, std::map<int, int> &seen,
                     std::string &who, int &number) {
        who = at.parent_pointer().back() + "[" + at.back() + "]";
        if (!entry.is_object()) return fail(at, who + " must be an object, not " + describe(entry));
        const json *value = require(entry, at, who, number_key);
        if (!value) return false;
        if (!value->is_number_integer())
            return fail(at / number_key,
                        who + ": " + as_json(number_key) + " must be an integer, not " + describe(*value));
        if (!is_index(*value))
            return fail(
                at / number_key,
                who + ": " + number_name + " " + value->dump() + " is out of range 0.." + std::to_string(MAX_INDEX));
        number = value->get<int>();
        who = std::string(kind) + " " + std::to_string(number);
        if (auto [first, fresh] = seen.emplace(number, line_of(at)); !fresh)
            return fail(at, who + ": defined twice (first at line " + std::to_string(first->second) + ")");
        for (const auto &[key, ignored] : entry.items())
            if (std::find(known.begin(), known.end(), key) == known.end())
                return fail(at / key, who + ": unknown key " + as_json(key));
        return true;
    }

    bool check_node(const json &entry, const pointer &at, cluster &out) {
        std::string who;
        cluster_node node{0, false, {}, 0, line_of(at)};
        if (!check_entry(entry, at, "node", "node", "node index", {"node", "type", "address"}, node_lines_, who,
                         node.index))
            return false;
        const json *type = require(entry, at, who, "type");
        if (!type) return false;
        if (*type != "sw" && *type != "hw")
            return fail(at / "type", who + ": \"type\" must be \"sw\" or \"hw\", not " + describe(*type));
        node.hardware = *type == "hw";
        const json *address = require(entry, at, who, "address");
        if (!address) return false;
        if (!address->is_string())
            return fail(at / "address", who + ": \"address\" must be a string, not " + describe(*address));
        if (!parse_address(address->get<std::string>(), at / "address", who, node)) return false;
        out.nodes.push_back(std::move(node));
        return true;
    }

    /* "IPv4[:port]" into node.host and node.port; a hardware node needs a port. */
    bool parse_address(const std::string &address, const pointer &at, const std::string &who, cluster_node &node) {
        std::string prefix = who + ": address " + as_json(address);
        size_t colon = address.rfind(':');
        std::string host = address.substr(0, colon);
        std::string port = colon == std::string::npos ? "0" : address.substr(colon + 1);
        in_addr ignored;
        /* A NUL (\u0000 in JSON) would end the C string early and hide what follows. */
        bool valid = host.find('\0') == std::string::npos && inet_pton(AF_INET, host.c_str(), &ignored) == 1 &&
            !port.empty() && port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos;
        if (!valid) return fail(at, prefix + " is not \"IPv4:port\"");
        unsigned long number = std::stoul(port);
        if (number > 65535) return fail(at, prefix + ": port " + port + " is out of range 1..65535");
        if (number == 0 && node.hardware) return fail(at, prefix + ": a hardware node needs a port");
        node.host = std::move(host);
        node.port = static_cast<uint16_t>(number);
        return true;
    }

    bool check_kernel(const json &entry, const pointer &at, cluster &out) {
        std::string who;
        cluster_kernel kernel{0, 0, {}, line_of(at)};
        if (!check_entry(entry, at, "kernel", "id", "kernel id", {"id", "node", "function"}, kernel_lines_, who,
                         kernel.id))
            return false;
        const json *node = require(entry, at, who, "node");
        if (!node) return false;
        if (!node->is_number_integer())
            return fail(at / "node", who + ": \"node\" must be an integer, not " + describe(*node));
        if (!is_index(*node) || !node_lines_.contains(node->get<int>()))
            return fail(at / "node", who + ": node " + node->dump() + " is not defined");
        kernel.node = node->get<int>();
        if (auto function = entry.find("function"); function != entry.end()) {
            if (!function->is_string())
                return fail(at / "function", who + ": \"function\" must be a string, not " + describe(*function));
            kernel.function = function->get<std::string>();
        }
        out.kernels.push_back(std::move(kernel));
        return true;
    }

    const std::unordered_map<std::string, int> &lines_;
    std::map<int, int> node_lines_, kernel_lines_; /* number -> line of its first entry */
};

}  // namespace

const cluster_node *cluster::node(int index) const {
    auto it = std::find_if(nodes.begin(), nodes.end(), [&](const cluster_node &n) { return n.index == index; });
    return it == nodes.end() ? nullptr : &*it;
}

const cluster_kernel *cluster::kernel(int id) const {
    auto it = std::find_if(kernels.begin(), kernels.end(), [&](const cluster_kernel &k) { return k.id == id; });
    return it == kernels.end() ? nullptr : &*it;
}

int cluster::software_rank(int node_index) const {
    int rank = 0;
    for (const cluster_node &n : nodes) {
        if (n.index == node_index) return n.hardware ? -1 : rank;
        rank += !n.hardware;
    }
    return -1;
}

bool cluster_parse(std::string_view text, const std::string &name, cluster &out, std::string &why) {
    auto refuse = [&](int line, const std::string &reason) {
        why = name + ":" + std::to_string(line) + ": " + reason;
        return false;
    };
    /* nlohmann's reason, less "[json.exception.parse_error.101] parse error at line L, column C: " */
    auto reason_of = [](const std::string &what) {
        std::string reason = what;
        reason.erase(0, reason.find("] ") + 2);
        if (reason.starts_with("parse error")) reason.erase(0, reason.find(": ") + 2);
        return reason;
    };
    auto line_at = [&](size_t offset) {
        return 1 + static_cast<int>(std::count(text.begin(), text.begin() + offset, '\n'));
    };
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return refuse(1, "the file is empty");
    /* nlohmann takes a NUL for the end of the input and would ignore whatever follows. */
    if (size_t nul = text.find('\0'); nul != std::string_view::npos)
        return refuse(line_at(nul), "NUL byte in the file");
    line_recorder recorder(text.data());
    try {
        tracking_iterator begin{text.data(), &recorder.last_read};
        tracking_iterator end{text.data() + text.size(), &recorder.last_read};
        if (!json::sax_parse(begin, end, &recorder)) {
            /* syntax_byte counts the offending byte.  At the end of the input blame the last
             * byte: a final '\n' does not start a line of its own. */
            size_t offending = std::min<size_t>(recorder.syntax_byte ? recorder.syntax_byte - 1 : 0, text.size() - 1);
            return refuse(line_at(offending), reason_of(recorder.syntax_error));
        }
        json root = json::parse(text.begin(), text.end());
        cluster result;
        cluster_checker checker(recorder.lines);
        if (!checker.check(root, result)) return refuse(checker.error_line, checker.error);
        out = std::move(result);
        return true;
    } catch (const parse_stopped &) {
        return refuse(recorder.error_line, recorder.error);
    } catch (const json::exception &e) { /* the second pass refuses nothing the first took */
        return refuse(recorder.line(), reason_of(e.what()));
    } catch (const std::exception &e) { /* out of memory: refuse, never throw */
        why = name + ": " + e.what();
        return false;
    }
}

bool cluster_load(const char *path, cluster &out, std::string &why) {
    if (!path) {
        why = "no cluster file given";
        return false;
    }
    /* O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below). */
    int fd = ::open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        why = std::string(path) + ": " + std::strerror(errno);
        return false;
    }
    std::unique_ptr<int, void (*)(int *)> closer(&fd, [](int *f) { ::close(*f); });
    struct stat st;
    if (::fstat(fd, &st) != 0) {
        why = std::string(path) + ": " + std::strerror(errno);
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        why = std::string(path) +
            ": not a regular file (a cluster file is a JSON file; devices, FIFOs and "
            "directories are refused)";
        return false;
    }
    if (static_cast<uint64_t>(st.st_size) > CLUSTER_FILE_MAX) {
        why = std::string(path) + ": " + std::to_string(st.st_size) + " bytes, more than a cluster file's limit of " +
            std::to_string(CLUSTER_FILE_MAX) + " bytes";
        return false;
    }
    try {
        /* Never more than the limit, even if the file grows while it is read. */
        std::string text(static_cast<size_t>(st.st_size), '\0');
        size_t got = 0;
        while (got < text.size()) {
            ssize_t n = ::pread(fd, text.data() + got, text.size() - got, static_cast<off_t>(got));
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                why = std::string(path) + ": " + std::strerror(errno);
                return false;
            }
            if (n == 0) break; /* shrank meanwhile */
            got += static_cast<size_t>(n);
        }
        text.resize(got);
        return cluster_parse(text, path, out, why);
    } catch (const std::exception &e) { /* out of memory */
        why = std::string(path) + ": " + e.what();
        return false;
    }
}

}  // namespace gal
