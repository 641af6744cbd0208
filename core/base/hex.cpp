// Hex encoding for info values and bootstrap keys (see hex.hpp).
#include "base/hex.hpp"

#include <cstdio>
#include <exception>

namespace weft {

namespace {

// Upper bound on the decoded size when the caller gives none: a hostile "[999999999999]" must
// not make us allocate gigabytes.
constexpr size_t default_max_decoded = size_t{1} << 30;

int digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Printable rendering of an offending character for messages.
std::string show_char(char c) {
    char buf[16];
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f)
        std::snprintf(buf, sizeof buf, "'%c'", c);
    else
        std::snprintf(buf, sizeof buf, "byte 0x%02x", u);
    return buf;
}

bool reject(std::string *why, size_t pos, const std::string &what) {
    if (why != nullptr) *why = "position " + std::to_string(pos) + ": " + what;
    return false;
}

}  // namespace

std::string hex_encode(const void *data, size_t size) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    if (data == nullptr || size == 0) return s;
    s.resize(size * 2);
    const auto *p = static_cast<const uint8_t *>(data);
    for (size_t i = 0; i < size; ++i) {
        s[2 * i] = digits[p[i] >> 4];
        s[2 * i + 1] = digits[p[i] & 0xf];
    }
    return s;
}

bool hex_decode_max(std::string_view text, std::vector<uint8_t> &out, std::string *why, size_t max_size,
                    bool *over_limit) {
    out.clear();
    if (over_limit != nullptr) *over_limit = false;
    // First pass validates and sizes; the second fills.  Nothing is allocated for bad input.
    // Sizes saturate at max_size + 1 so that syntax errors anywhere are still reported first.
    const size_t too_big = max_size < SIZE_MAX ? max_size + 1 : SIZE_MAX;
    auto add = [&](size_t &acc, size_t n) { acc = n > too_big - acc ? too_big : acc + n; };
    size_t total = 0;
    size_t i = 0;
    while (i < text.size()) {
        char c = text[i];
        if (c == '[') {
            size_t open = i++;
            size_t n = 0, ndigits = 0;
            while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
                if (n < too_big) {  // n * 10 + d, saturating
                    size_t tens = n > too_big / 10 ? too_big : n * 10;
                    add(tens, static_cast<size_t>(text[i] - '0'));
                    n = tens;
                }
                ++ndigits;
                ++i;
            }
            if (i >= text.size()) return reject(why, i, "unterminated '[' opened at position " + std::to_string(open));
            if (text[i] != ']')
                return reject(why, i, "expected a decimal digit or ']' in zero run, got " + show_char(text[i]));
            if (ndigits == 0) return reject(why, open, "empty zero run \"[]\"");
            ++i;  // ']'
            add(total, n);
            continue;
        }
        if (c == ']') return reject(why, i, "']' without a matching '['");
        if (digit_value(c) < 0) return reject(why, i, "expected a hex digit or '[', got " + show_char(c));
        if (i + 1 >= text.size()) return reject(why, i, "odd number of hex digits (last byte has one digit)");
        if (digit_value(text[i + 1]) < 0)
            return reject(why, i + 1, "expected the second hex digit of a byte, got " + show_char(text[i + 1]));
        add(total, 1);
        i += 2;
    }
    if (total > max_size) {
        if (over_limit != nullptr) *over_limit = true;
        if (why != nullptr) *why = "decoded size exceeds the limit of " + std::to_string(max_size) + " bytes";
        return false;
    }

    try {
        out.reserve(total);
    } catch (const std::exception &) {  // only with a huge caller-given cap
        if (why != nullptr) *why = "out of memory for " + std::to_string(total) + " decoded bytes";
        return false;
    }
    i = 0;
    while (i < text.size()) {
        if (text[i] == '[') {
            size_t n = 0;
            for (++i; text[i] != ']'; ++i) n = n * 10 + static_cast<size_t>(text[i] - '0');
            ++i;
            out.insert(out.end(), n, uint8_t{0});
        } else {
            out.push_back(static_cast<uint8_t>(digit_value(text[i]) << 4 | digit_value(text[i + 1])));
            i += 2;
        }
    }
    return true;
}

bool hex_decode(std::string_view text, std::vector<uint8_t> &out, std::string *why) {
    return hex_decode_max(text, out, why, default_max_decoded, nullptr);
}

}  // namespace weft
