// Fuzz target for PNG decode (libpng behind Kestrel's setjmp wrapper): any bytes must decode or fail
// with a status, never crash or leak (the longjmp path releases the half-filled image).
#include <cstddef>
#include <cstdint>

#include "kestrel/dvpp.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static kes_mem_pool* pool = [] {
        kes_mem_pool_config pc;
        kes_mem_pool_config_init(&pc);
        pc.initial_bytes = 16u << 20;  // a 4096² RGBA claim fails fast instead of eating memory
        pc.name = "fuzz-png";
        kes_mem_pool* p = nullptr;
        kes_mem_pool_create(&pc, &p);
        return p;
    }();
    static kes_dvpp_channel* channel = [] {
        kes_dvpp_channel_config cfg;
        kes_dvpp_channel_config_init(&cfg);
        cfg.board_profile = kes_board_get_profile(KES_BOARD_HOST);
        cfg.pool = pool;
        cfg.max_pixels = 4u << 20;  // libjpeg/libpng work buffers scale with the coded size
        kes_dvpp_channel* ch = nullptr;
        kes_dvpp_channel_create(&cfg, &ch);
        return ch;
    }();
    kes_png_info info;
    info.struct_size = sizeof info;
    kes_png_get_info(channel, data, size, KES_PIXEL_RGB888, &info);
    const kes_pixel_format formats[] = {KES_PIXEL_RGB888, KES_PIXEL_RGBA8888};
    for (kes_pixel_format f : formats) {
        kes_image img;
        if (kes_png_decode(channel, data, size, f, nullptr, &img) == KES_OK) kes_image_release(&img);
    }
    return 0;
}
