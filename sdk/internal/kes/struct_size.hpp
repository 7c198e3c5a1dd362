// kes/struct_size.hpp — the one reading of a public struct's `struct_size` (ARCHITECTURE.md: "fields can
// be appended without breaking compiled apps").
//
// A caller's struct is accepted at any size from the first released version of the struct up:
//  - an older struct (an app built before fields were appended) is copied over the defaults, so the
//    fields it does not have take their *_init() values;
//  - a newer struct (an app built against newer headers, running on this older library) is accepted
//    only where the tail this library does not know is all zero, i.e. the app left those fields at the
//    values its *_init() gave them. A non-zero tail asks for something this library cannot do, and
//    ignoring it would silently do something else, so it is refused.
// Output structs (the callee fills them) take the caller's size the same way: the known part is
// written, the unknown tail zeroed.
//
//   constexpr size_t kPoolConfigV1 = KES_STRUCT_SIZE_THROUGH(kes_mem_pool_config, name);
//   kes_mem_pool_config c;
//   kes_mem_pool_config_init(&c);
//   kes::read_struct(config, kPoolConfigV1, "config", "kes_mem_pool_config", &c);
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kes/error.hpp"

// sizeof a first released version of T whose last field was `field`: what an app built against that
// version passes (its end rounded up to T's alignment, as the compiler pads it). Stays fixed when
// fields are appended, unlike sizeof(T).
#define KES_STRUCT_SIZE_THROUGH(T, field) \
    ::kes::struct_padded_size(offsetof(T, field) + sizeof(static_cast<T*>(nullptr)->field), alignof(T))

namespace kes {

// A struct_size above this is garbage (an uninitialised struct), not a future version: the zero
// check would otherwise read that far past the caller's struct.
constexpr size_t kStructSizeMax = 65536;

constexpr size_t struct_padded_size(size_t end, size_t align) {
    return (end + align - 1) / align * align;
}

// Checks `struct_size` of the caller's struct at `p` (named `what`, of type `type`) against
// [first, ...) with a zero tail beyond `ours` when `input`. Throws KES_ERR_INVALID_ARGUMENT.
inline void check_struct_size(const void* p, uint32_t struct_size, size_t first, size_t ours, const char* what,
                              const char* type, bool input) {
    if (struct_size < first)
        fail(KES_ERR_INVALID_ARGUMENT,
             "%s->struct_size is %u, below the %zu bytes of the first %s: set it with %s_init (or = sizeof)", what,
             struct_size, first, type, type);
    if (struct_size > kStructSizeMax)
        fail(KES_ERR_INVALID_ARGUMENT, "%s->struct_size is %u: not a %s (uninitialised? use %s_init)", what,
             struct_size, type, type);
    if (!input || struct_size <= ours) return;
    const unsigned char* tail = static_cast<const unsigned char*>(p) + ours;
    for (size_t i = 0; i < struct_size - ours; ++i) {
        if (tail[i] != 0)
            fail(KES_ERR_INVALID_ARGUMENT,
                 "%s sets fields this Kestrel does not know: byte %zu of its %u is not zero, and this build's %s "
                 "has %zu (the app was built against newer headers than the library it runs on)",
                 what, ours + i, struct_size, type, ours);
    }
}

// Reads the caller's `in` over `*inout`, which holds the defaults (from *_init), and leaves
// inout->struct_size = sizeof(T).
template <class T>
void read_struct(const T* in, size_t first, const char* what, const char* type, T* inout) {
    if (!in) fail(KES_ERR_INVALID_ARGUMENT, "%s is NULL", what);
    const uint32_t size = in->struct_size;
    check_struct_size(in, size, first, sizeof(T), what, type, true);
    std::memcpy(static_cast<void*>(inout), static_cast<const void*>(in), std::min<size_t>(size, sizeof(T)));
    inout->struct_size = static_cast<uint32_t>(sizeof(T));
}

// Checks an output struct's struct_size before the call does any work.
template <class T>
void check_out_struct(const T* out, size_t first, const char* what, const char* type) {
    if (!out) fail(KES_ERR_INVALID_ARGUMENT, "%s is NULL", what);
    check_struct_size(out, out->struct_size, first, sizeof(T), what, type, false);
}

// Writes `ours` into the caller's `out` of its own struct_size (checked by check_out_struct): the
// fields it has, and zeros in any tail this library does not know; out->struct_size is kept.
template <class T>
void write_struct(const T& ours, T* out) {
    const uint32_t size = out->struct_size;
    std::memcpy(static_cast<void*>(out), static_cast<const void*>(&ours), std::min<size_t>(size, sizeof(T)));
    if (size > sizeof(T)) std::memset(reinterpret_cast<unsigned char*>(out) + sizeof(T), 0, size - sizeof(T));
    out->struct_size = size;
}

}  // namespace kes
