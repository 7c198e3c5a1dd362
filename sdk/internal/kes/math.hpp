// kes/math.hpp — alignment and overflow-checked size arithmetic used wherever outside data sets sizes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kes {

// `alignment` must be a power of two.
constexpr uint64_t align_up(uint64_t value, uint64_t alignment) noexcept {
    return (value + alignment - 1) & ~(alignment - 1);
}
constexpr uint64_t align_down(uint64_t value, uint64_t alignment) noexcept {
    return value & ~(alignment - 1);
}
// Any alignment ≥ 1 (board strides such as 16 are powers of two, but callers may pass others).
constexpr uint64_t round_up(uint64_t value, uint64_t multiple) noexcept {
    return multiple <= 1 ? value : (value + multiple - 1) / multiple * multiple;
}
constexpr bool is_pow2(uint64_t v) noexcept {
    return v != 0 && (v & (v - 1)) == 0;
}

// Return false on overflow instead of wrapping.
template <class T>
inline bool checked_mul(T a, T b, T* out) noexcept {
    return !__builtin_mul_overflow(a, b, out);
}
template <class T>
inline bool checked_add(T a, T b, T* out) noexcept {
    return !__builtin_add_overflow(a, b, out);
}

}  // namespace kes

#include <cstring>
#include <type_traits>

namespace kes {

// The integer a C caller put in an enum parameter. C lets any int through, but in C++ loading an
// enum outside its declared range is undefined (UBSan flags it), so API code reads the bytes instead.
template <class E>
inline int64_t enum_value(const E& e) noexcept {
    static_assert(std::is_enum<E>::value, "enum_value takes an enum");
    std::underlying_type_t<E> v;
    std::memcpy(&v, &e, sizeof v);
    return static_cast<int64_t>(v);
}

}  // namespace kes
