// Fuzz target for kes_tracker_update: a config and a sequence of frames from the bytes; every update must
// succeed or fail with KES_ERR_INVALID_ARGUMENT (bad boxes, too many detections, a changed embedding
// size), never crash, and what it reports must hold the header's promises: at most max_tracks tracks,
// ids ascending and unique, finite boxes, and a failed update changes nothing.
//
// Layout: 6 config bytes (confirm_hits, max_lost_frames, flags, embedding size, max_tracks, max_detections),
// then frames: 1 header byte (detections = low 6 bits; bit 6: with embeddings; bit 7: embedding size + 1),
// then 10 bytes per detection (x0, y0: u16 / 64; width, height: i16 / 64, so ≤ 0 is an inverted box;
// score byte / 250, 255 = NaN; class byte, 255 = an infinite x1), then the embeddings (one signed byte per
// value / 16).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "kestrel/track.h"

namespace {

struct Reader {
    const uint8_t* p;
    size_t n;
    bool take(size_t k, const uint8_t** out) {
        if (n < k) return false;
        *out = p;
        p += k;
        n -= k;
        return true;
    }
};

void check(bool ok) {
    if (!ok) std::abort();
}

uint16_t u16(const uint8_t* b) {
    return static_cast<uint16_t>(b[0] | (b[1] << 8));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Reader in{data, size};
    const uint8_t* h;
    if (!in.take(6, &h)) return 0;
    kes_tracker_config c;
    kes_tracker_config_init(&c);
    c.confirm_hits = 1 + h[0] % 4;
    c.max_lost_frames = h[1] % 16;
    c.fuse_score = h[2] & 1;
    c.per_class = (h[2] >> 1) & 1;
    c.report = (h[2] >> 2) & KES_TRACK_REPORT_ALL;
    c.appearance_weight = ((h[2] >> 5) & 3) / 3.0f;
    c.embedding_dim = (h[2] & 0x80) ? 1 + h[3] % 8 : 0;
    c.max_tracks = 1 + h[4] % 32;
    c.max_detections = 1 + h[5] % 48;
    kes_tracker* t = nullptr;
    if (kes_tracker_create(&c, &t) != KES_OK) std::abort();
    size_t dim = 1 + h[3] % 8;
    std::vector<kes_detection> dets;
    std::vector<float> emb;
    std::vector<kes_track> out(c.max_tracks + 1);
    const uint8_t* f;
    while (in.take(1, &f)) {
        const size_t n = f[0] & 63;
        const bool with_emb = (f[0] & 64) != 0;
        const size_t d = (f[0] & 128) ? dim + 1 : dim;
        dets.assign(n, kes_detection{});
        for (size_t i = 0; i < n; ++i) {
            const uint8_t* b;
            if (!in.take(10, &b)) {
                dets.resize(i);
                break;
            }
            kes_detection& x = dets[i];
            x.x0 = u16(b) / 64.0f;
            x.y0 = u16(b + 2) / 64.0f;
            x.x1 = x.x0 + static_cast<int16_t>(u16(b + 4)) / 64.0f;
            x.y1 = x.y0 + static_cast<int16_t>(u16(b + 6)) / 64.0f;
            x.score = b[8] == 255 ? std::numeric_limits<float>::quiet_NaN() : b[8] / 250.0f;
            x.class_id = b[9] % 3;
            if (b[9] == 255) x.x1 = std::numeric_limits<float>::infinity();
        }
        emb.assign(dets.size() * d, 0.0f);
        for (float& v : emb) {
            const uint8_t* b;
            if (!in.take(1, &b)) break;
            v = static_cast<int8_t>(b[0]) / 16.0f;
        }
        size_t before = 0, after = 0, count = 0;
        check(kes_tracker_track_count(t, &before) == KES_OK);
        const kes_status st = kes_tracker_update(t, dets.empty() ? nullptr : dets.data(), dets.size(),
                                                 with_emb ? emb.data() : nullptr, d, out.data(), out.size(), &count);
        check(kes_tracker_track_count(t, &after) == KES_OK);
        if (st != KES_OK) {
            check(st == KES_ERR_INVALID_ARGUMENT);
            check(after == before);
            continue;
        }
        if (with_emb) dim = d;
        check(after <= c.max_tracks && count <= after);
        for (size_t i = 0; i < count; ++i) {
            const kes_track& k = out[i];
            check(k.id >= 1 && (i == 0 || k.id > out[i - 1].id));
            check(std::isfinite(k.x0) && std::isfinite(k.y0) && std::isfinite(k.x1) && std::isfinite(k.y1));
            check(k.x0 <= k.x1 && k.y0 <= k.y1);
            check((c.report >> k.state) & 1u);
            check(k.detection < static_cast<int32_t>(dets.size()));
        }
    }
    kes_tracker_destroy(t);
    return 0;
}
