// kom_checksum.cpp — CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320) by slicing-by-16
// (kom_checksum.hpp): table k gives the CRC of a byte followed by k zero bytes, so sixteen table lookups
// advance the CRC over sixteen bytes at once (1.3x slicing-by-8 here; the 16 KiB of tables fit L1).
#include "kom_checksum.hpp"

namespace kes {

namespace {

struct Crc32Tables {
    uint32_t t[16][256];
    Crc32Tables() {
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[0][i] = c;
        }
        for (uint32_t i = 0; i < 256; ++i)
            for (int k = 1; k < 16; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFFu];
    }
};

// Four little-endian bytes, assembled byte by byte: the same result on any host and alignment (the
// compilers make it one load on little-endian targets).
uint32_t le32(const uint8_t* p) {
    return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

}  // namespace

uint32_t weights_crc32(const uint8_t* data, size_t size, uint32_t crc) {
    static const Crc32Tables tables;
    const auto& t = tables.t;
    crc = ~crc;
    size_t i = 0;
    for (; i + 16 <= size; i += 16) {
        const uint32_t a = le32(data + i) ^ crc, b = le32(data + i + 4), c = le32(data + i + 8),
                       d = le32(data + i + 12);
        crc = t[15][a & 0xFFu] ^ t[14][(a >> 8) & 0xFFu] ^ t[13][(a >> 16) & 0xFFu] ^ t[12][a >> 24] ^
              t[11][b & 0xFFu] ^ t[10][(b >> 8) & 0xFFu] ^ t[9][(b >> 16) & 0xFFu] ^ t[8][b >> 24] ^ t[7][c & 0xFFu] ^
              t[6][(c >> 8) & 0xFFu] ^ t[5][(c >> 16) & 0xFFu] ^ t[4][c >> 24] ^ t[3][d & 0xFFu] ^
              t[2][(d >> 8) & 0xFFu] ^ t[1][(d >> 16) & 0xFFu] ^ t[0][d >> 24];
    }
    for (; i < size; ++i) crc = t[0][(crc ^ data[i]) & 0xFFu] ^ (crc >> 8);
    return ~crc;
}

}  // namespace kes
