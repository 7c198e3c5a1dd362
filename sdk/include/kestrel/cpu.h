/* kestrel/cpu.h — CPU feature detection behind Kestrel's run-time SIMD dispatch.
 *
 * Kestrel is compiled for the baseline ISA of its target (x86-64, or armv8-a on the boards) and picks
 * faster kernels at run time from these flags, so one binary runs on every board and laptop. Each
 * module's scalar path is always built and tested; to force it, set KES_CPU_DISABLE to a
 * comma-separated list of feature names ("avx512f,avx2" or "all") before Kestrel first reads the
 * features — handy to test and benchmark every kernel on one machine.
 *
 * Thread-safety: every function may be called from any thread; features are detected once.
 */
#ifndef KESTREL_CPU_H
#define KESTREL_CPU_H

#include "kestrel/status.h"

KES_BEGIN_DECLS

typedef enum kes_cpu_feature {
    /* x86-64 */
    KES_CPU_SSE41 = 1u << 0,
    KES_CPU_AVX2 = 1u << 1, /* reported only with FMA */
    KES_CPU_F16C = 1u << 2,
    KES_CPU_AVX512F = 1u << 3,
    KES_CPU_AVX512BW = 1u << 4, /* with AVX512DQ and AVX512VL */
    KES_CPU_AVX512VNNI = 1u << 5,
    KES_CPU_AVX512FP16 = 1u << 6,
    KES_CPU_AVXVNNI = 1u << 7,
    /* aarch64 */
    KES_CPU_NEON = 1u << 16,    /* ASIMD: always on armv8-a */
    KES_CPU_ASIMDHP = 1u << 17, /* fp16 arithmetic */
    KES_CPU_ASIMDDP = 1u << 18, /* SDOT/UDOT */
    KES_CPU_I8MM = 1u << 19,
    KES_CPU_SVE = 1u << 20
} kes_cpu_feature;

/* Bitwise OR of kes_cpu_feature detected on this CPU, minus those disabled by KES_CPU_DISABLE. */
KES_API uint32_t kes_cpu_features(void);

/* 1 if every bit of `features` is available. */
KES_API int kes_cpu_has(uint32_t features);

/* "avx2", "neon", ...; NULL for a value that is not exactly one feature bit. */
KES_API const char* kes_cpu_feature_name(kes_cpu_feature feature);

/* Space-separated names of the available features into buf (always NUL-terminated when size > 0).
 * KES_ERR_INVALID_ARGUMENT if buf is too small; *out_needed (optional) gets the bytes required. */
KES_API kes_status kes_cpu_describe(char* buf, size_t size, size_t* out_needed);

/* Online CPUs (≥ 1). */
KES_API uint32_t kes_cpu_count(void);

/* "x86_64", "aarch64", ... : the architecture this library was compiled for. */
KES_API const char* kes_cpu_arch(void);

KES_END_DECLS

#endif /* KESTREL_CPU_H */
