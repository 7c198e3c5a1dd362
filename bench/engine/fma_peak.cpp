// fma_peak — this machine's single-core f32 FMA peak, the yardstick of every GFLOP/s figure
// (bench/engine/run.sh, P10 in kes-bench): 12 independent chains of vector FMAs at the widest vector
// this CPU runs. Built for the build's baseline like everything else (no -march=native: the aarch64 and
// release builds stay portable); the width is chosen at run time with kes_cpu_has, so KES_CPU_DISABLE
// applies, each width in a function compiled for its instruction set.
//
//   kes-fma-peak     prints {"isa":"...","gflops":G} on one line
//
// Exit codes: 0 success, 2 usage error (it takes no argument; it used to ignore them all).
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "kestrel/cpu.h"

namespace {

// 12 chains of a = a · b + c over vectors of V, `iterations` times; returns GFLOP/s. Inlined into
// each ISA's function below, so the vector code is that ISA's (GCC contracts a·b + c into an FMA).
template <class V>
__attribute__((always_inline)) inline void keep(V& r) {
#if defined(__x86_64__)
    __asm__ volatile("" : "+v"(r));
#elif defined(__aarch64__)
    __asm__ volatile("" : "+w"(r));
#else
    __asm__ volatile("" : "+m"(r));
#endif
}

// One chain's step (operands by reference: a vector by value would warn of an ABI change). A function, not a lambda (a
// lambda does not inherit the caller's target ISA) and not a macro (each clang-format version reflows a statement macro
// differently).
template <class V>
__attribute__((always_inline)) inline void step(V& a, const V& b, const V& c) {
    a = a * b + c;
    keep(a);
}

template <class V>
__attribute__((always_inline)) inline double chains(long iterations) {
    constexpr int kLanes = sizeof(V) / sizeof(float);
    const V b = V{} + 0.9999999f, c = V{} + 1e-7f;
    // Twelve named chains (an array of vectors would live on the stack): more than FMA latency × pipes
    // on every core here, and with b and c they fit AVX2's 16 registers.
    V a0 = V{} + 1.0f, a1 = a0 + 1e-7f, a2 = a1 + 1e-7f, a3 = a2 + 1e-7f, a4 = a3 + 1e-7f, a5 = a4 + 1e-7f,
      a6 = a5 + 1e-7f, a7 = a6 + 1e-7f, a8 = a7 + 1e-7f, a9 = a8 + 1e-7f, a10 = a9 + 1e-7f, a11 = a10 + 1e-7f;
    const auto t0 = std::chrono::steady_clock::now();
    for (long k = 0; k < iterations; ++k) {
        // a = a·b + c in each chain (contracted into one FMA); keep() holds it in a register and the
        // loop between the two clock reads.
        step(a0, b, c), step(a1, b, c), step(a2, b, c), step(a3, b, c), step(a4, b, c), step(a5, b, c);
        step(a6, b, c), step(a7, b, c), step(a8, b, c), step(a9, b, c), step(a10, b, c), step(a11, b, c);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    V sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
    keep(sum);  // every chain's result is used, so none is optimised away
    return static_cast<double>(iterations) * 12 * kLanes * 2 / s / 1e9;
}

constexpr long kIterations = 50000000;

#if defined(__x86_64__)
typedef float F16x __attribute__((vector_size(64)));
typedef float F8x __attribute__((vector_size(32)));
__attribute__((target("avx512f"))) double peak_avx512() {
    return chains<F16x>(kIterations);
}
__attribute__((target("avx2,fma"))) double peak_avx2() {
    return chains<F8x>(kIterations);
}
#endif
typedef float F4x __attribute__((vector_size(16)));
double peak_baseline() {  // SSE2 (no FMA) or NEON (FMA is part of armv8-a)
    return chains<F4x>(kIterations);
}

const char kUsage[] =
    "usage: kes-fma-peak\n"
    "  prints this machine's single-core f32 FMA peak as one line of JSON: {\"isa\":\"...\",\"gflops\":G}\n"
    "  (KES_CPU_DISABLE narrows the vector width, as for Kestrel's kernels)\n";

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) {
        if (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
            std::fputs(kUsage, stdout);
            return 0;
        }
        std::fprintf(stderr, "kes-fma-peak: %s '%s'\n%s", argv[1][0] == '-' ? "unknown option" : "unexpected argument",
                     argv[1], kUsage);
        return 2;
    }
    const char* isa = "baseline";
    double gflops = 0;
#if defined(__x86_64__)
    if (kes_cpu_has(KES_CPU_AVX512F)) {
        isa = "avx512", gflops = peak_avx512();
    } else if (kes_cpu_has(KES_CPU_AVX2)) {
        isa = "avx2", gflops = peak_avx2();
    }
#elif defined(__aarch64__)
    isa = "neon";
#endif
    if (gflops == 0) gflops = peak_baseline();
    std::printf("{\"isa\":\"%s\",\"gflops\":%.1f}\n", isa, gflops);
}
