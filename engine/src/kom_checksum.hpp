// kom_checksum.hpp — the CRC-32 a .kom file carries over its weight blob (kom.fbs: Model.weights_crc32),
// written by kom_writer and checked by parse_kom.
//
// CRC-32 of IEEE 802.3 (zlib's crc32, the fv files' checksum): a file's blob can be checked outside
// Kestrel with `python3 -c 'import zlib; ...'`. Computed sixteen bytes at a step (slicing-by-16 tables),
// portable C++ with no ISA dispatch (docs/ARCHITECTURE.md "Integrity of a .kom" has the measured load
// cost).
#pragma once

#include <cstddef>
#include <cstdint>

namespace kes {

// The CRC-32 of data[0, size), continuing `crc` (0 to start).
uint32_t weights_crc32(const uint8_t* data, size_t size, uint32_t crc = 0);

}  // namespace kes
