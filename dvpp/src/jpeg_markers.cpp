// JPEG marker walk and EXIF orientation (see jpeg_markers.hpp). Only lengths the data declares are
// trusted, and only after checking them against the bytes that are really there.
#include "jpeg_markers.hpp"

#include <cstring>

namespace kes {
namespace {

class TiffReader {
public:
    TiffReader(const uint8_t* p, size_t n, bool big_endian) : p_(p), n_(n), be_(big_endian) {}
    bool u16(size_t off, uint32_t* v) const {
        if (off > n_ || n_ - off < 2) return false;
        *v = be_ ? (uint32_t(p_[off]) << 8 | p_[off + 1]) : (uint32_t(p_[off + 1]) << 8 | p_[off]);
        return true;
    }
    bool u32(size_t off, uint32_t* v) const {
        uint32_t a, b;
        if (!u16(off, &a) || !u16(off + 2, &b)) return false;
        *v = be_ ? (a << 16 | b) : (b << 16 | a);
        return true;
    }

private:
    const uint8_t* p_;
    size_t n_;
    bool be_;
};

}  // namespace

uint32_t parse_exif_orientation(const uint8_t* payload, size_t size) noexcept {
    static const uint8_t kExif[6] = {'E', 'x', 'i', 'f', 0, 0};
    if (!payload || size < 6 + 8 || std::memcmp(payload, kExif, 6) != 0) return 1;
    const uint8_t* tiff = payload + 6;
    const size_t n = size - 6;
    bool be;
    if (tiff[0] == 'I' && tiff[1] == 'I') {
        be = false;
    } else if (tiff[0] == 'M' && tiff[1] == 'M') {
        be = true;
    } else {
        return 1;
    }
    TiffReader r(tiff, n, be);
    uint32_t magic = 0, ifd0 = 0, count = 0;
    if (!r.u16(2, &magic) || magic != 42 || !r.u32(4, &ifd0) || !r.u16(ifd0, &count)) return 1;
    // Only IFD0 carries the image's orientation (IFD1 is the thumbnail's).
    for (uint32_t i = 0; i < count; ++i) {
        const size_t entry = size_t(ifd0) + 2 + size_t(i) * 12;
        uint32_t tag = 0, type = 0, num = 0, value = 0;
        if (!r.u16(entry, &tag) || !r.u16(entry + 2, &type) || !r.u32(entry + 4, &num) || !r.u16(entry + 8, &value))
            return 1;
        if (tag != 0x0112) continue;
        // TIFF 6.0: Orientation is one SHORT stored in the first two bytes of the value field.
        if (type != 3 || num != 1 || value < 1 || value > 8) return 1;
        return value;
    }
    return 1;
}

JpegMarkers scan_jpeg_markers(const uint8_t* data, size_t size) noexcept {
    JpegMarkers m;
    if (!data || size < 4 || data[0] != 0xFF || data[1] != 0xD8) return m;
    bool exif_seen = false;
    size_t pos = 2;
    while (pos + 4 <= size) {
        if (data[pos] != 0xFF) return m;  // not at a marker: leave the rest to libjpeg
        uint8_t marker = data[pos + 1];
        if (marker == 0xFF) {  // fill byte (ITU T.81 B.1.1.2)
            ++pos;
            continue;
        }
        pos += 2;
        if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // no length field
        if (marker == 0xD9 || marker == 0xDA) return m;                      // EOI / SOS: headers end
        const size_t len = (size_t(data[pos]) << 8) | data[pos + 1];
        if (len < 2 || len > size - pos) return m;
        const uint8_t* seg = data + pos + 2;
        const size_t seg_len = len - 2;
        const bool is_sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
        if (is_sof && !m.found_sof && seg_len >= 6) {
            m.found_sof = true;
            m.sof_type = uint8_t(marker - 0xC0);
            m.precision = seg[0];
            m.components = seg[5];
        } else if (marker == 0xE1 && !exif_seen && seg_len >= 6 && std::memcmp(seg, "Exif\0", 5) == 0) {
            exif_seen = true;  // the first Exif APP1 counts (a later one is usually XMP or junk)
            m.orientation = parse_exif_orientation(seg, seg_len);
        }
        pos += len;
    }
    return m;
}

}  // namespace kes
