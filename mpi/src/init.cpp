// Environment: init, finalize, thread level, version, time, abort (MPI 4.0 chapter 11).
#include <pthread.h>
#include <stdarg.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "attr.hpp"
#include "bsend.hpp"
#include "handles.hpp"

using namespace weft_mpi;

namespace {
pthread_t main_thread;

// MPI requires MPI_ERRORS_ARE_FATAL on the predefined communicators (Weft's default is
// WEFT_ERRORS_RETURN); communicators made from them inherit it.
int after_init(int rc) {
    if (rc != WEFT_SUCCESS) {
        // MPI_Init's errors go to MPI_ERRORS_ARE_FATAL, as every MPI library does.
        char text[WEFT_MAX_ERROR_STRING], detail[WEFT_MAX_ERROR_STRING];
        size_t n;
        weft_error_string(rc, text, &n);
        weft_error_detail(detail, &n);
        std::fprintf(stderr, "MPI_Init (Weft): %s%s%s\n", text, n ? ": " : "", detail);
        std::exit(1);
    }
    main_thread = pthread_self();
    weft_comm_set_errhandler(WEFT_COMM_WORLD, WEFT_ERRORS_ARE_FATAL);
    weft_comm_set_errhandler(WEFT_COMM_SELF, WEFT_ERRORS_ARE_FATAL);
    return MPI_SUCCESS;
}
}  // namespace

// Tells libweft that the MPI_Initialized in this process is Weft's own (this front end), not
// another MPI library that would share the launcher's PMI connection (docs/coexistence.md).
extern "C" __attribute__((visibility("default"))) const int weft_mpi_front_end = 1;

extern "C" int PMPI_Init(int *argc, char ***argv) { return after_init(weft_init(argc, argv)); }

extern "C" int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    return after_init(weft_init_thread(argc, argv, required, provided));
}

// As MPI says, MPI_COMM_SELF's attributes are deleted first (their delete callbacks are a
// program's last chance to run MPI calls); MPI_COMM_WORLD's next, as MPICH does.
extern "C" int PMPI_Finalize(void) {
    if (int rc = attr_delete_all(MPI_COMM_SELF)) return rc;
    if (int rc = attr_delete_all(MPI_COMM_WORLD)) return rc;
    if (int rc = bsend_finalize()) return rc;  // buffered sends still in flight
    return merr(weft_finalize());
}
extern "C" int PMPI_Initialized(int *flag) { return merr(weft_initialized(flag)); }
extern "C" int PMPI_Finalized(int *flag) { return merr(weft_finalized(flag)); }
extern "C" int PMPI_Query_thread(int *provided) { return merr(weft_query_thread(provided)); }

extern "C" int PMPI_Is_thread_main(int *flag) {
    int init = 0;
    weft_initialized(&init);
    if (!init) return merr(WEFT_ERR_NOT_INITIALIZED);
    if (flag == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Is_thread_main: flag is NULL");
    *flag = pthread_equal(pthread_self(), main_thread) ? 1 : 0;
    return MPI_SUCCESS;
}

extern "C" int PMPI_Abort(MPI_Comm comm, int errorcode) { return merr(weft_abort(wcomm(comm), errorcode)); }
extern "C" double PMPI_Wtime(void) { return weft_wtime(); }
extern "C" double PMPI_Wtick(void) { return weft_wtick(); }

extern "C" int PMPI_Get_processor_name(char *name, int *resultlen) {
    if (name == nullptr || resultlen == nullptr)
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Get_processor_name: name and resultlen must not be NULL");
    char full[WEFT_MAX_PROCESSOR_NAME];
    size_t n = 0;
    if (int rc = weft_get_processor_name(full, &n)) return merr(rc);
    if (n > MPI_MAX_PROCESSOR_NAME - 1) n = MPI_MAX_PROCESSOR_NAME - 1;  // MPI's buffer is smaller
    std::memcpy(name, full, n);
    name[n] = '\0';
    *resultlen = static_cast<int>(n);
    return MPI_SUCCESS;
}

extern "C" int PMPI_Get_version(int *version, int *subversion) {
    if (version == nullptr || subversion == nullptr)
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Get_version: version and subversion must not be NULL");
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

extern "C" int PMPI_Get_library_version(char *version, int *resultlen) {
    if (version == nullptr || resultlen == nullptr)
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Get_library_version: version and resultlen must not be NULL");
    // Once initialized: the fabric and bootstrap in use ("fabric=ucx bootstrap=weftrun").
    char runtime[256] = "";
    int init = 0, fin = 0;
    weft_initialized(&init);
    weft_finalized(&fin);
    weft_info info;
    if (init && !fin && weft_get_runtime_info(&info) == WEFT_SUCCESS) {
        size_t used = 0;
        for (const char *key : {"fabric", "bootstrap"}) {
            int flag = 0;
            char value[96];
            if (weft_info_get(info, key, sizeof value - 1, value, &flag) == WEFT_SUCCESS && flag)
                used += static_cast<size_t>(
                    std::snprintf(runtime + used, sizeof runtime - used, "%s%s=%s", used ? " " : ": ", key, value));
        }
        weft_info_free(&info);
    }
    int n =
        std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "Weft %d.%d.%d MPI front end (MPI %d.%d, MPICH ABI)%s",
                      WEFT_VERSION_MAJOR, WEFT_VERSION_MINOR, WEFT_VERSION_PATCH, MPI_VERSION, MPI_SUBVERSION, runtime);
    *resultlen = n;
    return MPI_SUCCESS;
}

// Profiling control: MPI defines no effect of its own (a profiling library's MPI_Pcontrol
// wrapper gives it one).
extern "C" int PMPI_Pcontrol(const int, ...) { return MPI_SUCCESS; }

extern "C" int PMPI_Get_address(const void *location, MPI_Aint *address) {
    if (address == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Get_address: address is NULL");
    *address = reinterpret_cast<MPI_Aint>(location);
    return MPI_SUCCESS;
}
extern "C" MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
    return static_cast<MPI_Aint>(static_cast<unsigned long>(base) + static_cast<unsigned long>(disp));
}
extern "C" MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
    return static_cast<MPI_Aint>(static_cast<unsigned long>(addr1) - static_cast<unsigned long>(addr2));
}

// Memory for communication: Weft's fabrics register memory themselves, so it needs no
// registration, but a buffer of a page or more starts on a page (a smaller one on a cache
// line).  malloc's 16 bytes past the page start made a 64 KiB message over UCX shared memory
// (a CMA copy) 1.12x slower (bench/README.md, "Why the reply pattern matters").  Info hints,
// which MPI lets an implementation ignore, are not read.
extern "C" int PMPI_Alloc_mem(MPI_Aint size, MPI_Info, void *baseptr) {
    if (size < 0 || baseptr == nullptr)
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Alloc_mem: negative size or NULL baseptr");
    static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t bytes = size > 0 ? static_cast<size_t>(size) : 1;
    void *p = nullptr;
    if (posix_memalign(&p, bytes >= page ? page : 64, bytes) != 0) p = nullptr;
    if (p == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_NO_MEM, "MPI_Alloc_mem: %ld bytes not available", size);
    *static_cast<void **>(baseptr) = p;
    return MPI_SUCCESS;
}
extern "C" int PMPI_Free_mem(void *base) {
    std::free(base);
    return MPI_SUCCESS;
}

// GPU buffers: Weft's fabrics take host memory in point-to-point and collective calls; device
// memory goes through the enqueue calls (MPIX_*_enqueue on a stream communicator with a GPU
// queue), which stage it.  So, in MPICH's sense (may a communication call take a device
// pointer?), no runtime is supported.
extern "C" int PMPIX_Query_cuda_support(void) { return 0; }
extern "C" int PMPIX_Query_hip_support(void) { return 0; }
extern "C" int PMPIX_Query_ze_support(void) { return 0; }
extern "C" int PMPIX_GPU_query_support(int gpu_type, int *is_supported) {
    if (is_supported == nullptr)
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPIX_GPU_query_support: is_supported is NULL");
    if (gpu_type != MPIX_GPU_SUPPORT_CUDA && gpu_type != MPIX_GPU_SUPPORT_ZE && gpu_type != MPIX_GPU_SUPPORT_HIP)
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPIX_GPU_query_support: unknown gpu_type %d", gpu_type);
    *is_supported = 0;
    return MPI_SUCCESS;
}

#define WEFT_MPI_FAMILY_init 1
#include "alias.hpp"
