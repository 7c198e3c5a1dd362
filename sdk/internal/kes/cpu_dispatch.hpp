// kes/cpu_dispatch.hpp — run-time SIMD dispatch: the one way every module picks its kernel table.
//
// A SIMD variant lives in its own source file compiled with the ISA flags it needs (CMake sets them
// per file: kes_add_simd_source in cmake/KestrelModule.cmake). Nothing in such a file may run before
// the CPU is known to have those instructions, so (docs/ARCHITECTURE.md "SIMD dispatch"):
//   - it defines no namespace-scope object with a dynamic initialiser and no static constructor (a
//     table is a constant, or a function-local static built on first call);
//   - it emits no inline function or template instance that other files could share (everything
//     but its getter sits in an anonymous namespace): the linker keeps one copy of an inline
//     function, and it may be this file's, with AVX-512 in it, for callers in baseline code;
//   - its getter (kernels_avx2() ...) is called only by pick_table() below, after kes_cpu_has() has
//     confirmed every feature of the variant. The getter itself does not check the CPU: it is ISA
//     code too.
// The build checks the first two rules on every ISA-flagged object (cmake/check_isa_objects.cmake).
//
// KES_SIMD_X86 / KES_SIMD_ARM say which families this build contains at all; a getter of the other
// family is a stub that returns nullptr (and is never called: kes_cpu_has() is false for it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

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

namespace kes {
namespace dispatch {

// One instruction set's table: every kes_cpu_feature its file is compiled for (so the gate and the
// compiler flags agree), and the getter defined in that file.
template <class Table>
struct Variant {
    uint32_t features;
    const Table* (*get)();
};

// The first variant, in the order given (fastest first), whose features this CPU has; `fallback`
// (the scalar table) when none. Callers keep the answer in a function-local static: decided once.
template <class Table, size_t N>
const Table& pick_table(const Variant<Table> (&variants)[N], const Table& fallback) noexcept {
    for (const Variant<Table>& v : variants)
        if (kes_cpu_has(v.features))
            if (const Table* t = v.get()) return *t;
    return fallback;
}

// Every table this CPU can run, `fallback` first: what the tests compare with the scalar table.
template <class Table, size_t N>
std::vector<const Table*> usable_tables(const Variant<Table> (&variants)[N], const Table& fallback) {
    std::vector<const Table*> all{&fallback};
    for (const Variant<Table>& v : variants)
        if (kes_cpu_has(v.features))
            if (const Table* t = v.get()) all.push_back(t);
    return all;
}

}  // namespace dispatch
}  // namespace kes
