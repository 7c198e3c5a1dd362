// A namespace-scope object with a dynamic initialiser, as microkernels_avx512.cpp once built its table:
// in an ISA-flagged file, its code runs at load time on every CPU. check_isa_objects.cmake refuses it.
#include <cmath>
#include <cstdlib>

namespace {
const float kScale = std::sqrt(static_cast<float>(std::rand()));
}  // namespace

float isa_probe_scale() {
    return kScale;
}
