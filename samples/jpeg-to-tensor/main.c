/* jpeg-to-tensor — the front half of every camera app on a 310-class board, on the host:
 *
 *   JPEG bytes ──JPEGD──► NV12 (JPEGD strides) ──VPC centre crop + resize──► NV12 size×size
 *              ──AIPP (BT.601 full-range YUV→RGB, ImageNet mean/std)──► NCHW f32 tensor
 *
 *   jpeg-to-tensor [--board 310|310B|host] [--size 224] [-o tensor.npy] [--stats] [photo.jpg]
 *
 * -o writes the tensor as a NumPy .npy file, which kes-model-bench --input NAME=tensor.npy feeds to a
 * model (and numpy.load reads). With no photo it first encodes a synthetic test pattern, so it runs anywhere. Every
 * buffer comes from one memory pool sized at start-up, as on the board; each stage prints its time, and
 * KES_TRACE=trace.json records them for Perfetto. With the Ascend backend (a board, or the simulator:
 * KES_ASCEND_LIB_DIR) JPEGD, JPEGE and VPC run on the DVPP hardware and print the same numbers;
 * --stats then says which stage the hardware served and which the CPU (the hardware refuses some
 * inputs, e.g. a progressive JPEG: the CPU then serves the call, kes_dvpp_channel_get_stats counts it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kestrel/kestrel.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int fail(const char* what) {
    fprintf(stderr, "jpeg-to-tensor: %s: %s (%s)\n", what, kes_last_error(), kes_status_str(kes_last_status()));
    return 1;
}

/* Who served the channel's calls since *seen (then updated), from kes_dvpp_channel_get_stats: what --stats
 * prints per stage. */
static const char* served_since(const kes_dvpp_channel* channel, kes_dvpp_channel_stats* seen) {
    kes_dvpp_channel_stats now;
    now.struct_size = sizeof now;
    if (kes_dvpp_channel_get_stats(channel, &now) != KES_OK) return "?";
    const char* who = now.fallbacks > seen->fallbacks             ? "the CPU (the hardware refused the input)"
                      : now.hardware_calls > seen->hardware_calls ? "the DVPP hardware"
                                                                  : "the CPU";
    *seen = now;
    return who;
}

/* A 640×480 colour test pattern (gradients and bars), JPEG-encoded by Kestrel's own JPEGE. */
static int make_synthetic_jpeg(kes_dvpp_channel* channel, kes_mem_pool* pool, void** out_jpeg, size_t* out_size) {
    const uint32_t w = 640, h = 480;
    uint32_t ws, hs;
    kes_image img;
    if (kes_image_strides(KES_PIXEL_NV12, w, h, KES_STRIDE_JPEGE, kes_board_get(), &ws, &hs) != KES_OK ||
        kes_image_alloc(&img, pool, KES_PIXEL_NV12, w, h, ws, hs) != KES_OK)
        return fail("allocating the test pattern");
    uint8_t* y = img.data;
    uint8_t* uv = y + (size_t)ws * hs;
    for (uint32_t r = 0; r < h; ++r)
        for (uint32_t c = 0; c < w; ++c) y[(size_t)r * ws + c] = (uint8_t)(16 + (c * 219) / w);
    for (uint32_t r = 0; r < h / 2; ++r)
        for (uint32_t c = 0; c < w / 2; ++c) {
            uv[(size_t)r * ws + 2 * c] = (uint8_t)(64 + (r * 128) / (h / 2));      /* U */
            uv[(size_t)r * ws + 2 * c + 1] = (uint8_t)(192 - (c * 128) / (w / 2)); /* V */
        }
    size_t capacity = 0;
    if (kes_jpeg_predict_encode_size(channel, &img, &capacity) != KES_OK) return fail("predicting the JPEG size");
    *out_jpeg = malloc(capacity);
    if (!*out_jpeg || kes_jpeg_encode(channel, &img, 90, *out_jpeg, capacity, out_size) != KES_OK)
        return fail("encoding the test pattern");
    kes_image_release(&img);
    return 0;
}

static int read_file(const char* path, void** out_data, size_t* out_size) {
    FILE* f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "jpeg-to-tensor: cannot open %s\n", path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *out_data = n > 0 ? malloc((size_t)n) : NULL;
    if (!*out_data || fread(*out_data, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        fprintf(stderr, "jpeg-to-tensor: cannot read %s\n", path);
        return 1;
    }
    fclose(f);
    *out_size = (size_t)n;
    return 0;
}

/* The tensor as a .npy file (format 1.0: magic, header length, a Python dict padded to a multiple of
 * 64 bytes, then the data in C order). f32 only, little-endian like every board and x86. */
static int write_npy(const char* path, const kes_tensor* t) {
    char header[256];
    int n = snprintf(header, sizeof header, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    size_t elements = 1;
    for (uint32_t d = 0; d < t->ndim; ++d) {
        n += snprintf(header + n, sizeof header - (size_t)n,
                      t->ndim == 1 ? "%lld,"
                      : d          ? ", %lld"
                                   : "%lld",
                      (long long)t->shape[d]);
        elements *= (size_t)t->shape[d];
    }
    n += snprintf(header + n, sizeof header - (size_t)n, "), }");
    while ((10 + n + 1) % 64 != 0) header[n++] = ' ';
    header[n++] = '\n';
    const unsigned char prefix[10] = {
        0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 0xff), (unsigned char)(n >> 8)};
    FILE* f = fopen(path, "wb");
    int ok = f && fwrite(prefix, 1, sizeof prefix, f) == sizeof prefix &&
             fwrite(header, 1, (size_t)n, f) == (size_t)n && fwrite(t->data, sizeof(float), elements, f) == elements;
    if (f && fclose(f) != 0) ok = 0;
    if (!ok) {
        fprintf(stderr, "jpeg-to-tensor: -o: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

static int run(int argc, char** argv) {
    const char* path = NULL;
    const char* out_path = NULL;
    uint32_t size = 224;
    int stats = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--board") == 0 && i + 1 < argc) {
            kes_board b;
            if (kes_board_from_name(argv[++i], &b) != KES_OK || kes_board_set(b) != KES_OK) {
                fprintf(stderr, "jpeg-to-tensor: --board: %s\n", kes_last_error());
                return 2; /* a bad argument is a usage error, like every other tool's */
            }
        } else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            char* end = NULL;
            const char* arg = argv[++i];
            const unsigned long v = strtoul(arg, &end, 10);
            if (arg[0] == '\0' || arg[0] == '-' || *end != '\0' || v > 1024) {
                fprintf(stderr, "jpeg-to-tensor: --size must be an even number in 32..1024 (got '%s')\n", arg);
                return 2;
            }
            size = (uint32_t)v;
        } else if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) && i + 1 < argc) {
            out_path = argv[++i];
        } else if (strcmp(argv[i], "--stats") == 0) {
            stats = 1;
        } else if (argv[i][0] == '-') {
            const int help = strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
            fprintf(help ? stdout : stderr,
                    "usage: jpeg-to-tensor [--board 310|310B|host] [--size N] [-o tensor.npy] [--stats] [photo.jpg]\n");
            return help ? 0 : 2;
        } else {
            path = argv[i];
        }
    }
    if (size < 32 || size > 1024 || size % 2) {
        fprintf(stderr, "jpeg-to-tensor: --size must be even and in 32..1024\n");
        return 2;
    }

    kes_mem_pool_config pool_cfg;
    kes_mem_pool_config_init(&pool_cfg);
    /* DVPP memory, as ACLLite carves it: on a board the DVPP hardware writes the frames straight into
     * it and the CPU reads them in place (host memory when Kestrel runs on the CPU). On a PCIe card
     * (ACL_HOST) the CPU cannot read DVPP memory, and AIPP runs on the CPU here: then a host pool, into
     * which Kestrel copies each hardware result. */
    pool_cfg.backend = kes_mem_is_host_accessible(KES_MEM_DVPP) ? KES_MEM_DVPP : KES_MEM_HOST;
    pool_cfg.initial_bytes = 64u << 20;
    pool_cfg.grow_bytes = 64u << 20; /* big photos: grow in chunks rather than fail */
    pool_cfg.name = "frames";
    kes_mem_pool* pool = NULL;
    kes_dvpp_channel* channel = NULL;
    if (kes_mem_pool_create(&pool_cfg, &pool) != KES_OK) return fail("creating the pool");
    kes_dvpp_channel_config ch_cfg;
    kes_dvpp_channel_config_init(&ch_cfg);
    ch_cfg.pool = pool;
    if (kes_dvpp_channel_create(&ch_cfg, &channel) != KES_OK) return fail("creating the DVPP channel");
    printf("board %s, %s\n", kes_board_name(kes_board_get()), kes_build_info());

    kes_dvpp_channel_stats seen;
    memset(&seen, 0, sizeof seen);
    void* jpeg = NULL;
    size_t jpeg_size = 0;
    if (path ? read_file(path, &jpeg, &jpeg_size) : make_synthetic_jpeg(channel, pool, &jpeg, &jpeg_size)) return 1;
    const char* jpege_by = path ? NULL : served_since(channel, &seen);

    double t0 = now_ms();
    kes_image decoded;
    if (kes_jpeg_decode(channel, jpeg, jpeg_size, KES_PIXEL_NV12, NULL, &decoded) != KES_OK) return fail("JPEGD");
    double t1 = now_ms();
    const char* jpegd_by = served_since(channel, &seen);
    printf("JPEGD   %s: %zu bytes -> %ux%u NV12, stride %ux%u  %.2f ms\n", path ? path : "(test pattern)", jpeg_size,
           decoded.width, decoded.height, decoded.width_stride, decoded.height_stride, t1 - t0);

    /* Centre square, even left/top and odd right/bottom so it is valid on the 310's VPC too. */
    uint32_t side = (decoded.width < decoded.height ? decoded.width : decoded.height) & ~1u;
    kes_vpc_roi roi;
    roi.left = ((decoded.width - side) / 2) & ~1u;
    roi.top = ((decoded.height - side) / 2) & ~1u;
    roi.right = roi.left + side - 1;
    roi.bottom = roi.top + side - 1;
    kes_image resized;
    if (kes_vpc_crop_resize(channel, &decoded, &roi, size, size, KES_VPC_INTERP_BILINEAR, NULL, &resized) != KES_OK)
        return fail("VPC crop+resize");
    double t2 = now_ms();
    const char* vpc_by = served_since(channel, &seen);
    printf("VPC     crop [%u,%u]-[%u,%u] -> %ux%u NV12, stride %ux%u  %.2f ms\n", roi.left, roi.top, roi.right,
           roi.bottom, resized.width, resized.height, resized.width_stride, resized.height_stride, t2 - t1);

    kes_aipp_params aipp;
    kes_aipp_params_init(&aipp);
    /* JPEGD output is full-range BT.601 (JFIF), hence the "wide" table. */
    if (kes_aipp_params_apply_recipe(&aipp, KES_AIPP_RECIPE_IMAGENET, KES_AIPP_YUV420SP_U8,
                                     KES_AIPP_CSC_YUV2RGB_BT601_WIDE) != KES_OK)
        return fail("AIPP recipe");
    const int64_t shape[4] = {1, 3, size, size};
    kes_tensor tensor;
    if (kes_tensor_alloc(&tensor, pool, KES_F32, KES_LAYOUT_NCHW, 4, shape) != KES_OK) return fail("tensor");
    if (kes_aipp_execute(&aipp, NULL, &resized, 1, &tensor) != KES_OK) return fail("AIPP");
    double t3 = now_ms();
    printf("AIPP    ImageNet RGB -> tensor 1x3x%ux%u f32 NCHW  %.2f ms\n", size, size, t3 - t2);

    const float* data = tensor.data;
    const size_t plane = (size_t)size * size;
    for (int c = 0; c < 3; ++c) {
        double sum = 0, lo = data[c * plane], hi = lo;
        for (size_t i = 0; i < plane; ++i) {
            const double v = data[c * plane + i];
            sum += v;
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        printf("        channel %c: mean %+.3f  min %+.3f  max %+.3f\n", "RGB"[c], sum / plane, lo, hi);
    }
    if (out_path) {
        if (write_npy(out_path, &tensor)) return 1;
        printf("wrote   %s (1x3x%ux%u f32 NCHW: kes-model-bench --input NAME=%s)\n", out_path, size, size, out_path);
    }
    kes_mem_pool_stats pool_stats;
    kes_mem_pool_get_stats(pool, &pool_stats);
    printf("pool    peak %.1f MiB of %.1f MiB\n", pool_stats.peak_in_use_bytes / 1048576.0,
           pool_stats.capacity_bytes / 1048576.0);
    if (stats) {
        /* seen holds the channel's totals now. AIPP is no DVPP unit: on a board it runs inside a model. */
        printf(
            "stats   DVPP channel %s: %llu calls served by the DVPP hardware, %llu by the CPU (%llu refused by "
            "the hardware)\n",
            seen.backend == KES_BACKEND_ASCEND ? "with the hardware" : "without hardware (the CPU path)",
            (unsigned long long)seen.hardware_calls, (unsigned long long)seen.cpu_calls,
            (unsigned long long)seen.fallbacks);
        if (jpege_by) printf("        JPEGE by %s\n", jpege_by);
        printf("        JPEGD by %s\n        VPC   by %s\n        AIPP  by the CPU (kes_aipp_execute)\n", jpegd_by,
               vpc_by);
    }

    kes_tensor_release(&tensor);
    kes_image_release(&resized);
    kes_image_release(&decoded);
    free(jpeg);
    kes_dvpp_channel_destroy(channel);
    kes_mem_pool_destroy(pool);
    return 0;
}

int main(int argc, char** argv) {
    int rc = run(argc, argv);
    /* KES_TRACE=trace.json is written at exit, too late to change the exit status; stopping here
     * makes a trace that cannot be written fail the run instead of passing unnoticed. */
    if (kes_trace_enabled() && kes_trace_stop() != KES_OK) {
        fprintf(stderr, "jpeg-to-tensor: KES_TRACE: %s\n", kes_last_error());
        if (rc == 0) rc = 1;
    }
    return rc;
}
