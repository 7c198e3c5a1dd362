// kes-bench-gemm — the measurement behind the engine's choice of GEMM (bench/README.md, "Engine"):
// Kestrel's indirect-GEMM convolution kernel (kernels/common/conv_nhwc.cpp over the active microkernel
// table) against OpenBLAS cblas_sgemm on the 1x1 convolutions CNNs are made of, one thread each,
// same shapes, same run. OpenBLAS gets the pointwise conv as the plain GEMM Y[P,M] = X[P,C] · W[C,M]
// (its best case: no packing of X is ours to pay, the weights are already laid out for it).
//
//   kes-bench-gemm [REPEATS]
//
// Exit codes: 0 success, 1 runtime error, 2 usage error (a REPEATS that is not a whole number >= 1 is
// one: atoi read "abc" as 0 repeats, a table of 1e30 ms and exit 0).
#include <cblas.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/microkernels.hpp"
#include "kernels/select.hpp"
#include "kestrel/memory.h"
#include "op.hpp"

extern "C" void openblas_set_num_threads(int);

namespace {

const char kUsage[] =
    "usage: kes-bench-gemm [REPEATS]\n"
    "  REPEATS  timed runs per case and implementation, the best one reported (default 30, at most 100000)\n";

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "kes-bench-gemm: %s\n%s", message.c_str(), kUsage);
    std::exit(2);
}

int parse_repeats(const char* text) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 || v < 1 || v > 100000)
        usage_error(std::string("REPEATS takes a whole number in [1, 100000], not '") + text + "'");
    return static_cast<int>(v);
}

template <class F>
double best_ms(int repeats, F&& f) {
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    if (argc > 1 && argv[1][0] == '-') usage_error(std::string("unknown option '") + argv[1] + "'");
    if (argc > 2) usage_error(std::string("too many arguments ('") + argv[2] + "')");
    const int repeats = argc > 1 ? parse_repeats(argv[1]) : 30;
    openblas_set_num_threads(1);
    struct Case {
        int64_t h, w, c, m;
    } cases[] = {{128, 128, 24, 24}, {64, 64, 48, 48}, {56, 56, 64, 128}, {28, 28, 128, 128},
                 {14, 14, 256, 256}, {7, 7, 512, 512}, {112, 112, 32, 64}};
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(-1, 1);
    std::printf("microkernel table: %s; 1 thread; best of %d\n", kes::kernel_set_name(), repeats);
    std::printf("%-22s %10s %10s %10s %10s %8s\n", "1x1 conv (HxWxC->M)", "kestrel ms", "GFLOP/s", "openblas ms",
                "GFLOP/s", "ratio");
    for (const Case& cs : cases) {
        const int64_t p = cs.h * cs.w;
        std::vector<float> x(static_cast<size_t>(p * cs.c)), w(static_cast<size_t>(cs.m * cs.c)), bias(cs.m, 0.0f);
        std::vector<float> y(static_cast<size_t>(p * cs.m)), wt(w.size());
        for (float& v : x) v = d(rng);
        for (float& v : w) v = d(rng);
        for (int64_t i = 0; i < cs.m; ++i)
            for (int64_t k = 0; k < cs.c; ++k)
                wt[static_cast<size_t>(k * cs.m + i)] = w[static_cast<size_t>(i * cs.c + k)];
        kes::TensorDesc dx, dw, db;
        dx.shape = {1, cs.h, cs.w, cs.c};
        dw.shape = {cs.m, 1, 1, cs.c};
        dw.data = w.data();
        db.shape = {cs.m};
        db.data = bias.data();
        kes::Attrs attrs;
        attrs.set_string("data_layout", "NHWC");
        const std::string name = "conv", op = "Conv";
        kes::NodeDesc node{name, op, attrs, {&dx, &dw, &db}, 1};
        std::vector<kes::TensorDesc> outs;
        kes::create_kernel(*kes::find_op(op), node, outs);
        std::unique_ptr<kes::Kernel> k = kes::select_kernel(node, outs);
        if (!k) {
            std::fprintf(stderr, "no fast kernel for the case\n");
            return 1;
        }
        void *packed = nullptr, *scratch = nullptr;
        kes_mem_alloc(KES_MEM_HOST, std::max<size_t>(128, k->packed_bytes()), &packed);
        kes_mem_alloc(KES_MEM_HOST, std::max<size_t>(128, k->scratch_bytes(1)), &scratch);
        k->pack(packed);
        k->bind_packed(packed);
        kes::RunContext rc;
        rc.scratch = static_cast<uint8_t*>(scratch);
        const void* in[] = {x.data(), w.data(), bias.data()};
        void* out[] = {y.data()};
        const double ours = best_ms(repeats, [&] { k->run(rc, in, out); });
        const double blas = best_ms(repeats, [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(p), static_cast<int>(cs.m),
                        static_cast<int>(cs.c), 1.0f, x.data(), static_cast<int>(cs.c), wt.data(),
                        static_cast<int>(cs.m), 0.0f, y.data(), static_cast<int>(cs.m));
        });
        const double gflop = 2.0 * static_cast<double>(p * cs.c * cs.m) / 1e9;
        char label[64];
        std::snprintf(label, sizeof label, "%lldx%lldx%lld->%lld", static_cast<long long>(cs.h),
                      static_cast<long long>(cs.w), static_cast<long long>(cs.c), static_cast<long long>(cs.m));
        std::printf("%-22s %10.4f %10.1f %10.4f %10.1f %8.2f\n", label, ours, gflop / ours * 1e3, blas,
                    gflop / blas * 1e3, ours / blas);
        kes_mem_free(packed);
        kes_mem_free(scratch);
    }
    return 0;
}
