// Fuzz target: core/base/info.cpp through the C API (weft_info_create/set/get/get_valuelen/delete/
// dup/free/get_nkeys/get_nthkey/set_hex/get_hex and weft::info_lookup), driven by a sequence of
// operations read from the input against a model of each info object.
//
// Invariants: every call's return code and output agree with the model (an ordered list of
// key/value pairs per object, C-string keys and values, MPI truncation in weft_info_get,
// WEFT_MAX_INFO_KEY / WEFT_MAX_INFO_VAL limits); get_hex succeeds exactly when the stored text
// is valid hex (hex.hpp's grammar) decoding to value_size bytes, and returns those bytes; a
// stale or made-up handle is refused; every object is freed at the end (LeakSanitizer).
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_common.hpp"
#include "base/hex.hpp"
#include "base/info.hpp"
#include "weft/weft.h"

namespace {

using entries = std::vector<std::pair<std::string, std::string>>;

struct slot {
    weft_info h = WEFT_INFO_NULL;
    entries model;
};

std::string c_string(std::string_view s) { return std::string(s.substr(0, s.find('\0'))); }

const std::string *find(const entries &m, const std::string &k) {
    for (auto &e : m)
        if (e.first == k) return &e.second;
    return nullptr;
}

// What a key check says: 0 valid, else the expected error.
int key_error(const std::string &k) {
    if (k.empty()) return WEFT_ERR_INFO_KEY;
    if (k.size() > WEFT_MAX_INFO_KEY) return WEFT_ERR_INFO_KEY;
    return WEFT_SUCCESS;
}

// A key drawn from a small alphabet most of the time, so that keys collide.
std::string pick_key(fuzz::input &in) {
    uint8_t sel = in.u8();
    if (sel < 160) return std::string(1, static_cast<char>('a' + sel % 4));
    if (sel < 250) return c_string(in.str());
    // Around the length limit.
    return std::string(WEFT_MAX_INFO_KEY - 1 + sel % 3, 'k');
}

std::string pick_value(fuzz::input &in) {
    uint8_t sel = in.u8();
    if (sel < 250) return c_string(in.str());
    return std::string(WEFT_MAX_INFO_VAL - 1 + sel % 3, 'v');
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz::input in(data, size);
    slot slots[3];
    std::vector<weft_info> dead;  // freed handles: must stay invalid
    for (int step = 0; step < 128 && !in.empty(); ++step) {
        uint8_t op = in.u8();
        slot &s = slots[(op >> 4) % 3];
        weft_info h = s.h;
        switch (op % 12) {
            case 0: {  // create
                if (s.h != WEFT_INFO_NULL) break;
                FUZZ_CHECK(weft_info_create(&s.h) == WEFT_SUCCESS && s.h != WEFT_INFO_NULL);
                s.model.clear();
                break;
            }
            case 1: {  // set
                std::string k = pick_key(in), v = pick_value(in);
                int rc = weft_info_set(h, k.c_str(), v.c_str());
                int expect = key_error(k);
                if (expect == 0 && v.size() > WEFT_MAX_INFO_VAL) expect = WEFT_ERR_INFO_VALUE;
                if (expect == 0 && h == WEFT_INFO_NULL) expect = WEFT_ERR_INFO;
                FUZZ_CHECK(rc == expect);
                if (rc == WEFT_SUCCESS) {
                    bool replaced = false;
                    for (auto &e : s.model)
                        if (e.first == k) e.second = v, replaced = true;
                    if (!replaced) s.model.emplace_back(k, v);
                }
                break;
            }
            case 2: {  // get, with a buffer of valuelen + 1 bytes
                std::string k = pick_key(in);
                size_t valuelen = in.u8() % 64;
                std::vector<char> buf(valuelen + 1, '\x7f');
                int flag = -1;
                int rc = weft_info_get(h, k.c_str(), valuelen, buf.data(), &flag);
                if (h == WEFT_INFO_NULL) {
                    FUZZ_CHECK(rc == WEFT_ERR_INFO);
                    break;
                }
                FUZZ_CHECK(rc == key_error(k));
                if (rc != WEFT_SUCCESS) break;
                const std::string *v = find(s.model, k);
                FUZZ_CHECK(flag == (v != nullptr));
                if (v) {
                    size_t n = std::min(v->size(), valuelen);
                    FUZZ_CHECK(std::memcmp(buf.data(), v->data(), n) == 0 && buf[n] == '\0');
                }
                break;
            }
            case 3: {  // get_valuelen and info_lookup
                std::string k = pick_key(in);
                size_t len = 12345;
                int flag = -1;
                int rc = weft_info_get_valuelen(h, k.c_str(), &len, &flag);
                auto looked = weft::info_lookup(h, k);
                if (h == WEFT_INFO_NULL) {
                    FUZZ_CHECK(rc == WEFT_ERR_INFO && !looked);
                    break;
                }
                const std::string *v = find(s.model, k);
                FUZZ_CHECK(looked.has_value() == (v != nullptr) && (!v || *looked == *v));
                FUZZ_CHECK(rc == key_error(k));
                if (rc == WEFT_SUCCESS) {
                    FUZZ_CHECK(flag == (v != nullptr));
                    if (v) FUZZ_CHECK(len == v->size());
                }
                break;
            }
            case 4: {  // delete
                std::string k = pick_key(in);
                int rc = weft_info_delete(h, k.c_str());
                if (h == WEFT_INFO_NULL) {
                    FUZZ_CHECK(rc == WEFT_ERR_INFO);
                    break;
                }
                if (key_error(k)) {
                    FUZZ_CHECK(rc == key_error(k));
                    break;
                }
                bool present = find(s.model, k) != nullptr;
                FUZZ_CHECK(rc == (present ? WEFT_SUCCESS : WEFT_ERR_INFO_NOKEY));
                std::erase_if(s.model, [&](auto &e) { return e.first == k; });
                break;
            }
            case 5: {  // dup into the next slot, if empty
                slot &to = slots[((op >> 4) + 1) % 3];
                if (&to == &s || to.h != WEFT_INFO_NULL) break;
                int rc = weft_info_dup(h, &to.h);
                if (h == WEFT_INFO_NULL) {
                    FUZZ_CHECK(rc == WEFT_ERR_INFO);
                    to.h = WEFT_INFO_NULL;
                    break;
                }
                FUZZ_CHECK(rc == WEFT_SUCCESS && to.h != WEFT_INFO_NULL && to.h != h);
                to.model = s.model;
                break;
            }
            case 6: {  // free
                weft_info x = h;
                int rc = weft_info_free(&x);
                if (h == WEFT_INFO_NULL) {
                    FUZZ_CHECK(rc == WEFT_ERR_INFO);
                    break;
                }
                FUZZ_CHECK(rc == WEFT_SUCCESS && x == WEFT_INFO_NULL);
                dead.push_back(h);
                s.h = WEFT_INFO_NULL;
                s.model.clear();
                break;
            }
            case 7: {  // nkeys and nthkey
                int nkeys = -1;
                int rc = weft_info_get_nkeys(h, &nkeys);
                if (h == WEFT_INFO_NULL) {
                    FUZZ_CHECK(rc == WEFT_ERR_INFO);
                    break;
                }
                FUZZ_CHECK(rc == WEFT_SUCCESS && nkeys == static_cast<int>(s.model.size()));
                int n = static_cast<int>(in.u8()) - 2;
                char key[WEFT_MAX_INFO_KEY + 1];
                rc = weft_info_get_nthkey(h, n, key);
                if (n < 0 || n >= nkeys) {
                    FUZZ_CHECK(rc == WEFT_ERR_INFO_NOKEY);
                } else {
                    FUZZ_CHECK(rc == WEFT_SUCCESS && s.model[static_cast<size_t>(n)].first == key);
                }
                break;
            }
            case 8: {  // set_hex of raw bytes
                std::string k = pick_key(in);
                std::string_view v = in.str();
                if (in.u8() == 0xff) v = std::string_view();  // value_size 0
                int rc = weft_info_set_hex(h, k.c_str(), v.data(), v.size());
                int expect = key_error(k);
                if (expect == 0 && h == WEFT_INFO_NULL) expect = WEFT_ERR_INFO;
                FUZZ_CHECK(rc == expect);
                if (rc == WEFT_SUCCESS) {
                    std::string enc = weft::hex_encode(v.data(), v.size());
                    bool replaced = false;
                    for (auto &e : s.model)
                        if (e.first == k) e.second = enc, replaced = true;
                    if (!replaced) s.model.emplace_back(k, enc);
                }
                break;
            }
            case 9: {  // get_hex with a value_size near the stored value's
                std::string k = pick_key(in);
                const std::string *v = h == WEFT_INFO_NULL ? nullptr : find(s.model, k);
                size_t guess = v ? v->size() / 2 : 0;
                size_t value_size = (in.u8() & 0x80) ? in.u8() : guess + (in.u8() % 5) - 2;
                if (value_size > 1 << 16) value_size = 0;
                std::vector<uint8_t> buf(value_size + 1, 0xa5);
                int flag = -1;
                int rc = weft_info_get_hex(h, k.c_str(), buf.data(), value_size, &flag);
                if (h == WEFT_INFO_NULL) {
                    FUZZ_CHECK(rc == WEFT_ERR_INFO);
                    break;
                }
                if (key_error(k)) {
                    FUZZ_CHECK(rc == key_error(k));
                    break;
                }
                if (!v) {
                    FUZZ_CHECK(rc == WEFT_SUCCESS && flag == 0);
                    break;
                }
                std::vector<uint8_t> bytes;
                bool over = false;
                bool valid = weft::hex_decode_max(*v, bytes, nullptr, value_size + 1, &over);
                if (valid && bytes.size() == value_size) {
                    FUZZ_CHECK(rc == WEFT_SUCCESS && flag == 1);
                    FUZZ_CHECK(value_size == 0 || std::memcmp(buf.data(), bytes.data(), value_size) == 0);
                } else {
                    FUZZ_CHECK(rc == WEFT_ERR_INFO_VALUE);
                }
                FUZZ_CHECK(buf[value_size] == 0xa5);  // nothing written past value_size
                break;
            }
            case 10: {  // a made-up or freed handle is refused
                weft_info x =
                    in.flag() && !dead.empty() ? dead[in.u8() % dead.size()] : static_cast<weft_info>(in.u32());
                bool live = false;
                for (auto &t : slots) live |= t.h == x && x != WEFT_INFO_NULL;
                if (live) break;
                int nkeys;
                FUZZ_CHECK(weft_info_get_nkeys(x, &nkeys) == WEFT_ERR_INFO);
                FUZZ_CHECK(weft_info_set(x, "k", "v") == WEFT_ERR_INFO);
                FUZZ_CHECK(!weft::info_lookup(x, "k"));
                weft_info copy = x;
                if (x != WEFT_INFO_NULL) FUZZ_CHECK(weft_info_free(&copy) == WEFT_ERR_INFO && copy == x);
                break;
            }
            case 11: {  // null arguments
                int flag;
                char buf[4];
                FUZZ_CHECK(weft_info_get(h, "a", 3, nullptr, &flag) == WEFT_ERR_ARG);
                FUZZ_CHECK(weft_info_get(h, "a", 3, buf, nullptr) == WEFT_ERR_ARG);
                FUZZ_CHECK(weft_info_get_valuelen(h, "a", nullptr, &flag) == WEFT_ERR_ARG);
                FUZZ_CHECK(weft_info_set(h, nullptr, "v") == WEFT_ERR_ARG);
                FUZZ_CHECK(weft_info_set_hex(h, "a", nullptr, 1) == WEFT_ERR_ARG);
                FUZZ_CHECK(weft_info_get_hex(h, "a", nullptr, 1, &flag) == WEFT_ERR_ARG);
                FUZZ_CHECK(weft_info_get_hex(h, "a", buf, 1, nullptr) == WEFT_ERR_ARG);
                break;
            }
        }
    }
    for (auto &s : slots)
        if (s.h != WEFT_INFO_NULL) FUZZ_CHECK(weft_info_free(&s.h) == WEFT_SUCCESS);
    return 0;
}
