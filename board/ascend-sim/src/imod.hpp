// imod.hpp — the simulator's model container: an "IMOD"-headed file wrapping a Kestrel .kom.
//
// A real .om (ATC's output) starts with the 4 bytes "IMOD" and a 256-byte header (BOARD-RULES §Models; hicann/ge
// ModelFileHeader, netron's om.js). Its layout beyond the magic is not public, so this container
// only shares the magic and the header size: the simulator's own fields follow, tagged so that a real
// .om (whose bytes 8..23 are something else) is recognised and refused, never misread.
//
//   offset  size  field
//        0     4  "IMOD"
//        4     4  container version (1), little-endian
//        8    16  tag "KESTREL-SIM-KOM\0"
//       24     8  payload offset (256)
//       32     8  payload size (the .kom bytes)
//       40    64  target SoC, NUL-terminated ("Ascend310", "Ascend310B4"): ATC's --soc_version
//      104     8  FNV-1a 64 of the payload (a truncated or damaged file is refused at load)
//      112   144  zero
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace kes_sim {

constexpr size_t kImodHeaderSize = 256;
constexpr uint32_t kImodVersion = 1;
constexpr char kImodMagic[4] = {'I', 'M', 'O', 'D'};
constexpr char kImodTag[16] = "KESTREL-SIM-KOM";
constexpr size_t kImodSocSize = 64;

inline uint64_t fnv1a64(const uint8_t* p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

inline void put_u32(uint8_t* p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void put_u64(uint8_t* p, uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint32_t get_u32(const uint8_t* p) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{p[i]} << (8 * i);
    return v;
}
inline uint64_t get_u64(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{p[i]} << (8 * i);
    return v;
}

// Fills the 256-byte header for a payload of `size` bytes targeting `soc`.
inline void write_header(uint8_t* header, const uint8_t* payload, uint64_t size, const std::string& soc) {
    std::memset(header, 0, kImodHeaderSize);
    std::memcpy(header, kImodMagic, 4);
    put_u32(header + 4, kImodVersion);
    std::memcpy(header + 8, kImodTag, sizeof kImodTag);
    put_u64(header + 24, kImodHeaderSize);
    put_u64(header + 32, size);
    std::memcpy(header + 40, soc.data(), soc.size() < kImodSocSize - 1 ? soc.size() : kImodSocSize - 1);
    put_u64(header + 104, fnv1a64(payload, static_cast<size_t>(size)));
}

enum class ImodCheck { kOk, kNotImod, kRealOm, kDamaged };

struct ImodView {
    const uint8_t* payload = nullptr;
    size_t payload_size = 0;
    std::string soc;
};

// Recognises a container and checks its bounds and checksum; `why` says what is wrong.
inline ImodCheck parse(const void* data, size_t size, ImodView* out, std::string* why) {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    if (size < 4 || std::memcmp(p, kImodMagic, 4) != 0) {
        *why = "the data does not start with \"IMOD\": not an .om file";
        return ImodCheck::kNotImod;
    }
    if (size < kImodHeaderSize || std::memcmp(p + 8, kImodTag, sizeof kImodTag) != 0) {
        *why =
            "a real ATC .om: the simulator runs only kes-sim-pack containers (an IMOD header wrapping a .kom); "
            "a real .om needs an Ascend device";
        return ImodCheck::kRealOm;
    }
    const uint64_t off = get_u64(p + 24), n = get_u64(p + 32);
    if (get_u32(p + 4) != kImodVersion) {
        *why = "container version " + std::to_string(get_u32(p + 4)) + " is not 1";
        return ImodCheck::kDamaged;
    }
    if (off != kImodHeaderSize || n > size - off || n == 0) {
        *why = "payload of " + std::to_string(n) + " bytes at offset " + std::to_string(off) + " exceeds the " +
               std::to_string(size) + "-byte file (truncated?)";
        return ImodCheck::kDamaged;
    }
    if (fnv1a64(p + off, static_cast<size_t>(n)) != get_u64(p + 104)) {
        *why = "payload checksum mismatch (damaged file)";
        return ImodCheck::kDamaged;
    }
    const char* soc = reinterpret_cast<const char*>(p + 40);
    out->soc.assign(soc, strnlen(soc, kImodSocSize));
    out->payload = p + off;
    out->payload_size = static_cast<size_t>(n);
    return ImodCheck::kOk;
}

}  // namespace kes_sim
