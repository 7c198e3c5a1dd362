// Fuzz target for the .npy reader (kes-fv import): any bytes parse or throw kes::Error, and whatever
// parses can have every row copied without reading outside the input.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kes/error.hpp"
#include "vector_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const kes::fv::MatrixLayout m = kes::fv::parse_npy(data, size);
        std::vector<float> rows(static_cast<size_t>(m.rows) * m.cols);  // ≤ size / 4 once parsed
        kes::fv::copy_rows(data, m, 0, m.rows, rows.data());
    } catch (const kes::Error&) {
    }
    return 0;
}
