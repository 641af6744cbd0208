// A reference model of MPI datatypes for tests: a type tree, built through Weft's constructors
// and, independently, expanded element by element into its typemap (every basic element's
// offset and length, in typemap order), from which packing, bounds and element counts follow
// by MPI's definitions.  Shared by the datatype unit test, its fuzz target and the
// multi-process datatype tests; it uses no part of Weft's datatype engine.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace dtref {

struct entry {
    ptrdiff_t offset;
    size_t len;
    int kind;  // the built-in it belongs to (index into builtins()): a pair's two entries share it
};

struct builtin_info {
    weft_datatype handle;
    size_t extent;
    // (offset, len, kind) of its basic elements
    std::vector<entry> parts;
};

template <class T>
struct pair_of {
    T v;
    int i;
};

inline const std::vector<builtin_info> &builtins() {
    static const std::vector<builtin_info> b = {
        {WEFT_BYTE, 1, {{0, 1, 0}}},
        {WEFT_INT, sizeof(int), {{0, sizeof(int), 1}}},
        {WEFT_DOUBLE, sizeof(double), {{0, sizeof(double), 2}}},
        {WEFT_SHORT, sizeof(short), {{0, sizeof(short), 3}}},
        {WEFT_CHAR, 1, {{0, 1, 4}}},
        {WEFT_DOUBLE_INT,
         sizeof(pair_of<double>),
         {{0, sizeof(double), 5}, {static_cast<ptrdiff_t>(offsetof(pair_of<double>, i)), sizeof(int), 5}}},
        {WEFT_SHORT_INT,
         sizeof(pair_of<short>),
         {{0, sizeof(short), 6}, {static_cast<ptrdiff_t>(offsetof(pair_of<short>, i)), sizeof(int), 6}}},
        {WEFT_2INT, sizeof(pair_of<int>), {{0, sizeof(int), 7}, {sizeof(int), sizeof(int), 7}}},
    };
    return b;
}

enum class kind {
    builtin,
    contiguous,
    vector,
    hvector,
    indexed,
    hindexed,
    indexed_block,
    structure,
    resized,
    subarray,
    dup
};

struct node {
    kind k = kind::builtin;
    int builtin = 0;
    size_t count = 0, blocklen = 0;
    ptrdiff_t stride = 0;
    std::vector<size_t> blocklens;
    std::vector<ptrdiff_t> displs;
    std::vector<std::shared_ptr<node>> children;  // one, or one per block for struct
    ptrdiff_t lb = 0, extent = 0;                 // resized
    std::vector<size_t> sizes, subsizes, starts;  // subarray
    int order = WEFT_ORDER_C;
};
using node_ptr = std::shared_ptr<node>;

// The typemap of one element and its bounds, by the definitions.
struct layout {
    std::vector<entry> map;
    ptrdiff_t lb = 0, ub = 0;
    bool bounded = false;  // has any element (else lb = ub = 0)
};

inline void place(layout &out, const layout &child, ptrdiff_t at) {
    for (const entry &e : child.map) out.map.push_back({e.offset + at, e.len, e.kind});
    if (!child.bounded) return;
    if (!out.bounded) {
        out.lb = child.lb + at;
        out.ub = child.ub + at;
        out.bounded = true;
    } else {
        out.lb = std::min(out.lb, child.lb + at);
        out.ub = std::max(out.ub, child.ub + at);
    }
}

inline layout expand(const node &n) {
    layout out;
    auto one = [](const node_ptr &c) { return expand(*c); };
    switch (n.k) {
        case kind::builtin: {
            const builtin_info &b = builtins()[static_cast<size_t>(n.builtin)];
            out.map = b.parts;
            out.lb = 0;
            out.ub = static_cast<ptrdiff_t>(b.extent);
            out.bounded = true;
            break;
        }
        case kind::dup: out = one(n.children[0]); break;
        case kind::contiguous: {
            layout c = one(n.children[0]);
            ptrdiff_t ext = c.ub - c.lb;
            for (size_t i = 0; i < n.count; ++i) place(out, c, static_cast<ptrdiff_t>(i) * ext);
            break;
        }
        case kind::vector:
        case kind::hvector: {
            layout c = one(n.children[0]);
            ptrdiff_t ext = c.ub - c.lb, stride = n.k == kind::vector ? n.stride * ext : n.stride;
            for (size_t b = 0; b < n.count; ++b)
                for (size_t j = 0; j < n.blocklen; ++j)
                    place(out, c, static_cast<ptrdiff_t>(b) * stride + static_cast<ptrdiff_t>(j) * ext);
            break;
        }
        case kind::indexed:
        case kind::hindexed:
        case kind::indexed_block: {
            layout c = one(n.children[0]);
            ptrdiff_t ext = c.ub - c.lb;
            for (size_t b = 0; b < n.displs.size(); ++b) {
                size_t bl = n.k == kind::indexed_block ? n.blocklen : n.blocklens[b];
                ptrdiff_t d = n.k == kind::hindexed ? n.displs[b] : n.displs[b] * ext;
                for (size_t j = 0; j < bl; ++j) place(out, c, d + static_cast<ptrdiff_t>(j) * ext);
            }
            break;
        }
        case kind::structure:
            for (size_t b = 0; b < n.children.size(); ++b) {
                layout c = one(n.children[b]);
                ptrdiff_t ext = c.ub - c.lb;
                for (size_t j = 0; j < n.blocklens[b]; ++j)
                    place(out, c, n.displs[b] + static_cast<ptrdiff_t>(j) * ext);
            }
            break;
        case kind::resized:
            out = one(n.children[0]);
            out.lb = n.lb;
            out.ub = n.lb + n.extent;
            out.bounded = true;
            break;
        case kind::subarray: {
            layout c = one(n.children[0]);
            ptrdiff_t ext = c.ub - c.lb;
            size_t nd = n.sizes.size();
            // Enumerate the subarray's indices, fastest-varying last (C) or first (Fortran).
            std::vector<size_t> idx(nd, 0);
            bool empty = false;
            for (size_t s : n.subsizes) empty = empty || s == 0;
            while (!empty) {
                ptrdiff_t off = 0, mult = 1;
                for (size_t k = 0; k < nd; ++k) {
                    size_t d = n.order == WEFT_ORDER_C ? nd - 1 - k : k;
                    off += static_cast<ptrdiff_t>(n.starts[d] + idx[d]) * mult;
                    mult *= static_cast<ptrdiff_t>(n.sizes[d]);
                }
                place(out, c, off * ext);
                size_t k = 0;
                for (; k < nd; ++k) {
                    size_t d = n.order == WEFT_ORDER_C ? nd - 1 - k : k;
                    if (++idx[d] < n.subsizes[d]) break;
                    idx[d] = 0;
                }
                if (k == nd) break;
            }
            ptrdiff_t total = ext;
            for (size_t s : n.sizes) total *= static_cast<ptrdiff_t>(s);
            out.lb = 0;
            out.ub = total;
            out.bounded = true;
            break;
        }
    }
    if (!out.bounded) out.lb = out.ub = 0;
    return out;
}

// Builds the tree with Weft's constructors (intermediate handles freed at once: the new type
// must hold what it needs).  WEFT_DATATYPE_NULL when a constructor failed.
inline weft_datatype build(const node &n) {
    if (n.k == kind::builtin) return builtins()[static_cast<size_t>(n.builtin)].handle;
    std::vector<weft_datatype> kids;
    for (const node_ptr &c : n.children) {
        kids.push_back(build(*c));
        if (kids.back() == WEFT_DATATYPE_NULL) return WEFT_DATATYPE_NULL;
    }
    weft_datatype t = WEFT_DATATYPE_NULL;
    int rc = WEFT_ERR_INTERNAL;
    switch (n.k) {
        case kind::builtin: break;
        case kind::dup: rc = weft_type_dup(kids[0], &t); break;
        case kind::contiguous: rc = weft_type_contiguous(n.count, kids[0], &t); break;
        case kind::vector: rc = weft_type_vector(n.count, n.blocklen, n.stride, kids[0], &t); break;
        case kind::hvector: rc = weft_type_create_hvector(n.count, n.blocklen, n.stride, kids[0], &t); break;
        case kind::indexed:
            rc = weft_type_indexed(n.displs.size(), n.blocklens.data(), n.displs.data(), kids[0], &t);
            break;
        case kind::hindexed:
            rc = weft_type_create_hindexed(n.displs.size(), n.blocklens.data(), n.displs.data(), kids[0], &t);
            break;
        case kind::indexed_block:
            rc = weft_type_create_indexed_block(n.displs.size(), n.blocklen, n.displs.data(), kids[0], &t);
            break;
        case kind::structure:
            rc = weft_type_create_struct(kids.size(), n.blocklens.data(), n.displs.data(), kids.data(), &t);
            break;
        case kind::resized: rc = weft_type_create_resized(kids[0], n.lb, n.extent, &t); break;
        case kind::subarray:
            rc = weft_type_create_subarray(n.sizes.size(), n.sizes.data(), n.subsizes.data(), n.starts.data(), n.order,
                                           kids[0], &t);
            break;
    }
    for (size_t i = 0; i < kids.size(); ++i)
        if (n.children[i]->k != kind::builtin) weft_type_free(&kids[i]);
    return rc == WEFT_SUCCESS ? t : WEFT_DATATYPE_NULL;
}

inline std::string describe(const node &n) {
    static const char *names[] = {"builtin",       "contiguous", "vector",  "hvector",  "indexed", "hindexed",
                                  "indexed_block", "struct",     "resized", "subarray", "dup"};
    std::string s = names[static_cast<int>(n.k)];
    if (n.k == kind::builtin) return s + "#" + std::to_string(n.builtin);
    s += "(c" + std::to_string(n.count) + " b" + std::to_string(n.blocklen) + " s" + std::to_string(n.stride);
    for (size_t i = 0; i < n.displs.size(); ++i)
        s += " [" + (i < n.blocklens.size() ? std::to_string(n.blocklens[i]) : std::string()) + "@" +
            std::to_string(n.displs[i]) + "]";
    if (n.k == kind::resized) s += " lb" + std::to_string(n.lb) + " ext" + std::to_string(n.extent);
    for (size_t i = 0; i < n.sizes.size(); ++i)
        s += " " + std::to_string(n.sizes[i]) + "/" + std::to_string(n.subsizes[i]) + "@" + std::to_string(n.starts[i]);
    for (const node_ptr &c : n.children) s += " " + describe(*c);
    return s + ")";
}

// A source of choices: a seeded generator (tests) or the fuzzer's bytes.
struct chooser {
    virtual ~chooser() = default;
    virtual uint32_t next() = 0;
    // In [lo, hi].
    long pick(long lo, long hi) { return lo + static_cast<long>(next() % static_cast<uint32_t>(hi - lo + 1)); }
};

struct rng_chooser : chooser {
    std::mt19937 g;
    explicit rng_chooser(uint32_t seed) : g(seed) {}
    uint32_t next() override { return g(); }
};

// A random tree of at most `depth` levels; keeps the typemap small (budget: basic elements).
inline node_ptr random_tree(chooser &c, int depth) {
    auto n = std::make_shared<node>();
    if (depth == 0 || c.pick(0, 3) == 0) {
        n->k = kind::builtin;
        n->builtin = static_cast<int>(c.pick(0, static_cast<long>(builtins().size()) - 1));
        return n;
    }
    n->k = static_cast<kind>(c.pick(1, 10));
    auto child = [&] { return random_tree(c, depth - 1); };
    switch (n->k) {
        case kind::builtin: break;
        case kind::dup: n->children = {child()}; break;
        case kind::contiguous:
            n->count = static_cast<size_t>(c.pick(0, 4));
            n->children = {child()};
            break;
        case kind::vector:
        case kind::hvector:
            n->count = static_cast<size_t>(c.pick(0, 4));
            n->blocklen = static_cast<size_t>(c.pick(0, 3));
            n->stride = n->k == kind::vector ? c.pick(-5, 5) : c.pick(-64, 64);
            n->children = {child()};
            break;
        case kind::indexed:
        case kind::hindexed:
        case kind::indexed_block: {
            size_t blocks = static_cast<size_t>(c.pick(0, 4));
            n->blocklen = static_cast<size_t>(c.pick(0, 3));
            for (size_t i = 0; i < blocks; ++i) {
                n->blocklens.push_back(static_cast<size_t>(c.pick(0, 3)));
                n->displs.push_back(n->k == kind::hindexed ? c.pick(-64, 64) : c.pick(-6, 6));
            }
            n->children = {child()};
            break;
        }
        case kind::structure: {
            size_t blocks = static_cast<size_t>(c.pick(0, 3));
            for (size_t i = 0; i < blocks; ++i) {
                n->blocklens.push_back(static_cast<size_t>(c.pick(0, 3)));
                n->displs.push_back(c.pick(-48, 48));
                n->children.push_back(child());
            }
            break;
        }
        case kind::resized:
            n->lb = c.pick(-16, 16);
            n->extent = c.pick(0, 48);
            n->children = {child()};
            break;
        case kind::subarray: {
            size_t nd = static_cast<size_t>(c.pick(1, 3));
            for (size_t i = 0; i < nd; ++i) {
                size_t size = static_cast<size_t>(c.pick(1, 4));
                size_t sub = static_cast<size_t>(c.pick(0, static_cast<long>(size)));
                n->sizes.push_back(size);
                n->subsizes.push_back(sub);
                n->starts.push_back(static_cast<size_t>(c.pick(0, static_cast<long>(size - sub))));
            }
            n->order = c.pick(0, 1) ? WEFT_ORDER_C : WEFT_ORDER_FORTRAN;
            n->children = {child()};
            break;
        }
    }
    return n;
}

// Basic elements of one element of the tree (without expanding it), saturating at 1 << 30.
inline size_t elements(const node &n) {
    auto sat = [](size_t a, size_t b) {
        size_t r;
        return __builtin_mul_overflow(a, b, &r) || r > (size_t{1} << 30) ? size_t{1} << 30 : r;
    };
    auto sum = [](size_t a, size_t b) { return std::min(a + b, size_t{1} << 30); };
    switch (n.k) {
        case kind::builtin: return builtins()[static_cast<size_t>(n.builtin)].parts.size();
        case kind::dup:
        case kind::resized: return elements(*n.children[0]);
        case kind::contiguous: return sat(n.count, elements(*n.children[0]));
        case kind::vector:
        case kind::hvector: return sat(sat(n.count, n.blocklen), elements(*n.children[0]));
        case kind::indexed_block: return sat(sat(n.displs.size(), n.blocklen), elements(*n.children[0]));
        case kind::indexed:
        case kind::hindexed: {
            size_t t = 0;
            for (size_t b : n.blocklens) t = sum(t, b);
            return sat(t, elements(*n.children[0]));
        }
        case kind::structure: {
            size_t t = 0;
            for (size_t i = 0; i < n.children.size(); ++i) t = sum(t, sat(n.blocklens[i], elements(*n.children[i])));
            return t;
        }
        case kind::subarray: {
            size_t t = 1;
            for (size_t s : n.subsizes) t = sat(t, s);
            return sat(t, elements(*n.children[0]));
        }
    }
    return 0;
}

// The bytes of count elements at origin, packed by the typemap.
inline std::vector<unsigned char> pack(const layout &l, const unsigned char *origin, size_t count) {
    std::vector<unsigned char> out;
    ptrdiff_t ext = l.ub - l.lb;
    for (size_t i = 0; i < count; ++i)
        for (const entry &e : l.map) {
            const unsigned char *p = origin + static_cast<ptrdiff_t>(i) * ext + e.offset;
            out.insert(out.end(), p, p + e.len);
        }
    return out;
}

// Writes the first `bytes` bytes of packed into count elements at origin.
inline void unpack(const layout &l, const unsigned char *packed, size_t bytes, unsigned char *origin, size_t count) {
    ptrdiff_t ext = l.ub - l.lb;
    for (size_t i = 0; i < count; ++i)
        for (const entry &e : l.map) {
            size_t n = std::min(bytes, e.len);
            std::memcpy(origin + static_cast<ptrdiff_t>(i) * ext + e.offset, packed, n);
            packed += n;
            bytes -= n;
            if (bytes == 0) return;
        }
}

// The bytes [lo, hi) relative to the origin that count elements touch (true bounds).
inline void span(const layout &l, size_t count, ptrdiff_t &lo, ptrdiff_t &hi) {
    lo = 0;
    hi = 0;
    bool any = false;
    ptrdiff_t ext = l.ub - l.lb;
    for (size_t i = 0; i < count; ++i)
        for (const entry &e : l.map) {
            ptrdiff_t a = static_cast<ptrdiff_t>(i) * ext + e.offset, b = a + static_cast<ptrdiff_t>(e.len);
            lo = any ? std::min(lo, a) : a;
            hi = any ? std::max(hi, b) : b;
            any = true;
        }
}

}  // namespace dtref
