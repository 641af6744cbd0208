// weft.hpp without a running fabric: errors, Info, Datatype, type traits.
#include <gtest/gtest.h>

#include <concepts>
#include <cstdint>
#include <span>
#include <string>

#include "weft/weft.hpp"

// ---- Traits (compile-time) ----
static_assert(weft::datatype_of_v<int> == WEFT_INT);
static_assert(weft::datatype_of_v<const double> == WEFT_DOUBLE);
static_assert(weft::datatype_of_v<char> == WEFT_CHAR);
static_assert(weft::datatype_of_v<signed char> == WEFT_SIGNED_CHAR);
static_assert(weft::datatype_of_v<unsigned char> == WEFT_UNSIGNED_CHAR);
static_assert(weft::datatype_of_v<std::byte> == WEFT_BYTE);
static_assert(weft::datatype_of_v<bool> == WEFT_C_BOOL);
static_assert(weft::datatype_of_v<long double> == WEFT_LONG_DOUBLE);
static_assert(weft::datatype_of_v<unsigned long long> == WEFT_UNSIGNED_LONG_LONG);
static_assert(weft::builtin_type<float>);
static_assert(weft::builtin_type<volatile short>);
static_assert(!weft::builtin_type<int *>);
static_assert(!weft::builtin_type<std::string>);
static_assert(!weft::builtin_type<void>);
static_assert(!std::is_copy_constructible_v<weft::Info>);
static_assert(std::is_nothrow_move_constructible_v<weft::Info>);
static_assert(!std::is_copy_constructible_v<weft::Request>);
static_assert(!std::is_copy_constructible_v<weft::Datatype>);

// ---- Reduction operations and collectives (compile-time only: this file links no engine) ----
static_assert(!std::is_copy_constructible_v<weft::Op>);
static_assert(!std::is_copy_assignable_v<weft::Op>);
static_assert(std::is_nothrow_move_constructible_v<weft::Op>);
static_assert(std::is_nothrow_move_assignable_v<weft::Op>);
static_assert(std::is_convertible_v<const weft::Op &, weft_op>);
static_assert(weft::ops::sum == WEFT_SUM && weft::ops::band == WEFT_BAND && weft::ops::maxloc == WEFT_MAXLOC);
static_assert(weft::datatype_of_v<weft::value_index<float>> == WEFT_FLOAT_INT);
static_assert(weft::datatype_of_v<weft::value_index<double>> == WEFT_DOUBLE_INT);
static_assert(weft::datatype_of_v<weft::value_index<long>> == WEFT_LONG_INT);
static_assert(weft::datatype_of_v<const weft::value_index<int>> == WEFT_2INT);
static_assert(weft::datatype_of_v<weft::value_index<short>> == WEFT_SHORT_INT);
static_assert(!weft::builtin_type<weft::value_index<char>>);

namespace {
// Which typed collective overloads accept which spans.
template <class In, class Out>
concept can_allreduce = requires(weft::Comm c, std::span<In> in, std::span<Out> out) {
    c.allreduce(in, out, WEFT_SUM);
};
template <class T>
concept can_allreduce_in_place = requires(weft::Comm c, std::span<T> inout) {
    c.allreduce(inout, WEFT_SUM);
};
template <class T>
concept can_bcast = requires(weft::Comm c, std::span<T> buf) {
    c.bcast(buf, 0);
};
template <class In, class Out>
concept can_gather = requires(weft::Comm c, std::span<In> in, std::span<Out> out) {
    c.gather(in, out, 0);
};
}  // namespace
static_assert(can_allreduce<const double, double>);
static_assert(can_allreduce<double, double>);
static_assert(can_allreduce<const weft::value_index<double>, weft::value_index<double>>);
static_assert(!can_allreduce<const double, float>);         // element types differ
static_assert(!can_allreduce<const double, const double>);  // output must be writable
static_assert(!can_allreduce<const std::string, std::string>);
static_assert(can_allreduce_in_place<int>);
static_assert(!can_allreduce_in_place<const int>);
static_assert(can_bcast<float>);
static_assert(!can_bcast<const float>);
static_assert(can_gather<const long, long>);
static_assert(!can_gather<long, int>);
static_assert(requires(weft::Comm c, std::span<const int> in, std::span<int> out, std::span<int, 4> fixed) {
    c.barrier();
    { c.ibarrier() } -> std::same_as<weft::Request>;
    { c.ibcast(out, 0) } -> std::same_as<weft::Request>;
    { c.iallreduce(in, out, weft::ops::max) } -> std::same_as<weft::Request>;
    { c.iallreduce(fixed, WEFT_MIN) } -> std::same_as<weft::Request>;
    c.reduce(in, out, WEFT_SUM, 0);
    c.scatter(in, out, 0);
    c.allgather(in, out);
    c.alltoall(in, out);
    c.reduce_scatter_block(in, fixed, WEFT_SUM);
    c.scan(in, out, WEFT_SUM);
    c.exscan(in, out, WEFT_PROD);
    c.allreduce(static_cast<const void *>(nullptr), nullptr, 0, WEFT_INT, WEFT_SUM);  // raw form
});

namespace {

size_t builtin_size(weft_datatype t) {
    size_t s = 0;
    EXPECT_EQ(weft_type_size(t, &s), WEFT_SUCCESS);
    return s;
}

}  // namespace

TEST(CxxTraits, SizesAgreeWithTheLibrary) {
    EXPECT_EQ(builtin_size(weft::datatype_of_v<int8_t>), 1u);
    EXPECT_EQ(builtin_size(weft::datatype_of_v<int16_t>), 2u);
    EXPECT_EQ(builtin_size(weft::datatype_of_v<int32_t>), 4u);
    EXPECT_EQ(builtin_size(weft::datatype_of_v<int64_t>), 8u);
    EXPECT_EQ(builtin_size(weft::datatype_of_v<uint64_t>), 8u);
    EXPECT_EQ(builtin_size(weft::datatype_of_v<size_t>), sizeof(size_t));
    EXPECT_EQ(builtin_size(weft::datatype_of_v<float>), sizeof(float));
    EXPECT_EQ(builtin_size(weft::datatype_of_v<long double>), sizeof(long double));
    EXPECT_EQ(builtin_size(weft::datatype_of_v<bool>), sizeof(bool));
}

TEST(CxxTraits, PairLayoutsAgreeWithTheLibrary) {
    auto extent = [](weft_datatype t) {
        ptrdiff_t lb = -1, e = 0;
        EXPECT_EQ(weft_type_get_extent(t, &lb, &e), WEFT_SUCCESS);
        EXPECT_EQ(lb, 0);
        return static_cast<size_t>(e);
    };
    EXPECT_EQ(extent(WEFT_FLOAT_INT), sizeof(weft::value_index<float>));
    EXPECT_EQ(extent(WEFT_DOUBLE_INT), sizeof(weft::value_index<double>));
    EXPECT_EQ(extent(WEFT_LONG_INT), sizeof(weft::value_index<long>));
    EXPECT_EQ(extent(WEFT_2INT), sizeof(weft::value_index<int>));
    EXPECT_EQ(extent(WEFT_SHORT_INT), sizeof(weft::value_index<short>));
    EXPECT_EQ(builtin_size(WEFT_DOUBLE_INT), sizeof(double) + sizeof(int));
}

TEST(CxxError, CheckThrowsWithCodeAndDetail) {
    EXPECT_NO_THROW(weft::check(WEFT_SUCCESS));
    weft::Info info;
    try {
        info.set("", "x");
        FAIL() << "no exception";
    } catch (const weft::error &e) {
        EXPECT_EQ(e.code(), WEFT_ERR_INFO_KEY);
        std::string what = e.what();
        char text[WEFT_MAX_ERROR_STRING + 1];
        size_t len = 0;
        ASSERT_EQ(weft_error_string(WEFT_ERR_INFO_KEY, text, &len), WEFT_SUCCESS);
        EXPECT_EQ(what.rfind(text, 0), 0u) << what;  // starts with the error string
        EXPECT_NE(what.find(": key is empty"), std::string::npos) << what;
    }
    try {
        weft::check(WEFT_ERR_TYPE);
        FAIL() << "no exception";
    } catch (const std::runtime_error &e) {  // catchable as the standard base
        EXPECT_EQ(dynamic_cast<const weft::error &>(e).code(), WEFT_ERR_TYPE);
    }
}

TEST(CxxInfo, RoundTrip) {
    weft::Info info;
    EXPECT_NE(info.handle(), WEFT_INFO_NULL);
    info.set("type", "cudaStream_t");
    info.set("empty", "");
    EXPECT_EQ(info.get("type"), "cudaStream_t");
    EXPECT_EQ(info.get("empty"), "");
    EXPECT_EQ(info.get("missing"), std::nullopt);
    std::string long_value(WEFT_MAX_INFO_VAL, 'q');
    info.set("long", long_value);
    EXPECT_EQ(info.get("long"), long_value);
    EXPECT_EQ(info.nkeys(), 3);
    EXPECT_EQ(info.nthkey(0), "type");
    EXPECT_EQ(info.nthkey(2), "long");
    info.erase("type");
    EXPECT_EQ(info.nkeys(), 2);
    EXPECT_THROW(info.erase("type"), weft::error);
    EXPECT_THROW(info.nthkey(5), weft::error);
}

TEST(CxxInfo, Hex) {
    struct payload {
        uint64_t a;
        uint32_t b;
    };
    weft::Info info;
    info.set_hex("value", payload{42, 7});
    auto back = info.get_hex<payload>("value");
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->a, 42u);
    EXPECT_EQ(back->b, 7u);
    EXPECT_EQ(info.get_hex<int>("absent"), std::nullopt);
    try {
        (void)info.get_hex<uint64_t>("value");
        FAIL() << "no exception";
    } catch (const weft::error &e) {
        EXPECT_EQ(e.code(), WEFT_ERR_INFO_VALUE);
        EXPECT_NE(std::string(e.what()).find("key 'value'"), std::string::npos) << e.what();
    }
    info.set("text", "not hex");
    EXPECT_THROW((void)info.get_hex<int>("text"), weft::error);
}

TEST(CxxInfo, MoveDupAndDestruction) {
    weft::Info a;
    a.set("k", "1");
    weft_info h = a.handle();
    weft::Info b(std::move(a));
    EXPECT_EQ(a.handle(), WEFT_INFO_NULL);
    EXPECT_EQ(b.handle(), h);
    // A moved-from object reports WEFT_ERR_INFO rather than crashing.
    try {
        a.set("k", "2");
        FAIL() << "no exception";
    } catch (const weft::error &e) {
        EXPECT_EQ(e.code(), WEFT_ERR_INFO);
    }
    weft::Info c = b.dup();
    c.set("k", "changed");
    EXPECT_EQ(b.get("k"), "1");
    EXPECT_EQ(c.get("k"), "changed");
    a = std::move(c);
    EXPECT_EQ(a.get("k"), "changed");
    {
        weft::Info scoped;
        h = scoped.handle();
    }
    int n;
    EXPECT_EQ(weft_info_get_nkeys(h, &n), WEFT_ERR_INFO);  // freed by the destructor
    weft_info raw = b.release();
    EXPECT_EQ(b.handle(), WEFT_INFO_NULL);
    EXPECT_EQ(weft_info_free(&raw), WEFT_SUCCESS);
}

TEST(CxxDatatype, DerivedRaii) {
    weft_datatype h;
    {
        auto t = weft::Datatype::vector(3, 2, 4, WEFT_INT);
        t.commit();
        h = t.handle();
        EXPECT_EQ(t.size(), 6 * sizeof(int));
        auto e = t.extent();
        EXPECT_EQ(e.lb, 0);
        EXPECT_EQ(e.extent, static_cast<ptrdiff_t>(10 * sizeof(int)));
        auto c = weft::Datatype::contiguous(2, t);  // implicit conversion to the handle
        EXPECT_EQ(c.size(), 12 * sizeof(int));
        weft::Datatype moved(std::move(c));
        EXPECT_EQ(c.handle(), WEFT_DATATYPE_NULL);
        EXPECT_EQ(moved.size(), 12 * sizeof(int));
    }
    size_t size;
    EXPECT_EQ(weft_type_size(h, &size), WEFT_ERR_TYPE);
    try {
        (void)weft::Datatype::contiguous(SIZE_MAX, WEFT_DOUBLE);
        FAIL() << "no exception";
    } catch (const weft::error &e) {
        EXPECT_EQ(e.code(), WEFT_ERR_COUNT);
    }
    EXPECT_THROW((void)weft::Datatype::vector(2, 1, 1, WEFT_DATATYPE_NULL), weft::error);
    weft::Datatype empty;
    EXPECT_THROW((void)empty.size(), weft::error);
}

TEST(CxxStatus, DefaultIsZeroed) {
    weft::Status s;
    EXPECT_EQ(s.source(), 0);
    EXPECT_EQ(s.tag(), 0);
    EXPECT_EQ(s.error(), WEFT_SUCCESS);
}
