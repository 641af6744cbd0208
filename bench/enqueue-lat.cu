/* weft-enqueue-lat: round-trip latency of 8-byte messages enqueued on a cudaStream_t, between
 * two processes on one GPU (both use device 0).
 *
 * Rank 0 puts weft_send_enqueue then weft_recv_enqueue on its stream, ITERS times; rank 1 puts
 * recv_enqueue then send_enqueue (the echo).  Nothing waits on the host until one
 * cudaStreamSynchronize at the end.  A CUDA event recorded after every round trip times each
 * one on the GPU's timeline; the line printed gives their median, mean, min and 99th percentile,
 * and the host's wall-clock time per round trip.  WEFT_ENQUEUE (memops or hostfn) picks how the
 * queue and Weft's progress thread meet; it is printed as "mechanism".
 *
 *   weftrun -n 2 weft-enqueue-lat [-i ITERS] [-w WARMUP] [-d | -P] [-p]
 *
 * Without a usable CUDA device it prints why and exits 77.  A benchmark, not a test: it prints
 * numbers and judges nothing (beyond checking that the echo came back). */
#include <cuda_runtime.h>
#include <getopt.h>

#include <algorithm>
#include <vector>

#include "bench_common.h"

#define TAG_PING 1
#define TAG_PONG 2

enum buffer_kind { BUF_HOST, BUF_PINNED, BUF_DEVICE };
static const char *const buffer_names[] = {"host", "pinned", "device"};

static void usage(FILE *f, const char *prog) {
    fprintf(f,
            "Usage: weftrun -n 2 %s [options]\n"
            "Round trip of an 8-byte weft_send_enqueue/weft_recv_enqueue between 2 processes\n"
            "on CUDA device 0; per-round-trip times from CUDA events on the stream.\n"
            "\n"
            "  -i, --iters N     timed round trips (default 1000)\n"
            "  -w, --warmup N    untimed round trips first (default 100)\n"
            "  -d, --device      message buffer in device memory (default: pageable host memory)\n"
            "  -P, --pinned      message buffer in pinned host memory (cudaMallocHost)\n"
            "  -p, --pin         pin rank r to the r-th CPU of the inherited affinity mask\n"
            "  -h, --help        this text\n"
            "\n"
            "Environment: WEFT_ENQUEUE=memops|hostfn (printed as mechanism).\n"
            "Exit status 77 when no CUDA device can be used.\n",
            prog);
}

#define CUDA_CHECK(call)                                                                                        \
    do {                                                                                                        \
        cudaError_t cuda_rc_ = (call);                                                                          \
        if (cuda_rc_ != cudaSuccess) {                                                                          \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(cuda_rc_)); \
            weft_abort(WEFT_COMM_WORLD, 1);                                                                     \
            exit(1);                                                                                            \
        }                                                                                                       \
    } while (0)

/* Why device 0 cannot be used here, or "" when it can. */
static void device_problem(char *why, size_t cap) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    why[0] = '\0';
    if (e != cudaSuccess) {
        snprintf(why, cap, "no CUDA device: cudaGetDeviceCount: %s", cudaGetErrorString(e));
    } else if (n == 0) {
        snprintf(why, cap, "no CUDA device: cudaGetDeviceCount found 0 devices");
    } else {
        e = cudaSetDevice(0);
        if (e == cudaSuccess) e = cudaFree(nullptr); /* the context now, not in the timed loop */
        if (e != cudaSuccess) snprintf(why, cap, "CUDA device 0 unusable: %s", cudaGetErrorString(e));
    }
}

/* count round trips on the stream cs; with events, events[i + 1] is recorded after the i-th. */
static void round_trips(int rank, void *buf, weft_comm comm, cudaStream_t cs, long count, cudaEvent_t *events) {
    for (long i = 0; i < count; i++) {
        if (rank == 0) {
            BENCH_CHECK(weft_send_enqueue(buf, 8, WEFT_BYTE, 1, TAG_PING, comm));
            BENCH_CHECK(weft_recv_enqueue(buf, 8, WEFT_BYTE, 1, TAG_PONG, comm, WEFT_STATUS_IGNORE));
        } else {
            BENCH_CHECK(weft_recv_enqueue(buf, 8, WEFT_BYTE, 0, TAG_PING, comm, WEFT_STATUS_IGNORE));
            BENCH_CHECK(weft_send_enqueue(buf, 8, WEFT_BYTE, 0, TAG_PONG, comm));
        }
        if (events) CUDA_CHECK(cudaEventRecord(events[i + 1], cs));
    }
}

int main(int argc, char **argv) {
    long iters = 1000, warmup = 100;
    int kind = BUF_HOST, pin = 0, bad = 0, opt;
    static const struct option longopts[] = {{"iters", required_argument, nullptr, 'i'},
                                             {"warmup", required_argument, nullptr, 'w'},
                                             {"device", no_argument, nullptr, 'd'},
                                             {"pinned", no_argument, nullptr, 'P'},
                                             {"pin", no_argument, nullptr, 'p'},
                                             {"help", no_argument, nullptr, 'h'},
                                             {nullptr, 0, nullptr, 0}};
    while ((opt = getopt_long(argc, argv, "i:w:dPph", longopts, nullptr)) != -1) {
        switch (opt) {
            case 'i': bad |= bench_parse_long(optarg, 1, &iters); break;
            case 'w': bad |= bench_parse_long(optarg, 0, &warmup); break;
            case 'd': kind = BUF_DEVICE; break;
            case 'P': kind = BUF_PINNED; break;
            case 'p': pin = 1; break;
            case 'h': usage(stdout, argv[0]); return 0;
            default: bad = 1; break;
        }
    }
    if (bad || optind != argc) {
        usage(stderr, argv[0]);
        return 2;
    }

    BENCH_CHECK(weft_init(&argc, &argv));
    int rank = -1, size = -1;
    BENCH_CHECK(weft_comm_rank(WEFT_COMM_WORLD, &rank));
    BENCH_CHECK(weft_comm_size(WEFT_COMM_WORLD, &size));
    if (bench_need_two_ranks(rank, size, "weft-enqueue-lat")) {
        weft_finalize();
        return 1;
    }
    if (pin) bench_pin(rank);

    /* Both processes run or both stop: a lone process would wait for its peer forever. */
    char why[256];
    device_problem(why, sizeof why);
    int ok = why[0] == '\0', all_ok = 0;
    BENCH_CHECK(weft_allreduce(&ok, &all_ok, 1, WEFT_INT, WEFT_MIN, WEFT_COMM_WORLD));
    if (!all_ok) {
        if (!ok || rank == 0)
            printf("weft-enqueue-lat: rank %d: %s\n", rank, ok ? "the other process has no usable CUDA device" : why);
        fflush(stdout);
        BENCH_CHECK(weft_finalize());
        return 77;
    }

    const char *mech = getenv("WEFT_ENQUEUE");
    if (mech == nullptr || mech[0] == '\0') mech = "memops(default)";
    char fabric[64];
    bench_fabric_name(fabric, sizeof fabric);

    cudaStream_t cs;
    CUDA_CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    weft_info info;
    weft_stream stream = WEFT_STREAM_NULL;
    weft_comm comm = WEFT_COMM_NULL;
    BENCH_CHECK(weft_info_create(&info));
    BENCH_CHECK(weft_info_set(info, "type", "cudaStream_t"));
    BENCH_CHECK(weft_info_set_hex(info, "value", &cs, sizeof cs));
    BENCH_CHECK(weft_stream_create(info, &stream));
    BENCH_CHECK(weft_info_free(&info));
    BENCH_CHECK(weft_stream_comm_create(WEFT_COMM_WORLD, stream, &comm));

    /* Rank 0 sends a known value; rank 1 echoes what it got; rank 0 checks it at the end. */
    const uint64_t token = 0x5765667445716c61ull;
    uint64_t host_value = rank == 0 ? token : 0;
    void *buf = nullptr;
    if (kind == BUF_DEVICE) {
        CUDA_CHECK(cudaMalloc(&buf, 8));
        CUDA_CHECK(cudaMemcpy(buf, &host_value, 8, cudaMemcpyHostToDevice));
    } else if (kind == BUF_PINNED) {
        CUDA_CHECK(cudaMallocHost(&buf, 8));
        memcpy(buf, &host_value, 8);
    } else {
        buf = malloc(8);
        memcpy(buf, &host_value, 8);
    }
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<cudaEvent_t> events(iters + 1);
    for (auto &e : events) CUDA_CHECK(cudaEventCreate(&e));

    round_trips(rank, buf, comm, cs, warmup, nullptr);
    CUDA_CHECK(cudaStreamSynchronize(cs));
    BENCH_CHECK(weft_barrier(WEFT_COMM_WORLD));

    double t0 = weft_wtime();
    CUDA_CHECK(cudaEventRecord(events[0], cs));
    round_trips(rank, buf, comm, cs, iters, events.data());
    CUDA_CHECK(cudaStreamSynchronize(cs));
    double wall = weft_wtime() - t0;

    std::vector<double> us(iters);
    for (long i = 0; i < iters; i++) {
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, events[i], events[i + 1]));
        us[i] = 1000.0 * ms;
    }
    double sum = 0;
    for (double v : us) sum += v;
    std::vector<double> sorted = us;
    std::sort(sorted.begin(), sorted.end());
    double median = iters % 2 ? sorted[iters / 2] : 0.5 * (sorted[iters / 2 - 1] + sorted[iters / 2]);
    double p99 = sorted[std::min<long>(iters - 1, (long)(0.99 * (double)iters))];

    uint64_t got = 0;
    if (kind == BUF_DEVICE)
        CUDA_CHECK(cudaMemcpy(&got, buf, 8, cudaMemcpyDeviceToHost));
    else
        memcpy(&got, buf, 8);
    if (rank == 0) {
        printf(
            "weft-enqueue-lat: mechanism=%s buffer=%s bytes=8 fabric=%s iters=%ld warmup=%ld "
            "median_us=%.2f mean_us=%.2f min_us=%.2f p99_us=%.2f wall_us=%.2f echo=%s\n",
            mech, buffer_names[kind], fabric, iters, warmup, median, sum / (double)iters, sorted[0], p99,
            1e6 * wall / (double)iters, got == token ? "ok" : "WRONG");
        fflush(stdout);
    }

    for (auto &e : events) CUDA_CHECK(cudaEventDestroy(e));
    BENCH_CHECK(weft_comm_free(&comm));
    BENCH_CHECK(weft_stream_free(&stream));
    CUDA_CHECK(cudaStreamDestroy(cs));
    if (kind == BUF_DEVICE)
        CUDA_CHECK(cudaFree(buf));
    else if (kind == BUF_PINNED)
        CUDA_CHECK(cudaFreeHost(buf));
    else
        free(buf);
    BENCH_CHECK(weft_finalize());
    return rank == 0 && got != token ? 1 : 0;
}
