// Singleton bootstrap: no launcher, so this process is rank 0 of a job of one.
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "base/error.hpp"
#include "weft/weft.h"

namespace weft {

namespace {

class singleton_bootstrap final : public bootstrap {
  public:
    const char *name() const override { return "singleton"; }
    int rank() const override { return 0; }
    int size() const override { return 1; }
    int put(std::string_view key, std::string_view value) override {
        kv_[std::string(key)] = std::string(value);
        return WEFT_SUCCESS;
    }
    int fence() override { return WEFT_SUCCESS; }  // one process: nothing to wait for
    int get(int rank, std::string_view key, std::string &value) override {
        if (rank != 0)
            return fail(WEFT_ERR_RANK, "bootstrap get: rank %d out of range for a singleton job of size 1", rank);
        auto it = kv_.find(std::string(key));
        if (it == kv_.end())
            return fail(WEFT_ERR_BOOTSTRAP, "bootstrap get: key '%.*s' was not put", static_cast<int>(key.size()),
                        key.data());
        value = it->second;
        return WEFT_SUCCESS;
    }
    void abort(int code, std::string_view message) override {
        std::fprintf(stderr, "weft: abort with code %d%s%.*s\n", code, message.empty() ? "" : ": ",
                     static_cast<int>(message.size()), message.data());
        std::fflush(stderr);
        ::_exit(code);
    }
    int finalize() override { return WEFT_SUCCESS; }

  private:
    std::map<std::string, std::string, std::less<>> kv_;
};

}  // namespace

int bootstrap_singleton_open(std::unique_ptr<bootstrap> &out) {
    out = std::make_unique<singleton_bootstrap>();
    return WEFT_SUCCESS;
}

}  // namespace weft
