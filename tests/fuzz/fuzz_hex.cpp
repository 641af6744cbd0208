// Fuzz target: core/base/hex.cpp (hex_encode, hex_decode, hex_decode_max), the encoding of
// weft_info_set_hex/get_hex values and of PMI-1 bootstrap values.
//
// Invariants:
//  - hex_decode(hex_encode(x)) == x for the raw input, and the encoding is 2 lowercase digits a byte;
//  - on arbitrary text, hex_decode_max agrees with a small reference decoder written here from
//    hex.hpp's contract (validity, the over-limit verdict and the bytes), under several caps;
//  - a success never yields more than the cap; a failure explains itself ("position N: ...")
//    unless it is over the limit; hex_decode (1 GiB cap) agrees when the size is small.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.hpp"
#include "base/hex.hpp"

namespace {

enum class verdict { ok, malformed, too_big };

// hex.hpp's grammar: pairs of hex digits (either case) and "[N]" zero runs, N decimal with at
// least one digit.  Sizes saturate at cap + 1.
verdict reference_decode(std::string_view t, size_t cap, std::vector<uint8_t> &out) {
    auto hexval = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    out.clear();
    size_t total = 0;
    bool big = false;
    for (size_t i = 0; i < t.size();) {
        if (t[i] == '[') {
            size_t j = i + 1, n = 0;
            bool n_big = false;
            while (j < t.size() && t[j] >= '0' && t[j] <= '9') {
                if (!n_big) {
                    n = n * 10 + static_cast<size_t>(t[j] - '0');
                    if (n > cap) n_big = true;
                }
                ++j;
            }
            if (j >= t.size() || t[j] != ']' || j == i + 1) return verdict::malformed;
            if (n_big || n > cap - total) big = true;
            if (!big) {
                total += n;
                out.insert(out.end(), n, uint8_t{0});
            }
            i = j + 1;
        } else {
            if (i + 1 >= t.size() || hexval(t[i]) < 0 || hexval(t[i + 1]) < 0) return verdict::malformed;
            if (!big) {
                if (total + 1 > cap)
                    big = true;
                else {
                    ++total;
                    out.push_back(static_cast<uint8_t>(hexval(t[i]) << 4 | hexval(t[i + 1])));
                }
            }
            i += 2;
        }
    }
    return big ? verdict::too_big : verdict::ok;
}

void check_decode(std::string_view text, size_t cap) {
    std::vector<uint8_t> out, expect;
    std::string why;
    bool over = false;
    bool ok = weft::hex_decode_max(text, out, &why, cap, &over);
    verdict v = reference_decode(text, cap, expect);
    if (ok) {
        FUZZ_CHECK(v == verdict::ok);
        FUZZ_CHECK(!over);
        FUZZ_CHECK(out.size() <= cap);
        FUZZ_CHECK(out == expect);
    } else {
        FUZZ_CHECK(v != verdict::ok);
        FUZZ_CHECK(over == (v == verdict::too_big));
        FUZZ_CHECK(out.empty());
        FUZZ_CHECK(!why.empty());
        if (!over) FUZZ_CHECK(why.rfind("position ", 0) == 0);
    }
    // Null why / over_limit pointers are allowed.
    std::vector<uint8_t> again;
    FUZZ_CHECK(weft::hex_decode_max(text, again, nullptr, cap, nullptr) == ok);
    FUZZ_CHECK(again == out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // Encoding: round trip of the raw bytes.
    std::string enc = weft::hex_encode(data, size);
    FUZZ_CHECK(enc.size() == 2 * size);
    for (char c : enc) FUZZ_CHECK((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
    std::vector<uint8_t> back;
    std::string why;
    FUZZ_CHECK(weft::hex_decode(enc, back, &why));
    FUZZ_CHECK(back.size() == size && (size == 0 || std::memcmp(back.data(), data, size) == 0));

    // Decoding arbitrary text under caps around the interesting sizes (kept small: a "[N]" run
    // really allocates N bytes).
    std::string_view text(reinterpret_cast<const char *>(data), size);
    for (size_t cap : {size_t{0}, size_t{1}, size_t{7}, size / 2, size_t{4096}, size_t{1} << 16})
        check_decode(text, cap);

    // hex_decode's own cap is 1 GiB: compare with it only where the result is small.
    std::vector<uint8_t> small, full;
    bool over = false;
    bool ok = weft::hex_decode_max(text, small, nullptr, size_t{1} << 16, &over);
    if (!over) {
        FUZZ_CHECK(weft::hex_decode(text, full, &why) == ok);
        FUZZ_CHECK(full == small);
        if (ok) {
            // Re-encoding gives the canonical form, which decodes to the same bytes.
            std::string canon = weft::hex_encode(small.data(), small.size());
            std::vector<uint8_t> again;
            FUZZ_CHECK(weft::hex_decode(canon, again, nullptr) && again == small);
        }
    }
    return 0;
}
