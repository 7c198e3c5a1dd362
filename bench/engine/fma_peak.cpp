// fma_peak — this machine's single-core f32 FMA peak, the yardstick of bench/engine/run.sh's GFLOP/s:
// 16 independent chains of vector FMAs (enough to cover the latency on every core here), widest vector
// the compiler targets (bench/engine/run.sh builds it with -march=native).
#include <chrono>
#include <cstdio>

#if defined(__AVX512F__)
#include <immintrin.h>
using V = __m512;
static V fma(V a, V b, V c) {
    return _mm512_fmadd_ps(a, b, c);
}
static V set1(float x) {
    return _mm512_set1_ps(x);
}
static float first(V v) {
    return _mm512_cvtss_f32(v);
}
static const char* kIsa = "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
using V = __m256;
static V fma(V a, V b, V c) {
    return _mm256_fmadd_ps(a, b, c);
}
static V set1(float x) {
    return _mm256_set1_ps(x);
}
static float first(V v) {
    return _mm256_cvtss_f32(v);
}
static const char* kIsa = "avx2";
#elif defined(__aarch64__)
#include <arm_neon.h>
using V = float32x4_t;
static V fma(V a, V b, V c) {
    return vfmaq_f32(c, a, b);
}
static V set1(float x) {
    return vdupq_n_f32(x);
}
static float first(V v) {
    return vgetq_lane_f32(v, 0);
}
static const char* kIsa = "neon";
#endif

int main() {
    V acc[16];
    for (int i = 0; i < 16; ++i) acc[i] = set1(1.0f + static_cast<float>(i) * 1e-7f);
    const V b = set1(0.9999999f), c = set1(1e-7f);
    const long iterations = 50000000;
    const auto t0 = std::chrono::steady_clock::now();
    for (long k = 0; k < iterations; ++k) {
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) acc[i] = fma(acc[i], b, c);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    float sum = 0;
    for (int i = 0; i < 16; ++i) sum += first(acc[i]);
    const double flops = static_cast<double>(iterations) * 16 * (sizeof(V) / 4) * 2;
    std::printf("{\"isa\":\"%s\",\"gflops\":%.1f,\"check\":%g}\n", kIsa, flops / s / 1e9, sum);
}
