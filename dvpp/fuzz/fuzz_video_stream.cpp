// Fuzz target for VDEC's packet path (kes_vdec_send_packet / kes_vdec_receive_frame): any bytes,
// taken as an Annex-B H.264 stream and again as an H.265 stream, fed in chunks whose size depends on
// the input, must decode or be reported and skipped — never crash, hang or leak.
#include <cstddef>
#include <cstdint>

extern "C" {
#include <libavutil/log.h>
}

#include "kestrel/dvpp_video.h"
#include "kestrel/log.h"

namespace {

// Every mutated stream makes FFmpeg and Kestrel say why they skip its packets: hundreds of lines an
// input, which cost most of the run's time (a 10-minute run wrote 520 MB at 233 inputs/s). Findings are
// crashes, hangs and leaks, not messages.
[[maybe_unused]] const bool quiet = [] {
    av_log_set_level(AV_LOG_QUIET);
    kes_log_set_level(KES_LOG_OFF);
    return true;
}();

kes_mem_pool* fuzz_pool() {
    static kes_mem_pool* pool = [] {
        kes_mem_pool_config pc;
        kes_mem_pool_config_init(&pc);
        pc.initial_bytes = 32u << 20;
        pc.name = "fuzz-vdec";
        kes_mem_pool* p = nullptr;
        kes_mem_pool_create(&pc, &p);
        return p;
    }();
    return pool;
}

void receive_all(kes_vdec* vdec) {
    // Bounded: a stream of N bytes cannot hold more frames than this many.
    for (int i = 0; i < 4096; ++i) {
        kes_vdec_frame frame;
        if (kes_vdec_receive_frame(vdec, &frame) != KES_OK) return;  // BUSY: needs input; or a refusal
        if (frame.end_of_stream) return;
        kes_image_release(&frame.image);
    }
}

void run(kes_video_codec codec, const uint8_t* data, size_t size) {
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.board_profile = kes_board_get_profile(KES_BOARD_310);  // 128..4096: small frames are refused early
    cfg.codec = codec;
    cfg.threads = 1;
    cfg.pool = fuzz_pool();
    cfg.max_pixels = 1u << 20;  // keeps a fuzzed SPS from asking for 4096² reference frames
    cfg.output_format = (size & 1) ? KES_PIXEL_NV21 : KES_PIXEL_NV12;
    kes_vdec* vdec = nullptr;
    if (kes_vdec_create(&cfg, &vdec) != KES_OK) return;
    // Chunk sizes from the data itself: whole streams, single bytes and everything between.
    const size_t chunk = size ? 1 + (data[size / 2] % 3 == 0 ? size : data[size / 2] * 7u) : 1;
    int64_t pts = 0;
    for (size_t off = 0; off < size; off += chunk) {
        const size_t n = size - off < chunk ? size - off : chunk;
        kes_vdec_send_packet(vdec, data + off, n, pts++);
        receive_all(vdec);
    }
    kes_vdec_send_packet(vdec, nullptr, 0, KES_VIDEO_NO_PTS);
    receive_all(vdec);
    kes_vdec_destroy(vdec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    run(KES_VIDEO_CODEC_H264, data, size);
    run(KES_VIDEO_CODEC_H265, data, size);
    return 0;
}
