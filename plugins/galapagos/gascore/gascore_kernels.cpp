/* The hardware kernels the model can host: idle (the GAScore alone), echo, and the hardware
 * twin of examples/jacobi.c's run_kernel. */
#include "gascore_kernels.hpp"

#include <stdexcept>
#include <vector>

#include "gal_wire.hpp"
#include "gascore_context.hpp"

namespace gascore {

namespace {

/* echo: every Medium goes back to its source as a FIFO Medium with the same handler, and the
 * kernel waits for that message's automatic reply before taking the next one. */
void run_echo(kernel_context &ctx) {
    kernel_header h;
    std::vector<uint8_t> payload;
    while (ctx.recv_medium(h, payload)) {
        ctx.send_medium(h.src, h.handler, nullptr, 0, payload.data(), payload.size(), false);
        ctx.wait_mem(1);
    }
}

/* ---- jacobi: the same problem, decomposition, layout and arithmetic as examples/jacobi.c. */

constexpr double top_edge_value = 1.0;
constexpr size_t default_max_long = 8192;
/* The largest Long payload one Galapagos packet carries (header, token, address words). */
constexpr size_t packet_max_long = (gal::max_packet_flits - 3) * gal::flit_bytes;

struct problem {
    size_t n = 0;
    long iters = 0;
    int nkernels = 0;
    size_t max_rows = 0;
    size_t seg_size = 0;
    size_t max_long = 0;
};

bool parse_number(const std::map<std::string, std::string> &params, const char *key, const char *def,
                  unsigned long long min, unsigned long long max, unsigned long long &out, std::string &why) {
    auto it = params.find(key);
    const std::string text = it != params.end() ? it->second : def ? def : "";
    if (text.empty()) {
        why = std::string("needs --param ") + key + "=...";
        return false;
    }
    size_t used = 0;
    unsigned long long v = 0;
    try {
        v = std::stoull(text, &used, 10);
    } catch (const std::exception &) {
        used = 0;
    }
    if (used != text.size() || text[0] == '-' || v < min || v > max) {
        why = std::string("--param ") + key + "=" + text + ": expected an integer in " + std::to_string(min) + ".." +
            std::to_string(max);
        return false;
    }
    out = v;
    return true;
}

bool parse_problem(const std::map<std::string, std::string> &params, problem &p, std::string &why) {
    unsigned long long n, iters, kernels, max_long;
    if (!parse_number(params, "n", nullptr, 3, 1u << 20, n, why) ||
        !parse_number(params, "iters", nullptr, 0, 1ull << 40, iters, why) ||
        !parse_number(params, "kernels", nullptr, 1, 256, kernels, why) ||
        !parse_number(params, "max_long", std::to_string(default_max_long).c_str(), 1, packet_max_long, max_long, why))
        return false;
    if (n < kernels) {
        why = "n = " + std::to_string(n) + " is smaller than the " + std::to_string(kernels) + " kernels";
        return false;
    }
    p.n = size_t(n);
    p.iters = long(iters);
    p.nkernels = int(kernels);
    p.max_long = size_t(max_long);
    /* As jacobi.c's main computes them. */
    p.max_rows = (p.n + size_t(p.nkernels) - 1) / size_t(p.nkernels);
    p.seg_size = 2 * (p.max_rows + 2) * p.n * sizeof(double);
    return true;
}

size_t block_rows(const problem &p, int k) {
    size_t base = p.n / size_t(p.nkernels), extra = p.n % size_t(p.nkernels);
    return base + (size_t(k) < extra ? 1 : 0);
}

size_t first_row(const problem &p, int k) {
    size_t base = p.n / size_t(p.nkernels), extra = p.n % size_t(p.nkernels);
    size_t uk = size_t(k);
    return uk * base + (uk < extra ? uk : extra);
}

size_t row_offset(const problem &p, int b, size_t i) {
    return (size_t(b) * (p.max_rows + 2) + i) * p.n * sizeof(double);
}

/* jacobi.c's relax_rows, character for character in the arithmetic. */
void relax_rows(const double *in, double *out, size_t n, size_t row_lo, size_t row_hi) {
    for (size_t i = row_lo; i <= row_hi; i++)
        for (size_t j = 1; j + 1 < n; j++)
            out[i * n + j] = 0.25 * (in[(i - 1) * n + j] + in[(i + 1) * n + j] + in[i * n + j - 1] + in[i * n + j + 1]);
}

double initial_value(size_t n, size_t row, size_t col) {
    if (row == 0) return top_edge_value;
    if (row == n - 1 || col == 0 || col == n - 1) return 0.0;
    return double((row * 131 + col * 71) % 97) / 97.0;
}

size_t send_rows(kernel_context &ctx, const problem &p, int dst, size_t src_offset, size_t dst_offset, size_t bytes) {
    size_t sent = 0;
    for (size_t done = 0; done < bytes; done += p.max_long, sent++) {
        size_t len = bytes - done < p.max_long ? bytes - done : p.max_long;
        if (!ctx.send_long_mem(uint16_t(dst), H_EMPTY, nullptr, 0, src_offset + done, len, dst_offset + done, false))
            throw std::runtime_error("a halo send was refused");
    }
    return sent;
}

void exchange_halos(kernel_context &ctx, const problem &p, int me, int b) {
    size_t rows = block_rows(p, me), row_bytes = p.n * sizeof(double), messages = 0;
    if (me > 0) /* my first row -> upper neighbour's bottom halo */
        messages +=
            send_rows(ctx, p, me - 1, row_offset(p, b, 1), row_offset(p, b, block_rows(p, me - 1) + 1), row_bytes);
    if (me < p.nkernels - 1) /* my last row -> lower neighbour's top halo */
        messages += send_rows(ctx, p, me + 1, row_offset(p, b, rows), row_offset(p, b, 0), row_bytes);
    if (messages > 0) ctx.wait_mem(messages);
    ctx.barrier(p.nkernels);
}

bool check_jacobi(const std::map<std::string, std::string> &params, int kernel_id, size_t memory_size,
                  std::string &why) {
    problem p;
    if (!parse_problem(params, p, why)) return false;
    if (kernel_id == 0) {
        why = "kernel 0 is the software kernel that gathers and checks the grid";
        return false;
    }
    if (kernel_id >= p.nkernels) {
        why = "kernel id " + std::to_string(kernel_id) + " is not below kernels=" + std::to_string(p.nkernels);
        return false;
    }
    if (memory_size < p.seg_size) {
        why =
            "needs a segment of " + std::to_string(p.seg_size) + " bytes, --segment is " + std::to_string(memory_size);
        return false;
    }
    return true;
}

/* run_kernel of jacobi.c for one block; kernel 0 (software) gathers the result with Long gets
 * that the GAScore answers while this kernel waits in the last barrier. */
void run_jacobi(kernel_context &ctx) {
    problem p;
    std::string why;
    if (!parse_problem(ctx.params(), p, why)) /* checked at start-up; kept for safety */
        throw std::runtime_error(why);
    const int me = ctx.id();
    uint8_t *base = ctx.memory();
    size_t n = p.n, rows = block_rows(p, me), first = first_row(p, me);

    /* Owned rows of both buffers get the initial values; halos come from the first exchange. */
    for (int b = 0; b < 2; b++) {
        double *block = reinterpret_cast<double *>(base + row_offset(p, b, 0));
        for (size_t i = 1; i <= rows; i++)
            for (size_t j = 0; j < n; j++) block[i * n + j] = initial_value(n, first + i - 1, j);
    }
    int cur = 0;
    exchange_halos(ctx, p, me, cur);

    size_t lo = first == 0 ? 2 : 1;
    size_t hi = first + rows == n ? rows - 1 : rows;
    for (long t = 0; t < p.iters; t++) {
        const double *in = reinterpret_cast<const double *>(base + row_offset(p, cur, 0));
        double *out = reinterpret_cast<double *>(base + row_offset(p, 1 - cur, 0));
        if (lo <= hi) relax_rows(in, out, n, lo, hi);
        exchange_halos(ctx, p, me, 1 - cur);
        cur = 1 - cur;
    }
    /* Kernel 0 gathers while this kernel waits here. */
    ctx.barrier(p.nkernels);
}

const kernel_function functions[] = {
    {"idle", false, nullptr, nullptr},
    {"echo", true, run_echo, nullptr},
    {"jacobi", false, run_jacobi, check_jacobi},
};

}  // namespace

const kernel_function *find_kernel_function(const std::string &name) {
    for (const kernel_function &f : functions)
        if (name == f.name) return &f;
    return nullptr;
}

std::string kernel_function_names() {
    std::string names;
    for (const kernel_function &f : functions) names += (names.empty() ? "" : ", ") + std::string(f.name);
    return names;
}

}  // namespace gascore
