// fv_internal.hpp — what the fv tests may see beyond the public header (tests add fv/src to their
// include path) and the kes-fv CLI: the stored, dequantised value of a feature, to build exact
// brute-force references and exports, and the list of libraries.
#pragma once

#include <vector>

#include "kestrel/fv.h"

namespace kes {
namespace fv {

// The vector a search compares against for feature (id0, id1, offset): dense → dim floats (f16/int8
// widened exactly as the kernels widen them; cosine → normalised); PQ36 → the 32 codes as floats.
// Throws kes::Error (KES_ERR_NOT_FOUND) for a missing or deleted feature.
std::vector<float> stored_vector(const kes_fv_repo* repo, uint32_t id0, uint32_t id1, uint32_t offset);

struct LibraryInfo {
    uint32_t id0, id1, size, live;
};
// Every library, in (id0, id1) order.
std::vector<LibraryInfo> library_list(const kes_fv_repo* repo);

// True while library (id0, id1)'s features are read in place from the loaded file's mapping
// (kes_fv_repo_load), false once copied (an add grew it) or when it was read into memory.
bool library_is_mapped(const kes_fv_repo* repo, uint32_t id0, uint32_t id1);

}  // namespace fv
}  // namespace kes
