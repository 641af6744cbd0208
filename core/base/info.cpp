// Info objects (weft_info_*): ordered string pairs, independent of the runtime so that they work
// before weft_init and after weft_finalize.
#include "base/info.hpp"

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/handle.hpp"
#include "base/hex.hpp"

namespace weft {

namespace {

struct info_object {
    // Per-object lock: several threads may read one info while creating streams.
    mutable std::mutex mutex;
    // A vector keeps insertion order for get_nthkey; info objects hold few keys.
    std::vector<std::pair<std::string, std::string>> entries;

    std::pair<std::string, std::string> *find(std::string_view key) {
        for (auto &e : entries)
            if (e.first == key) return &e;
        return nullptr;
    }
};

// Never destroyed: info calls are allowed during static destruction (after finalize).
handle_table<info_object> &table() {
    static auto *t = new handle_table<info_object>(handle_kind::info, 1);
    return *t;
}

// Holds a reference so that a concurrent weft_info_free cannot destroy the object under us.
int lookup(weft_info info, const char *what, std::shared_ptr<info_object> &out) {
    if (info == WEFT_INFO_NULL) return fail(WEFT_ERR_INFO, "%s is WEFT_INFO_NULL", what);
    out = table().get_shared(info);
    if (!out)
        return fail(WEFT_ERR_INFO, "%s (0x%08x) is not a valid info handle (freed or never created)", what,
                    static_cast<unsigned>(info));
    return WEFT_SUCCESS;
}

int check_key(const char *key) {
    if (key == nullptr) return fail(WEFT_ERR_ARG, "key is NULL");
    size_t n = strnlen(key, WEFT_MAX_INFO_KEY + 1);
    if (n == 0) return fail(WEFT_ERR_INFO_KEY, "key is empty");
    if (n > WEFT_MAX_INFO_KEY)
        return fail(WEFT_ERR_INFO_KEY, "key '%.40s...' is longer than WEFT_MAX_INFO_KEY (%d)", key, WEFT_MAX_INFO_KEY);
    return WEFT_SUCCESS;
}

int set_value(weft_info info, const char *key, std::string value) {
    std::shared_ptr<info_object> obj;
    if (int rc = lookup(info, "info", obj)) return rc;
    std::lock_guard lock(obj->mutex);
    if (auto *e = obj->find(key))
        e->second = std::move(value);  // replace in place: order is that of first insertion
    else
        obj->entries.emplace_back(key, std::move(value));
    return WEFT_SUCCESS;
}

// Copies key's value into *value; false when absent.
int get_value(weft_info info, const char *key, std::string &value, bool &found) {
    std::shared_ptr<info_object> obj;
    if (int rc = lookup(info, "info", obj)) return rc;
    if (int rc = check_key(key)) return rc;
    std::lock_guard lock(obj->mutex);
    auto *e = obj->find(key);
    found = e != nullptr;
    if (found) value = e->second;
    return WEFT_SUCCESS;
}

}  // namespace

std::optional<std::string> info_lookup(weft_info info, std::string_view key) {
    if (info == WEFT_INFO_NULL) return std::nullopt;
    auto obj = table().get_shared(info);
    if (!obj) return std::nullopt;
    std::lock_guard lock(obj->mutex);
    if (auto *e = obj->find(key)) return e->second;
    return std::nullopt;
}

}  // namespace weft

using namespace weft;

extern "C" {

WEFT_API int weft_info_create(weft_info *info) {
    if (info == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "info is NULL"), "weft_info_create");
    int h = table().insert(std::make_shared<info_object>());
    if (h == 0)
        return self_error_return(fail(WEFT_ERR_NO_MEM, "too many info objects (the handle table is full)"),
                                 "weft_info_create");
    *info = h;
    return WEFT_SUCCESS;
}

WEFT_API int weft_info_set(weft_info info, const char *key, const char *value) {
    if (int rc = check_key(key)) return self_error_return(rc, "weft_info_set");
    if (value == nullptr)
        return self_error_return(fail(WEFT_ERR_ARG, "value for key '%s' is NULL", key), "weft_info_set");
    size_t n = strnlen(value, WEFT_MAX_INFO_VAL + 1);
    if (n > WEFT_MAX_INFO_VAL)
        return self_error_return(fail(WEFT_ERR_INFO_VALUE, "value for key '%s' is longer than WEFT_MAX_INFO_VAL (%d)",
                                      key, WEFT_MAX_INFO_VAL),
                                 "weft_info_set");
    return self_error_return(set_value(info, key, std::string(value, n)), "weft_info_set");
}

WEFT_API int weft_info_get(weft_info info, const char *key, size_t valuelen, char *value, int *flag) {
    if (value == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "value is NULL"), "weft_info_get");
    if (flag == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "flag is NULL"), "weft_info_get");
    std::string v;
    bool found = false;
    if (int rc = get_value(info, key, v, found)) return self_error_return(rc, "weft_info_get");
    *flag = found ? 1 : 0;
    if (found) {
        // MPI semantics: the buffer holds valuelen + 1 characters; longer values are truncated.
        size_t n = v.size() < valuelen ? v.size() : valuelen;
        std::memcpy(value, v.data(), n);
        value[n] = '\0';
    }
    return WEFT_SUCCESS;
}

WEFT_API int weft_info_get_valuelen(weft_info info, const char *key, size_t *valuelen, int *flag) {
    if (valuelen == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "valuelen is NULL"), "weft_info_get_valuelen");
    if (flag == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "flag is NULL"), "weft_info_get_valuelen");
    std::string v;
    bool found = false;
    if (int rc = get_value(info, key, v, found)) return self_error_return(rc, "weft_info_get_valuelen");
    *flag = found ? 1 : 0;
    if (found) *valuelen = v.size();
    return WEFT_SUCCESS;
}

WEFT_API int weft_info_delete(weft_info info, const char *key) {
    std::shared_ptr<info_object> obj;
    if (int rc = lookup(info, "info", obj)) return self_error_return(rc, "weft_info_delete");
    if (int rc = check_key(key)) return self_error_return(rc, "weft_info_delete");
    std::lock_guard lock(obj->mutex);
    auto &v = obj->entries;
    for (auto it = v.begin(); it != v.end(); ++it)
        if (it->first == key) {
            v.erase(it);
            return WEFT_SUCCESS;
        }
    return self_error_return(fail(WEFT_ERR_INFO_NOKEY, "key '%s' is not in the info object", key), "weft_info_delete");
}

WEFT_API int weft_info_dup(weft_info info, weft_info *newinfo) {
    if (newinfo == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "newinfo is NULL"), "weft_info_dup");
    std::shared_ptr<info_object> obj;
    if (int rc = lookup(info, "info", obj)) return self_error_return(rc, "weft_info_dup");
    auto copy = std::make_shared<info_object>();
    {
        std::lock_guard lock(obj->mutex);
        copy->entries = obj->entries;
    }
    int h = table().insert(std::move(copy));
    if (h == 0)
        return self_error_return(fail(WEFT_ERR_NO_MEM, "too many info objects (the handle table is full)"),
                                 "weft_info_dup");
    *newinfo = h;
    return WEFT_SUCCESS;
}

WEFT_API int weft_info_free(weft_info *info) {
    if (info == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "info is NULL"), "weft_info_free");
    if (*info == WEFT_INFO_NULL)
        return self_error_return(fail(WEFT_ERR_INFO, "*info is WEFT_INFO_NULL"), "weft_info_free");
    if (!table().erase(*info))
        return self_error_return(
            fail(WEFT_ERR_INFO, "*info (0x%08x) is not a valid info handle (freed or never created)",
                 static_cast<unsigned>(*info)),
            "weft_info_free");
    *info = WEFT_INFO_NULL;
    return WEFT_SUCCESS;
}

WEFT_API int weft_info_get_nkeys(weft_info info, int *nkeys) {
    if (nkeys == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "nkeys is NULL"), "weft_info_get_nkeys");
    std::shared_ptr<info_object> obj;
    if (int rc = lookup(info, "info", obj)) return self_error_return(rc, "weft_info_get_nkeys");
    std::lock_guard lock(obj->mutex);
    *nkeys = static_cast<int>(obj->entries.size());
    return WEFT_SUCCESS;
}

// weft.h documents WEFT_ERR_INFO_NOKEY for "n out of range"; keep this in one place in case
// the contract settles on WEFT_ERR_ARG (MPICH's choice) instead.
static constexpr int nthkey_range_error = WEFT_ERR_INFO_NOKEY;

WEFT_API int weft_info_get_nthkey(weft_info info, int n, char *key) {
    if (key == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "key is NULL"), "weft_info_get_nthkey");
    std::shared_ptr<info_object> obj;
    if (int rc = lookup(info, "info", obj)) return self_error_return(rc, "weft_info_get_nthkey");
    std::lock_guard lock(obj->mutex);
    if (n < 0 || static_cast<size_t>(n) >= obj->entries.size())
        return self_error_return(
            fail(nthkey_range_error, "n = %d is out of range: the info object has %zu keys", n, obj->entries.size()),
            "weft_info_get_nthkey");
    const std::string &k = obj->entries[static_cast<size_t>(n)].first;
    std::memcpy(key, k.c_str(), k.size() + 1);
    return WEFT_SUCCESS;
}

WEFT_API int weft_info_set_hex(weft_info info, const char *key, const void *value, size_t value_size) {
    if (int rc = check_key(key)) return self_error_return(rc, "weft_info_set_hex");
    if (value == nullptr && value_size > 0)
        return self_error_return(fail(WEFT_ERR_ARG, "value for key '%s' is NULL with value_size %zu", key, value_size),
                                 "weft_info_set_hex");
    if (value_size > WEFT_MAX_INFO_VAL / 2)
        return self_error_return(
            fail(WEFT_ERR_INFO_VALUE, "key '%s': %zu bytes encode to %zu hex digits, more than WEFT_MAX_INFO_VAL (%d)",
                 key, value_size, value_size, WEFT_MAX_INFO_VAL),
            "weft_info_set_hex");
    return self_error_return(set_value(info, key, hex_encode(value, value_size)), "weft_info_set_hex");
}

WEFT_API int weft_info_get_hex(weft_info info, const char *key, void *value, size_t value_size, int *flag) {
    if (flag == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "flag is NULL"), "weft_info_get_hex");
    if (value == nullptr && value_size > 0)
        return self_error_return(fail(WEFT_ERR_ARG, "value is NULL with value_size %zu", value_size),
                                 "weft_info_get_hex");
    std::string v;
    bool found = false;
    if (int rc = get_value(info, key, v, found)) return self_error_return(rc, "weft_info_get_hex");
    if (!found) {
        *flag = 0;
        return WEFT_SUCCESS;
    }
    std::vector<uint8_t> bytes;
    std::string why;
    // Cap one past value_size so that a too-long value is still reported as a size mismatch,
    // and at 1 GiB so that a hostile "[N]" with a huge value_size cannot exhaust memory.
    constexpr size_t max_decoded = size_t{1} << 30;
    size_t cap = value_size < max_decoded ? value_size + 1 : max_decoded;
    bool over_limit = false;
    if (!hex_decode_max(v, bytes, &why, cap, &over_limit)) {
        if (over_limit)
            return self_error_return(fail(WEFT_ERR_INFO_VALUE, "key '%s': decodes to more than %zu bytes, expected %zu",
                                          key, value_size, value_size),
                                     "weft_info_get_hex");
        return self_error_return(fail(WEFT_ERR_INFO_VALUE, "key '%s': value is not valid hex: %s", key, why.c_str()),
                                 "weft_info_get_hex");
    }
    if (bytes.size() != value_size)
        return self_error_return(
            fail(WEFT_ERR_INFO_VALUE, "key '%s': decodes to %zu bytes, expected %zu", key, bytes.size(), value_size),
            "weft_info_get_hex");
    if (value_size > 0) std::memcpy(value, bytes.data(), value_size);
    *flag = 1;
    return WEFT_SUCCESS;
}

}  // extern "C"
