// Fuzz target for JPEG decode (TurboJPEG plus Kestrel's marker walk and EXIF parser): any bytes must
// decode or fail with a status, never crash, leak or read out of bounds.
#include <cstddef>
#include <cstdint>

#include "kestrel/dvpp.h"

namespace {

struct Fixture {
    kes_mem_pool* pool = nullptr;
    kes_dvpp_channel* lax = nullptr;
    kes_dvpp_channel* strict = nullptr;
    Fixture() {
        // A small fixed pool: a header claiming 16384² fails the allocation quickly instead of
        // making the fuzzer spend its memory budget.
        kes_mem_pool_config pc;
        kes_mem_pool_config_init(&pc);
        pc.initial_bytes = 16u << 20;
        pc.name = "fuzz-jpeg";
        kes_mem_pool_create(&pc, &pool);
        kes_dvpp_channel_config cfg;
        kes_dvpp_channel_config_init(&cfg);
        cfg.board_profile = kes_board_get_profile(KES_BOARD_HOST);
        cfg.pool = pool;
        cfg.max_pixels = 4u << 20;  // libjpeg/libpng work buffers scale with the coded size
        kes_dvpp_channel_create(&cfg, &lax);
        cfg.board_profile = kes_board_get_profile(KES_BOARD_310);
        cfg.strict = 1;
        kes_dvpp_channel_create(&cfg, &strict);
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static Fixture fx;
    kes_jpeg_info info;
    info.struct_size = sizeof info;
    kes_jpeg_get_info(fx.lax, data, size, KES_PIXEL_UNKNOWN, &info);
    const kes_pixel_format formats[] = {KES_PIXEL_NV12, KES_PIXEL_UNKNOWN, KES_PIXEL_RGB888};
    for (kes_pixel_format f : formats) {
        kes_image img;
        if (kes_jpeg_decode(fx.lax, data, size, f, nullptr, &img) == KES_OK) kes_image_release(&img);
    }
    kes_image img;
    if (kes_jpeg_decode(fx.strict, data, size, KES_PIXEL_NV21, nullptr, &img) == KES_OK) kes_image_release(&img);
    if (kes_jpeg_decode_scaled(fx.lax, data, size, KES_PIXEL_NV12, 16, 16, nullptr, &img) == KES_OK)
        kes_image_release(&img);
    return 0;
}
