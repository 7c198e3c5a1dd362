// jpeg_markers.hpp — the few facts TurboJPEG API 2 does not report: the frame type (SOFn), the
// sample precision and the EXIF orientation. Reads outside data: every offset is bounds-checked.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kes {

struct JpegMarkers {
    bool found_sof = false;
    uint8_t sof_type = 0;  // n of SOFn (0 baseline, 1 extended, 2 progressive, 3 lossless, 9.. arith)
    uint32_t precision = 0;
    uint32_t components = 0;
    uint32_t orientation = 1;  // EXIF 0x0112, 1..8; 1 when absent or out of range
    bool progressive() const noexcept { return sof_type == 2 || sof_type == 6 || sof_type == 10 || sof_type == 14; }
    bool arithmetic() const noexcept { return sof_type >= 9; }
    bool lossless() const noexcept { return sof_type == 3 || sof_type == 7 || sof_type == 11 || sof_type == 15; }
};

// Walks the marker segments from SOI up to the first SOS (or the end of data). Never fails: what it
// cannot read it leaves at the defaults, and TurboJPEG then judges the stream.
JpegMarkers scan_jpeg_markers(const uint8_t* data, size_t size) noexcept;

// The orientation tag of an APP1 payload ("Exif\0\0" + TIFF); 1 if absent or malformed.
uint32_t parse_exif_orientation(const uint8_t* payload, size_t size) noexcept;

}  // namespace kes
