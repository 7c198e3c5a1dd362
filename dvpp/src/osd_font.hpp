// osd_font.hpp — the built-in 8×16 bitmap font of kestrel/osd.h (not installed).
#pragma once

#include <cstdint>

namespace kes {
namespace osd {

constexpr int kFontWidth = 8;
constexpr int kFontHeight = 16;
constexpr uint32_t kFirstChar = 0x20;  // ' '
constexpr uint32_t kLastChar = 0x7E;   // '~'
constexpr uint32_t kBoxGlyph = 95;     // drawn for every code point outside kFirstChar..kLastChar
constexpr uint32_t kGlyphCount = 96;

// Row r of glyph g: bit 7 is column 0 (leftmost), bit 0 column 7. Glyph g < 95 is character 0x20 + g.
const uint8_t* font_glyph(uint32_t g) noexcept;

}  // namespace osd
}  // namespace kes
