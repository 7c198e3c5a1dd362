// struct_size_check.hpp — the struct_size contract (sdk/internal/kes/struct_size.hpp) as one test helper,
// for every module's public config structs: a struct is accepted from its first released size up,
// refused below it, and above sizeof(T) accepted only with an all-zero tail.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "kestrel/status.h"

namespace kes_test {

// A caller's struct of `size` bytes: `full` cut short (the bytes after it are garbage, as in an app's
// memory), or followed by a tail of `tail` bytes (an app built against newer headers).
template <class T>
class SizedStruct {
public:
    SizedStruct(const T& full, size_t size, unsigned char tail = 0)
        : storage_((size + 64) / sizeof(std::max_align_t) + 1) {
        auto* b = reinterpret_cast<unsigned char*>(storage_.data());
        std::memset(b, 0xEE, storage_.size() * sizeof(std::max_align_t));
        std::memcpy(b, &full, std::min(size, sizeof(T)));
        if (size > sizeof(T)) std::memset(b + sizeof(T), tail, size - sizeof(T));
        get()->struct_size = static_cast<uint32_t>(size);
    }
    T* get() { return reinterpret_cast<T*>(storage_.data()); }
    const unsigned char* bytes() const { return reinterpret_cast<const unsigned char*>(storage_.data()); }

private:
    std::vector<std::max_align_t> storage_;
};

// The struct_size contract (kes/struct_size.hpp) for one public struct: accepted from its first
// released size up, refused below it, and above sizeof(T) accepted only with an all-zero tail.
template <class T, class Call>
void expect_struct_growth(const T& full, size_t first, Call call) {
    SizedStruct<T> at_first(full, first);
    EXPECT_EQ(call(at_first.get()), KES_OK) << "the first released size, " << first << ": " << kes_last_error();
    SizedStruct<T> below(full, first - 4);
    EXPECT_EQ(call(below.get()), KES_ERR_INVALID_ARGUMENT) << "below the first released size";
    SizedStruct<T> zero_tail(full, sizeof(T) + 24, 0);
    EXPECT_EQ(call(zero_tail.get()), KES_OK) << "a newer struct with a zero tail: " << kes_last_error();
    SizedStruct<T> set_tail(full, sizeof(T) + 24, 1);
    EXPECT_EQ(call(set_tail.get()), KES_ERR_INVALID_ARGUMENT) << "a newer struct asking for more";
    EXPECT_NE(std::strstr(kes_last_error(), "does not know"), nullptr) << kes_last_error();
}

}  // namespace kes_test
