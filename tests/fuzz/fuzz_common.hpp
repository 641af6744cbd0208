// Helpers shared by the libFuzzer targets of tests/fuzz (see README.md there).
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

// An invariant of the code under test: a failure aborts, which libFuzzer reports as a crash
// and saves the input.
#define FUZZ_CHECK(cond)                                                                            \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            std::fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
            std::abort();                                                                           \
        }                                                                                           \
    } while (0)

namespace fuzz {

// Consumes a fuzz input from the front: numbers, bounded lengths, byte strings.  Past the end
// every read gives zeros / empty strings, so that a harness never has to check.
class input {
  public:
    input(const uint8_t *data, size_t size) : p_(data), n_(size) {}
    bool empty() const { return n_ == 0; }
    size_t left() const { return n_; }
    uint8_t u8() {
        if (n_ == 0) return 0;
        --n_;
        return *p_++;
    }
    uint16_t u16() { return static_cast<uint16_t>(u8() | u8() << 8); }
    uint32_t u32() { return static_cast<uint32_t>(u16() | uint32_t{u16()} << 16); }
    uint64_t u64() { return u32() | uint64_t{u32()} << 32; }
    bool flag() { return (u8() & 1) != 0; }
    // A value in [0, n) (n > 0).
    size_t below(size_t n) { return n <= 256 ? u8() % n : u16() % n; }
    std::string_view bytes(size_t len) {
        if (len > n_) len = n_;
        std::string_view s(reinterpret_cast<const char *>(p_), len);
        p_ += len, n_ -= len;
        return s;
    }
    // A length-prefixed byte string (one length byte, at most max).
    std::string_view str(size_t max = 255) { return bytes(u8() % (max + 1)); }
    std::string_view rest() { return bytes(n_); }

  private:
    const uint8_t *p_;
    size_t n_;
};

// The lowest free file descriptor: a harness compares it before and after one input to catch
// a descriptor the code under test leaked.
inline int lowest_free_fd() {
    int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
    return fd;
}

// Sets an environment variable without glibc's setenv, which keeps every distinct value it was
// ever given (millions of inputs would grow the process without bound): the variable points into
// a buffer of ours that later calls overwrite.  One buffer per variable name.
class env_var {
  public:
    explicit env_var(const char *name) : name_(name) {}
    void set(std::string_view value) {
        // putenv keeps the pointer: a fresh string each time, the old one freed after the swap
        // (one allocation and one free per call: libFuzzer's leak check stays quiet).
        std::string *fresh = new std::string(name_);
        *fresh += '=';
        fresh->append(value.substr(0, value.find('\0')));
        ::putenv(fresh->data());
        delete old_;
        old_ = fresh;
    }
    void unset() {
        ::unsetenv(name_);
        delete old_;
        old_ = nullptr;
    }

  private:
    const char *name_;
    std::string *old_ = nullptr;
};

}  // namespace fuzz
