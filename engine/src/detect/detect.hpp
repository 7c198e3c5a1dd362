// detect.hpp — kestrel/detect.h's work in C++ (throwing kes::Error), each over an explicit kernel table so
// the tests can run the scalar reference and every vector table on the same input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "detect_kernels.hpp"
#include "kestrel/detect.h"

namespace kes {
namespace detect {

// The integer a C caller stored in an enum field, read without loading the enum type: a value outside
// the enumerators would be undefined behaviour to load as the enum (UBSan's -fsanitize=enum says so).
template <class E>
int32_t enum_bits(const E& e) {
    static_assert(sizeof(E) == sizeof(int32_t), "C enums are int-sized on Kestrel's targets");
    int32_t v;
    std::memcpy(&v, &e, sizeof v);
    return v;
}

// Returns the anchor count; writes them when capacity allows (out may be null for a count).
size_t anchors_generate(const kes_detect_anchor_config& config, kes_anchor* out, size_t capacity);

// Returns the number of detections that passed (may exceed capacity; see kes_detect_decode).
size_t decode(const Kernels& kernels, const kes_detect_decode_config& config, const kes_detect_head* heads,
              size_t head_count, const kes_anchor* anchors, size_t anchor_count, kes_detection* out, size_t capacity);

size_t nms_scratch_bytes(size_t count);

// Returns the number kept (dets[0 .. kept)). scratch null: allocates.
size_t nms(const Kernels& kernels, const kes_detect_nms_config& config, kes_detection* dets, size_t count,
           void* scratch, size_t scratch_size);

}  // namespace detect
}  // namespace kes
