// PMIx bootstrap (Slurm srun --mpi=pmix, Open MPI mpirun, PRRTE): values are PMIx byte
// objects published with PMIX_GLOBAL scope; fence collects data so gets are then local.
#ifdef WEFT_HAVE_PMIX
#include <pmix.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "base/error.hpp"
#include "kvs_wire.hpp"
#include "weft/weft.h"

namespace weft {

namespace {

class pmix_bootstrap final : public bootstrap {
  public:
    pmix_bootstrap(const pmix_proc_t &me, int size, int timeout_s) : me_(me), size_(size), timeout_s_(timeout_s) {}
    ~pmix_bootstrap() override {
        if (!finalized_) PMIx_Finalize(nullptr, 0);
    }
    const char *name() const override { return "pmix"; }
    int rank() const override { return static_cast<int>(me_.rank); }
    int size() const override { return size_; }

    int put(std::string_view key, std::string_view value) override {
        std::string k;
        if (int rc = make_key(key, k); rc != WEFT_SUCCESS) return rc;
        pmix_value_t v;
        PMIX_VALUE_CONSTRUCT(&v);
        v.type = PMIX_BYTE_OBJECT;
        // PMIx_Put copies the value; the cast only satisfies the non-const field.
        v.data.bo.bytes = const_cast<char *>(value.data());
        v.data.bo.size = value.size();
        std::lock_guard<std::mutex> g(mu_);
        pmix_status_t st = PMIx_Put(PMIX_GLOBAL, k.c_str(), &v);
        if (st == PMIX_SUCCESS) st = PMIx_Commit();
        if (st != PMIX_SUCCESS)
            return fail(WEFT_ERR_BOOTSTRAP, "bootstrap put of '%s' through PMIx failed: %s", k.c_str(),
                        PMIx_Error_string(st));
        return WEFT_SUCCESS;
    }

    int fence() override {
        pmix_info_t info[2];
        bool collect = true;
        int timeout = timeout_s_;
        PMIX_INFO_CONSTRUCT(&info[0]);
        PMIX_INFO_CONSTRUCT(&info[1]);
        PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
        std::lock_guard<std::mutex> g(mu_);
        pmix_status_t st = PMIx_Fence(nullptr, 0, info, 2);
        PMIX_INFO_DESTRUCT(&info[0]);
        PMIX_INFO_DESTRUCT(&info[1]);
        if (st != PMIX_SUCCESS)
            return fail(WEFT_ERR_BOOTSTRAP, "bootstrap fence through PMIx failed: %s%s", PMIx_Error_string(st),
                        st == PMIX_ERR_TIMEOUT ? " (raise WEFT_BOOTSTRAP_TIMEOUT to wait longer)" : "");
        return WEFT_SUCCESS;
    }

    int get(int rank, std::string_view key, std::string &value) override {
        if (rank < 0 || rank >= size_)
            return fail(WEFT_ERR_RANK, "bootstrap get: rank %d out of range for a job of size %d", rank, size_);
        std::string k;
        if (int rc = make_key(key, k); rc != WEFT_SUCCESS) return rc;
        pmix_proc_t proc;
        PMIX_PROC_CONSTRUCT(&proc);
        PMIX_LOAD_PROCID(&proc, me_.nspace, static_cast<pmix_rank_t>(rank));
        // A key that was never put must be an error, not a wait: after a collecting fence the
        // PMIx server holds every rank's data, so PMIX_IMMEDIATE (answer from what the server
        // has, do not wait for the key to appear) is exact; PMIX_TIMEOUT bounds the rest.
        pmix_info_t info[2];
        bool immediate = true;
        int timeout = timeout_s_;
        PMIX_INFO_CONSTRUCT(&info[0]);
        PMIX_INFO_CONSTRUCT(&info[1]);
        PMIX_INFO_LOAD(&info[0], PMIX_IMMEDIATE, &immediate, PMIX_BOOL);
        PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
        pmix_value_t *v = nullptr;
        std::lock_guard<std::mutex> g(mu_);
        pmix_status_t st = PMIx_Get(&proc, k.c_str(), info, 2, &v);
        PMIX_INFO_DESTRUCT(&info[0]);
        PMIX_INFO_DESTRUCT(&info[1]);
        if (st != PMIX_SUCCESS)
            return fail(WEFT_ERR_BOOTSTRAP, "bootstrap get of '%s' from rank %d through PMIx failed: %s%s", k.c_str(),
                        rank, PMIx_Error_string(st),
                        st == PMIX_ERR_NOT_FOUND || st == PMIX_ERR_TIMEOUT ? " (not put, or read before a fence)" : "");
        int rc = WEFT_SUCCESS;
        if (v == nullptr || v->type != PMIX_BYTE_OBJECT)
            rc = fail(WEFT_ERR_BOOTSTRAP,
                      "bootstrap get of '%s' from rank %d: PMIx value has type %d, not a byte "
                      "object (put by another program?)",
                      k.c_str(), rank, v ? static_cast<int>(v->type) : -1);
        else
            value.assign(v->data.bo.bytes ? v->data.bo.bytes : "", v->data.bo.size);
        if (v) PMIX_VALUE_RELEASE(v);
        return rc;
    }

    void abort(int code, std::string_view message) override {
        std::string m(message);
        PMIx_Abort(code, m.empty() ? "weft_abort" : m.c_str(), nullptr, 0);
        ::_exit(code);  // PMIx_Abort returned: the launcher did not end us
    }

    int finalize() override {
        std::lock_guard<std::mutex> g(mu_);
        if (finalized_) return WEFT_SUCCESS;
        finalized_ = true;
        pmix_status_t st = PMIx_Finalize(nullptr, 0);
        if (st != PMIX_SUCCESS) return fail(WEFT_ERR_BOOTSTRAP, "PMIx_Finalize failed: %s", PMIx_Error_string(st));
        return WEFT_SUCCESS;
    }

  private:
    // PMIx keys are NUL-terminated strings of at most PMIX_MAX_KEYLEN characters.
    static int make_key(std::string_view key, std::string &out) {
        if (key.empty() || key.size() > PMIX_MAX_KEYLEN)
            return fail(WEFT_ERR_ARG, "bootstrap key '%.*s': PMIx keys are 1 to %d characters",
                        static_cast<int>(key.size()), key.data(), PMIX_MAX_KEYLEN);
        out.assign(key);
        return WEFT_SUCCESS;
    }

    std::mutex mu_;
    pmix_proc_t me_;
    int size_, timeout_s_;
    bool finalized_ = false;
};

}  // namespace

int bootstrap_pmix_open(std::unique_ptr<bootstrap> &out) {
    int timeout_s;
    std::string why;
    if (!kvs::timeout_from_env(timeout_s, why)) return fail(WEFT_ERR_BOOTSTRAP, "%s", why.c_str());
    pmix_proc_t me;
    PMIX_PROC_CONSTRUCT(&me);
    pmix_status_t st = PMIx_Init(&me, nullptr, 0);
    if (st != PMIX_SUCCESS)
        return fail(WEFT_ERR_BOOTSTRAP,
                    "PMIx_Init failed: %s (PMIX_RANK and PMIX_NAMESPACE are set, so a PMIx "
                    "launcher was expected; unset them to run without it)",
                    PMIx_Error_string(st));
    pmix_proc_t wild;
    PMIX_PROC_CONSTRUCT(&wild);
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = nullptr;
    st = PMIx_Get(&wild, PMIX_JOB_SIZE, nullptr, 0, &v);
    long size = -1;
    if (st == PMIX_SUCCESS && v != nullptr) {
        if (v->type == PMIX_UINT32)
            size = v->data.uint32;
        else if (v->type == PMIX_INT)
            size = v->data.integer;
        else if (v->type == PMIX_UINT)
            size = v->data.uint;
    }
    if (v) PMIX_VALUE_RELEASE(v);
    if (size < 1 || me.rank >= static_cast<pmix_rank_t>(size)) {
        PMIx_Finalize(nullptr, 0);
        return fail(WEFT_ERR_BOOTSTRAP, "PMIx gave no usable job size (PMIX_JOB_SIZE: %s, rank %u)",
                    st == PMIX_SUCCESS ? "bad value" : PMIx_Error_string(st), me.rank);
    }
    out = std::make_unique<pmix_bootstrap>(me, static_cast<int>(size), timeout_s);
    return WEFT_SUCCESS;
}

}  // namespace weft
#endif  // WEFT_HAVE_PMIX
