// Weft C++ layer for groups and communicators made from them (weft_group.h), in weft.hpp's style:
// failing calls throw weft::error; handles stay reachable (handle()).
#pragma once

#include <array>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "weft.hpp"
#include "weft_group.h"

namespace weft {

// ---- Groups ----

// An owned group, freed by the destructor (WEFT_GROUP_EMPTY, predefined, is never freed).
class Group {
  public:
    Group() noexcept = default;
    explicit Group(weft_group adopt) noexcept : h_(adopt) {}
    ~Group() { reset(); }
    Group(const Group &) = delete;
    Group &operator=(const Group &) = delete;
    Group(Group &&o) noexcept : h_(std::exchange(o.h_, WEFT_GROUP_NULL)) {}
    Group &operator=(Group &&o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, WEFT_GROUP_NULL);
        }
        return *this;
    }

    static Group of(Comm c) {
        weft_group g = WEFT_GROUP_NULL;
        check(weft_comm_group(c.handle(), &g));
        return Group(g);
    }
    static Group empty() noexcept { return Group(WEFT_GROUP_EMPTY); }

    int size() const {
        int s = 0;
        check(weft_group_size(h_, &s));
        return s;
    }
    // The calling process's rank, or (int)WEFT_UNDEFINED (-1) when it is not a member.
    int rank() const {
        int r = -1;
        check(weft_group_rank(h_, &r));
        return r;
    }
    bool contains_me() const { return rank() != static_cast<int>(WEFT_UNDEFINED); }

    Group incl(std::span<const int> ranks) const {
        weft_group g = WEFT_GROUP_NULL;
        check(weft_group_incl(h_, ranks.size(), ranks.data(), &g));
        return Group(g);
    }
    Group excl(std::span<const int> ranks) const {
        weft_group g = WEFT_GROUP_NULL;
        check(weft_group_excl(h_, ranks.size(), ranks.data(), &g));
        return Group(g);
    }
    // Triplets (first, last, stride).
    Group range_incl(std::span<const std::array<int, 3>> ranges) const {
        weft_group g = WEFT_GROUP_NULL;
        check(weft_group_range_incl(h_, ranges.size(), triplets(ranges), &g));
        return Group(g);
    }
    Group range_excl(std::span<const std::array<int, 3>> ranges) const {
        weft_group g = WEFT_GROUP_NULL;
        check(weft_group_range_excl(h_, ranges.size(), triplets(ranges), &g));
        return Group(g);
    }
    friend Group set_union(const Group &a, const Group &b) {
        weft_group g = WEFT_GROUP_NULL;
        check(weft_group_union(a.h_, b.h_, &g));
        return Group(g);
    }
    friend Group set_intersection(const Group &a, const Group &b) {
        weft_group g = WEFT_GROUP_NULL;
        check(weft_group_intersection(a.h_, b.h_, &g));
        return Group(g);
    }
    friend Group set_difference(const Group &a, const Group &b) {
        weft_group g = WEFT_GROUP_NULL;
        check(weft_group_difference(a.h_, b.h_, &g));
        return Group(g);
    }
    // The ranks in `to` of the processes at `ranks` here (WEFT_UNDEFINED as int: not in `to`).
    std::vector<int> translate(std::span<const int> ranks, const Group &to) const {
        std::vector<int> out(ranks.size());
        check(weft_group_translate_ranks(h_, ranks.size(), ranks.data(), to.h_, out.data()));
        return out;
    }
    // WEFT_IDENT, WEFT_SIMILAR or WEFT_UNEQUAL.
    int compare(const Group &o) const {
        int r = WEFT_UNEQUAL;
        check(weft_group_compare(h_, o.h_, &r));
        return r;
    }

    weft_group handle() const noexcept { return h_; }
    operator weft_group() const noexcept { return h_; }
    weft_group release() noexcept { return std::exchange(h_, WEFT_GROUP_NULL); }

  private:
    // The C API takes int[][3], as MPI does; the triplets are only read.
    static int (*triplets(std::span<const std::array<int, 3>> ranges))[3] {
        static_assert(sizeof(std::array<int, 3>) == 3 * sizeof(int));
        return reinterpret_cast<int(*)[3]>(const_cast<std::array<int, 3> *>(ranges.data()));
    }
    void reset() noexcept {
        if (h_ != WEFT_GROUP_NULL && h_ != WEFT_GROUP_EMPTY) weft_group_free(&h_);
        h_ = WEFT_GROUP_NULL;
    }
    weft_group h_ = WEFT_GROUP_NULL;
};

// ---- Communicators from groups ----

// Collective over parent; an empty UniqueComm where this process is not in group.
inline UniqueComm create(Comm parent, const Group &group) {
    weft_comm c = WEFT_COMM_NULL;
    check(weft_comm_create(parent.handle(), group.handle(), &c));
    return UniqueComm(c);
}
// Collective over group's members only.
inline UniqueComm create_group(Comm parent, const Group &group, int tag) {
    weft_comm c = WEFT_COMM_NULL;
    check(weft_comm_create_group(parent.handle(), group.handle(), tag, &c));
    return UniqueComm(c);
}
// WEFT_IDENT, WEFT_CONGRUENT, WEFT_SIMILAR or WEFT_UNEQUAL.
inline int compare(Comm a, Comm b) {
    int r = WEFT_UNEQUAL;
    check(weft_comm_compare(a.handle(), b.handle(), &r));
    return r;
}
inline void set_name(Comm c, const std::string &name) { check(weft_comm_set_name(c.handle(), name.c_str())); }
inline std::string get_name(Comm c) {
    char buf[WEFT_MAX_OBJECT_NAME] = {};
    size_t len = 0;
    check(weft_comm_get_name(c.handle(), buf, &len));
    return std::string(buf, len);
}

// A nonblocking dup: the communicator is usable once request has completed.
struct IdupResult {
    UniqueComm comm;
    Request request;
};
inline IdupResult idup(Comm parent) {
    weft_comm c = WEFT_COMM_NULL;
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_comm_idup(parent.handle(), &c, &r));
    return IdupResult{UniqueComm(c), Request(r)};
}

}  // namespace weft
