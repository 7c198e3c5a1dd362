// Fuzz target for Kestrel's one .npy reader (kes/npy.hpp: kes-convert --freeze-input, kes-model-bench
// inputs, kes-compare references, kes-fv import): any bytes must parse or throw kes::Error, never read
// past the buffer; a parsed array must describe exactly the bytes after its header, every one of them
// readable, and survive a write and a re-read.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "kes/error.hpp"
#include "kes/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    kes::npy::Array a;
    try {
        a = kes::npy::parse(data, size);
    } catch (const kes::Error&) {
        return 0;  // refused, with a status: what malformed input must get
    }
    if (a.data_offset > size || a.data_bytes != size - a.data_offset) std::abort();
    // Touch every data byte (ASan reports a read outside the input).
    volatile uint8_t sum = 0;
    for (size_t i = 0; i < a.data_bytes; ++i) sum = static_cast<uint8_t>(sum + data[a.data_offset + i]);
    try {
        const std::vector<uint8_t> again = kes::npy::encode(a.dtype, a.shape, data + a.data_offset, a.data_bytes);
        const kes::npy::Array b = kes::npy::parse(again.data(), again.size());
        if (b.dtype != a.dtype || b.shape != a.shape || b.data_bytes != a.data_bytes) std::abort();
    } catch (const kes::Error&) {
        std::abort();  // what was read must be writable and readable again
    }
    return 0;
}
