// plane_ops.hpp — pixel-plane steps of the software DVPP: EXIF orientation, chroma resampling between
// subsamplings, colour conversion for the software fallback (BOARD-RULES §JPEGD).
#pragma once

#include <cstddef>
#include <cstdint>

namespace kes {

// Size as displayed for an EXIF orientation: 5..8 swap width and height.
inline bool orientation_swaps(uint32_t orientation) noexcept {
    return orientation >= 5 && orientation <= 8;
}

// Writes the top-left out_w × out_h part of `src` (w × h pixels of `bpp` bytes) as displayed under
// EXIF `orientation` (1..8) into dst. out_w/out_h ≤ the displayed size (the 310B even rounding cuts
// the last column/row of the displayed image).
void orient_plane(const uint8_t* src, uint32_t w, uint32_t h, size_t src_stride, uint32_t bpp, uint32_t orientation,
                  uint8_t* dst, size_t dst_stride, uint32_t out_w, uint32_t out_h) noexcept;

// A chroma plane at subsampling shifts (sx, sy) of an image of full size w × h.
struct ChromaPlane {
    const uint8_t* data;
    size_t stride;
    uint32_t sx, sy;
};

// Writes one chroma component of a w × h image at shifts (dx, dy) into dst, one byte every `step`
// bytes (2 for interleaved semi-planar chroma). Each output sample is the rounded mean of the source
// samples under the full-resolution pixels it covers (clipped to the image), so equal shifts copy.
void resample_chroma(const ChromaPlane& src, uint32_t w, uint32_t h, uint32_t dx, uint32_t dy, uint8_t* dst,
                     size_t dst_stride, uint32_t step) noexcept;

// Adobe-inverted CMYK to RGB (R = C·K/255, ...), n pixels.
void cmyk_to_rgb(const uint8_t* cmyk, uint8_t* rgb, size_t n) noexcept;

// JFIF (BT.601 full range) RGB → Y, Cb, Cr for one row of n pixels; any pointer may be null.
void rgb_to_yuv_row(const uint8_t* rgb, size_t n, uint8_t* y, uint8_t* u, uint8_t* v) noexcept;

}  // namespace kes
