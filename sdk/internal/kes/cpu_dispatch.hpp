// kes/cpu_dispatch.hpp — compile-time knowledge used beside kes_cpu_features() for run-time dispatch.
//
// A SIMD variant lives in its own source file compiled with the ISA flags it needs (CMake sets them
// per file: see kes_add_simd_source in cmake/KestrelModule.cmake) and is called only after
// kes_cpu_has() confirms the CPU has them. KES_SIMD_X86 / KES_SIMD_ARM say which families this build
// contains at all.
#pragma once

#include "kestrel/cpu.h"

#if defined(__x86_64__) || defined(_M_X64)
#define KES_SIMD_X86 1
#else
#define KES_SIMD_X86 0
#endif
#if defined(__aarch64__)
#define KES_SIMD_ARM 1
#else
#define KES_SIMD_ARM 0
#endif
