// Pack, unpack and iovecs: one walk over the runs of a sequence of elements, in pack order,
// adjacent runs merged; a flat type (datatype.hpp) is one loop over its list per element.
#include <cstring>
#include <type_traits>

#include "base/datatype.hpp"
#include "base/error.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

// Walks the runs of elements and hands each maximal run to emit(char *base, size_t len),
// which returns false to stop the walk.
template <class Emit>
class run_walker {
  public:
    explicit run_walker(Emit &emit) : emit_(emit) {}

    // count elements of t, the first at origin; false when emit stopped the walk.
    bool elements(const datatype &t, char *origin, size_t count) {
        for (size_t i = 0; i < count && !stopped_; ++i) element(t, origin + static_cast<ptrdiff_t>(i) * t.extent);
        return flush();
    }

  private:
    void add(char *base, size_t len) {
        if (run_len_ != 0 && run_ + run_len_ == base) {
            run_len_ += len;
            return;
        }
        if (run_len_ != 0 && !emit_(run_, run_len_)) stopped_ = true;
        run_ = base;
        run_len_ = len;
    }
    bool flush() {
        if (!stopped_ && run_len_ != 0 && !emit_(run_, run_len_)) stopped_ = true;
        run_len_ = 0;
        return !stopped_;
    }
    void element(const datatype &t, char *origin) {
        if (t.flat) {
            for (const datatype_block &b : t.blocks) {
                add(origin + b.offset, b.length);
                if (stopped_) return;
            }
            return;
        }
        for (const datatype_part &p : t.parts) {
            const datatype &c = *p.child;
            if (c.size == 0) continue;
            bool run = c.flat && c.blocks.size() == 1 && c.blocks[0].length == static_cast<size_t>(c.extent);
            for (size_t b = 0; b < p.count; ++b) {
                char *block = origin + p.disp + static_cast<ptrdiff_t>(b) * p.stride;
                if (run)
                    add(block + c.blocks[0].offset, p.blocklen * c.size);
                else
                    for (size_t j = 0; j < p.blocklen && !stopped_; ++j)
                        element(c, block + static_cast<ptrdiff_t>(j) * c.extent);
                if (stopped_) return;
            }
        }
    }

    Emit &emit_;
    char *run_ = nullptr;
    size_t run_len_ = 0;
    bool stopped_ = false;
};

template <class Emit>
bool walk(const datatype &t, const void *origin, size_t count, Emit &&emit) {
    run_walker<std::remove_reference_t<Emit>> w(emit);
    return w.elements(t, const_cast<char *>(static_cast<const char *>(origin)), count);
}

// Basic elements in the first `bytes` bytes of one packed element of t (bytes < t.size).
size_t count_partial(const datatype &t, size_t bytes, bool *exact) {
    if (t.builtin) {
        // A plain type is one element; a pair is a value then an int.
        if (t.basic_count == 1) {
            *exact = bytes == 0;
            return 0;
        }
        size_t value = t.size - sizeof(int);
        *exact = bytes == 0 || bytes == value;
        return bytes >= value ? 1 : 0;
    }
    size_t n = 0;
    for (const datatype_part &p : t.parts) {
        const datatype &c = *p.child;
        size_t elems = p.count * p.blocklen, all = elems * c.size;
        if (bytes >= all) {
            n += elems * c.basic_count;
            bytes -= all;
            continue;
        }
        size_t whole = c.size ? bytes / c.size : 0;
        return n + whole * c.basic_count + count_partial(c, bytes - whole * c.size, exact);
    }
    *exact = bytes == 0;
    return n;
}

}  // namespace

void datatype_pack(const datatype &type, const void *src, size_t count, void *dst) {
    if (count == 0 || type.size == 0) return;
    if (type.contiguous) {  // callers checked count * size against overflow
        std::memcpy(dst, src, count * type.size);
        return;
    }
    char *out = static_cast<char *>(dst);
    walk(type, src, count, [&out](char *base, size_t len) {
        std::memcpy(out, base, len);
        out += len;
        return true;
    });
}

void datatype_unpack(const datatype &type, const void *src, size_t bytes, void *dst, size_t count) {
    if (count == 0 || type.size == 0 || bytes == 0) return;
    if (type.contiguous) {
        size_t total = count * type.size;
        std::memcpy(dst, src, bytes < total ? bytes : total);
        return;
    }
    const char *in = static_cast<const char *>(src);
    size_t left = bytes;
    walk(type, dst, count, [&](char *base, size_t len) {
        size_t n = len < left ? len : left;
        std::memcpy(base, in, n);
        in += n;
        left -= n;
        return left != 0;
    });
}

size_t datatype_iovec(const datatype &type, const void *buf, size_t count, datatype_iov *iov, size_t max) {
    size_t n = 0;
    if (count == 0 || type.size == 0) return 0;
    walk(type, buf, count, [&](char *base, size_t len) {
        if (n == max) {
            n = max + 1;
            return false;
        }
        iov[n++] = {base, len};
        return true;
    });
    return n;
}

size_t datatype_count_basic(const datatype &type, size_t bytes, bool *exact) {
    *exact = true;
    if (type.size == 0) return 0;
    size_t whole = bytes / type.size;
    return whole * type.basic_count + count_partial(type, bytes - whole * type.size, exact);
}

}  // namespace weft

using namespace weft;

extern "C" WEFT_API int weft_get_elements(const weft_status *status, weft_datatype datatype, size_t *count) {
    if (status == nullptr || count == nullptr)
        return fail(WEFT_ERR_ARG, "weft_get_elements: status and count must not be NULL");
    const weft::datatype *t = datatype_get(datatype);
    if (t == nullptr) return fail(WEFT_ERR_TYPE, "weft_get_elements: invalid datatype handle 0x%x", datatype);
    bool exact;
    size_t n = datatype_count_basic(*t, status->weft_bytes_, &exact);
    *count = exact ? n : WEFT_UNDEFINED;
    return WEFT_SUCCESS;
}
