// CPU feature detection for run-time SIMD dispatch (cpuid + xgetbv on x86, HWCAP on aarch64).
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kes/cpu_dispatch.hpp"
#include "kes/error.hpp"
#include "kes/host_services.hpp"
#include "kes/logging.hpp"
#include "kes/math.hpp"

#if KES_SIMD_X86
#include <cpuid.h>
#endif
#if KES_SIMD_ARM && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace kes {
namespace {

struct FeatureName {
    kes_cpu_feature bit;
    const char* name;
};
constexpr FeatureName kNames[] = {
    {KES_CPU_SSE41, "sse4.1"},
    {KES_CPU_AVX2, "avx2"},
    {KES_CPU_F16C, "f16c"},
    {KES_CPU_AVX512F, "avx512f"},
    {KES_CPU_AVX512BW, "avx512bw"},
    {KES_CPU_AVX512VNNI, "avx512vnni"},
    {KES_CPU_AVX512FP16, "avx512fp16"},
    {KES_CPU_AVXVNNI, "avxvnni"},
    {KES_CPU_NEON, "neon"},
    {KES_CPU_ASIMDHP, "asimdhp"},
    {KES_CPU_ASIMDDP, "asimddp"},
    {KES_CPU_I8MM, "i8mm"},
    {KES_CPU_SVE, "sve"},
};

#if KES_SIMD_X86
uint32_t detect() {
    unsigned a, b, c, d;
    uint32_t f = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    const bool osxsave = (c & bit_OSXSAVE) != 0;
    if (c & bit_SSE4_1) f |= KES_CPU_SSE41;
    uint64_t xcr0 = 0;
    if (osxsave) {
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = (static_cast<uint64_t>(hi) << 32) | lo;
    }
    // The OS must save the wider registers, or using them faults: check XCR0 as well as cpuid.
    const bool ymm = (xcr0 & 0x6) == 0x6;
    const bool zmm = ymm && (xcr0 & 0xe0) == 0xe0;
    const bool avx = ymm && (c & bit_AVX);
    const bool fma = (c & bit_FMA) != 0;
    if (avx && (c & bit_F16C)) f |= KES_CPU_F16C;
    unsigned max_leaf = __get_cpuid_max(0, nullptr);
    if (max_leaf >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        if (avx && fma && (b & bit_AVX2)) f |= KES_CPU_AVX2;
        if (zmm && (b & bit_AVX512F)) {
            f |= KES_CPU_AVX512F;
            const bool bw_dq_vl = (b & bit_AVX512BW) && (b & bit_AVX512DQ) && (b & bit_AVX512VL);
            if (bw_dq_vl) f |= KES_CPU_AVX512BW;
            if (bw_dq_vl && (c & bit_AVX512VNNI)) f |= KES_CPU_AVX512VNNI;
            if (bw_dq_vl && (d & (1u << 23))) f |= KES_CPU_AVX512FP16;  // cpuid.7.0:EDX[23]
        }
        unsigned a1, b1, c1, d1;
        __cpuid_count(7, 1, a1, b1, c1, d1);
        if (avx && (a1 & (1u << 4))) f |= KES_CPU_AVXVNNI;  // cpuid.7.1:EAX[4]
    }
    return f;
}
#elif KES_SIMD_ARM
uint32_t detect() {
    uint32_t f = KES_CPU_NEON;  // ASIMD is mandatory in armv8-a
#if defined(__linux__)
    const unsigned long hw = getauxval(AT_HWCAP);
    const unsigned long hw2 = getauxval(AT_HWCAP2);
    if (hw & (1ul << 10)) f |= KES_CPU_ASIMDHP;  // HWCAP_ASIMDHP
    if (hw & (1ul << 20)) f |= KES_CPU_ASIMDDP;  // HWCAP_ASIMDDP
    if (hw & (1ul << 22)) f |= KES_CPU_SVE;      // HWCAP_SVE
    if (hw2 & (1ul << 13)) f |= KES_CPU_I8MM;    // HWCAP2_I8MM
#endif
    return f;
}
#else
uint32_t detect() {
    return 0;
}
#endif

// KES_CPU_DISABLE="avx512f,avx2" or "all": lets tests and benchmarks force the scalar or older paths.
uint32_t disabled_by_env() {
    const char* env = std::getenv("KES_CPU_DISABLE");
    if (!env || !*env) return 0;
    uint32_t mask = 0;
    std::string token;
    for (const char* p = env;; ++p) {
        if (*p == ',' || *p == ' ' || *p == '\0') {
            if (token == "all") {
                mask = ~0u;
            } else if (!token.empty()) {
                bool known = false;
                for (const auto& n : kNames) {
                    if (token == n.name) {
                        mask |= n.bit;
                        known = true;
                    }
                }
                if (!known) KES_LOGW("sdk", "KES_CPU_DISABLE: unknown feature \"%s\" ignored", token.c_str());
            }
            token.clear();
            if (*p == '\0') break;
        } else {
            token += static_cast<char>(std::tolower(static_cast<unsigned char>(*p)));
        }
    }
    // Disabling a base feature disables the ones built on it.
    if (mask & KES_CPU_AVX512F) mask |= KES_CPU_AVX512BW | KES_CPU_AVX512VNNI | KES_CPU_AVX512FP16;
    if (mask & KES_CPU_AVX512BW) mask |= KES_CPU_AVX512VNNI | KES_CPU_AVX512FP16;
    if (mask & KES_CPU_AVX2)
        mask |= KES_CPU_AVX512F | KES_CPU_AVX512BW | KES_CPU_AVX512VNNI | KES_CPU_AVX512FP16 | KES_CPU_AVXVNNI;
    return mask;
}

uint32_t features() {
    // A copy in a library the app's Kestrel attached (the simulator) runs the app's choice of kernels:
    // the app's KES_CPU_DISABLE, read once in the process.
    if (const kes_host_services* host = host_services()) return host->cpu_features();
    static const uint32_t f = detect() & ~disabled_by_env();
    return f;
}

}  // namespace
}  // namespace kes

extern "C" {

uint32_t kes_cpu_features(void) {
    return kes::features();
}

int kes_cpu_has(uint32_t features) {
    return (kes::features() & features) == features ? 1 : 0;
}

const char* kes_cpu_feature_name(kes_cpu_feature feature) {
    const int64_t value = kes::enum_value(feature);
    for (const auto& n : kes::kNames) {
        if (n.bit == value) return n.name;
    }
    return nullptr;
}

kes_status kes_cpu_describe(char* buf, size_t size, size_t* out_needed) {
    std::string s;
    for (const auto& n : kes::kNames) {
        if (kes::features() & n.bit) {
            if (!s.empty()) s += ' ';
            s += n.name;
        }
    }
    if (s.empty()) s = "none";
    if (out_needed) *out_needed = s.size() + 1;
    if (!buf || size < s.size() + 1) {
        if (buf && size > 0) buf[0] = '\0';
        return kes::set_error(KES_ERR_INVALID_ARGUMENT, "kes_cpu_describe: buffer of %zu bytes, %zu needed",
                              buf ? size : 0, s.size() + 1);
    }
    std::memcpy(buf, s.c_str(), s.size() + 1);
    return KES_OK;
}

uint32_t kes_cpu_count(void) {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<uint32_t>(n) : 1u;
}

const char* kes_cpu_arch(void) {
#if defined(__x86_64__)
    return "x86_64";
#elif defined(__aarch64__)
    return "aarch64";
#elif defined(__arm__)
    return "arm";
#else
    return "unknown";
#endif
}

}  // extern "C"
