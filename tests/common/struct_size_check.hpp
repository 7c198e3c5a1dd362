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
    size_t capacity() const { return storage_.size() * sizeof(std::max_align_t); }

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

// The same contract for an output struct (the call fills it, kes::write_struct): from its first
// released size up the call writes only the caller's struct_size bytes and keeps struct_size; a newer
// struct gets the tail this library does not know zeroed; a size below the first release, or a garbage
// one (an uninitialised struct_size), is refused.
template <class T, class Call>
void expect_out_struct_growth(size_t first, Call call) {
    T garbage;
    std::memset(static_cast<void*>(&garbage), 0xEE, sizeof garbage);
    SizedStruct<T> at_first(garbage, first);
    EXPECT_EQ(call(at_first.get()), KES_OK) << "the first released size, " << first << ": " << kes_last_error();
    EXPECT_EQ(at_first.get()->struct_size, first);
    for (size_t i = first; i < at_first.capacity(); ++i) {
        EXPECT_EQ(at_first.bytes()[i], 0xEE) << "byte " << i << " is past the caller's struct of " << first;
        if (at_first.bytes()[i] != 0xEE) break;
    }
    SizedStruct<T> below(garbage, first - 4);
    EXPECT_EQ(call(below.get()), KES_ERR_INVALID_ARGUMENT) << "below the first released size";
    SizedStruct<T> newer(garbage, sizeof(T) + 24, 0xAB);
    EXPECT_EQ(call(newer.get()), KES_OK) << "a newer struct: " << kes_last_error();
    EXPECT_EQ(newer.get()->struct_size, sizeof(T) + 24);
    for (size_t i = sizeof(T); i < sizeof(T) + 24; ++i) {
        EXPECT_EQ(newer.bytes()[i], 0) << "byte " << i << " of the fields this Kestrel does not know";
        if (newer.bytes()[i] != 0) break;
    }
    SizedStruct<T> uninitialised(garbage, sizeof(T));
    uninitialised.get()->struct_size = 0xEEEEEEEEu;
    EXPECT_EQ(call(uninitialised.get()), KES_ERR_INVALID_ARGUMENT) << "struct_size 0xEEEEEEEE";
}

}  // namespace kes_test
