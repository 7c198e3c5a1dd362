// scan.cpp — scalar reference kernels and the run-time choice among the kernel tables.
#include <atomic>

#include "fv_kernels.hpp"
#include "kes/cpu_dispatch.hpp"
#include "kestrel/tensor.h"

namespace kes {
namespace fv {
namespace {

void dot_f32(const float* q, const float* x, size_t dim, size_t n, float* out) {
    for (size_t j = 0; j < n; ++j, x += dim) {
        float s = 0.f;
        for (size_t i = 0; i < dim; ++i) s += q[i] * x[i];
        out[j] = s;
    }
}

void l2_f32(const float* q, const float* x, size_t dim, size_t n, float* out) {
    for (size_t j = 0; j < n; ++j, x += dim) {
        float s = 0.f;
        for (size_t i = 0; i < dim; ++i) {
            const float d = q[i] - x[i];
            s += d * d;
        }
        out[j] = s;
    }
}

void dot_f16(const float* q, const uint16_t* x, size_t dim, size_t n, float* out) {
    for (size_t j = 0; j < n; ++j, x += dim) {
        float s = 0.f;
        for (size_t i = 0; i < dim; ++i) s += q[i] * kes_fp16_to_float(x[i]);
        out[j] = s;
    }
}

void l2_f16(const float* q, const uint16_t* x, size_t dim, size_t n, float* out) {
    for (size_t j = 0; j < n; ++j, x += dim) {
        float s = 0.f;
        for (size_t i = 0; i < dim; ++i) {
            const float d = q[i] - kes_fp16_to_float(x[i]);
            s += d * d;
        }
        out[j] = s;
    }
}

void dot_i8(const float* q, const int8_t* x, const float* scale, size_t dim, size_t n, float* out) {
    for (size_t j = 0; j < n; ++j, x += dim) {
        // The scale is applied once per vector, not per element: same value, dim fewer multiplies.
        float s = 0.f;
        for (size_t i = 0; i < dim; ++i) s += q[i] * static_cast<float>(x[i]);
        out[j] = s * scale[j];
    }
}

void l2_i8(const float* q, const int8_t* x, const float* scale, size_t dim, size_t n, float* out) {
    for (size_t j = 0; j < n; ++j, x += dim) {
        const float sc = scale[j];
        float s = 0.f;
        for (size_t i = 0; i < dim; ++i) {
            const float d = q[i] - static_cast<float>(x[i]) * sc;
            s += d * d;
        }
        out[j] = s;
    }
}

// No register blocking here: four single-query calls (same results by construction).
void dot4_f32(const float* const* q, const float* x, size_t dim, size_t n, float* const* out) {
    for (int j = 0; j < 4; ++j) dot_f32(q[j], x, dim, n, out[j]);
}
void dot4_f16(const float* const* q, const uint16_t* x, size_t dim, size_t n, float* const* out) {
    for (int j = 0; j < 4; ++j) dot_f16(q[j], x, dim, n, out[j]);
}
void dot4_i8(const float* const* q, const int8_t* x, const float* scale, size_t dim, size_t n, float* const* out) {
    for (int j = 0; j < 4; ++j) dot_i8(q[j], x, scale, dim, n, out[j]);
}

void adc_pq32(const float* table, const uint8_t* codes, size_t n, float* out) {
    for (size_t j = 0; j < n; ++j, codes += 32) {
        float s = 0.f;
        for (size_t m = 0; m < 32; ++m) s += table[m * 256 + codes[m]];
        out[j] = s;
    }
}

const Kernels kScalar = {"scalar", dot_f32,  l2_f32,   dot_f16, l2_f16,  dot_i8,
                         l2_i8,    dot4_f32, dot4_f16, dot4_i8, adc_pq32};

const Kernels& pick() {
    if (const Kernels* k = kernels_avx512()) return *k;
    if (const Kernels* k = kernels_avx2()) return *k;
    if (const Kernels* k = kernels_neon()) return *k;
    return kScalar;
}

std::atomic<const Kernels*> g_override{nullptr};

}  // namespace

const Kernels& kernels_scalar() {
    return kScalar;
}

const Kernels& kernels_active() {
    if (const Kernels* k = g_override.load(std::memory_order_acquire)) return *k;
    static const Kernels& chosen = pick();
    return chosen;
}

std::vector<const Kernels*> kernels_available() {
    std::vector<const Kernels*> all{&kScalar};
    for (const Kernels* k : {kernels_avx2(), kernels_avx512(), kernels_neon()})
        if (k) all.push_back(k);
    return all;
}

void kernels_override(const Kernels* k) {
    g_override.store(k, std::memory_order_release);
}

}  // namespace fv
}  // namespace kes
