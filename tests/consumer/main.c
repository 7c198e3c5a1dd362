/* A C app that links the installed libkestrel.a: version check, board profile, a pooled frame. */
#include <stdio.h>

#include "kestrel/kestrel.h"

int main(void) {
    if (kes_version() != KES_VERSION) {
        fprintf(stderr, "header %d vs library %d\n", KES_VERSION, kes_version());
        return 1;
    }
    kes_mem_pool_config cfg;
    kes_mem_pool_config_init(&cfg);
    cfg.initial_bytes = 8u << 20;
    kes_mem_pool* pool = NULL;
    if (kes_mem_pool_create(&cfg, &pool) != KES_OK) {
        fprintf(stderr, "pool: %s\n", kes_last_error());
        return 1;
    }
    kes_image frame;
    uint32_t ws, hs;
    if (kes_image_strides(KES_PIXEL_NV12, 1920, 1080, KES_STRIDE_JPEGD, KES_BOARD_310, &ws, &hs) != KES_OK ||
        kes_image_alloc(&frame, pool, KES_PIXEL_NV12, 1920, 1080, ws, hs) != KES_OK) {
        fprintf(stderr, "image: %s\n", kes_last_error());
        return 1;
    }
    printf("consumer: Kestrel %s, 1080p NV12 on 310 JPEGD = %ux%u stride, %zu bytes at %p\n", kes_version_string(), ws,
           hs, frame.size, frame.data);
    kes_image_release(&frame);
    kes_mem_pool_destroy(pool);
    return (ws == 1920 && hs == 1088) ? 0 : 1;
}
