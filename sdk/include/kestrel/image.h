/* kestrel/image.h — the image descriptor every module passes around, with stride and size rules.
 *
 * A kes_image is a plain struct describing pixels in one buffer, laid out as DVPP lays them out:
 * plane 0 first, rows `width_stride` bytes apart, `height_stride` rows per plane; further planes
 * follow plane 0 directly (semi-planar: the interleaved chroma plane at width_stride*height_stride).
 *
 *   format                 planes  plane 0 row bytes     chroma plane
 *   YUV400 (grey)          1       w                     —
 *   NV12 / NV21            2       w                     w bytes × h/2 rows, UVUV / VUVU
 *   YUV/YVU 422SP          2       w                     w bytes × h rows
 *   YUV/YVU 440SP          2       w                     2w bytes × h/2 rows (as JPEGD writes it)
 *   YUV/YVU 444SP          2       w                     2w bytes × h rows
 *   I420                   3       w                     U then V, each w/2 × h/2 (stride/2)
 *   YUYV/UYVY/YVYU/VYUY    1       2w (2·align2(w): whole 4-byte macropixels)
 *   YUV444 packed, RGB888, BGR888   3w                   —
 *   ARGB/ABGR/RGBA/BGRA    1       4w                    —
 *
 * width_stride is in BYTES of a plane-0 row (DVPP's widthStride: for RGB888 that is align(w)*3);
 * height_stride is in rows. The enum values equal acldvppPixelFormat's, so board code ports 1:1.
 *
 * Stride rules: each hardware unit writes its own alignment (board.h). kes_image_strides() gives the
 * strides a unit would produce on a board; kes_image_buffer_size() the bytes to allocate.
 * Subsampled chroma needs whole samples, so any stride Kestrel computes is even where the format is
 * subsampled in that direction (NV12 1919×1079 → at least 1920 × 1080), and kes_image_buffer_size
 * refuses odd ones. Sizes are 1..65536 pixels per side; strides at most 2^24 bytes × 2^20 rows.
 *
 * Ownership: an image made by kes_image_alloc owns its buffer (from a pool, or a plain kes_mem buffer)
 * and kes_image_release frees it; an image made by kes_image_wrap borrows the caller's buffer and
 * kes_image_release only clears the struct. Copying the struct copies the pointer, not the pixels:
 * release exactly one copy.
 * Thread-safety: the functions here touch only the structs passed in; concurrent use of different
 * images is safe, of one image is the caller's to synchronise.
 */
#ifndef KESTREL_IMAGE_H
#define KESTREL_IMAGE_H

#include "kestrel/board.h"
#include "kestrel/memory.h"

KES_BEGIN_DECLS

typedef enum kes_pixel_format {
    KES_PIXEL_YUV400 = 0,
    KES_PIXEL_NV12 = 1, /* YUV_SEMIPLANAR_420 */
    KES_PIXEL_NV21 = 2, /* YVU_SEMIPLANAR_420 */
    KES_PIXEL_YUV422SP = 3,
    KES_PIXEL_YVU422SP = 4,
    KES_PIXEL_YUV444SP = 5,
    KES_PIXEL_YVU444SP = 6,
    KES_PIXEL_YUYV422 = 7,
    KES_PIXEL_UYVY422 = 8,
    KES_PIXEL_YVYU422 = 9,
    KES_PIXEL_VYUY422 = 10,
    KES_PIXEL_YUV444 = 11, /* packed */
    KES_PIXEL_RGB888 = 12,
    KES_PIXEL_BGR888 = 13,
    KES_PIXEL_ARGB8888 = 14,
    KES_PIXEL_ABGR8888 = 15,
    KES_PIXEL_RGBA8888 = 16,
    KES_PIXEL_BGRA8888 = 17,
    KES_PIXEL_YUV440SP = 1000,
    KES_PIXEL_YVU440SP = 1001,
    KES_PIXEL_I420 = 2000, /* Kestrel extension: planar Y, U, V (what FFmpeg and libyuv use) */
    KES_PIXEL_UNKNOWN = 10000
} kes_pixel_format;

/* Which hardware unit's output alignment to apply (see board.h for the numbers per board). */
typedef enum kes_stride_rule {
    KES_STRIDE_TIGHT = 0, /* only what the format needs (even sizes for subsampled chroma) */
    KES_STRIDE_VPC = 1,
    KES_STRIDE_JPEGD = 2,
    KES_STRIDE_JPEGE = 3, /* JPEG encoder input */
    KES_STRIDE_PNGD = 4,
    KES_STRIDE_VDEC = 5
} kes_stride_rule;

typedef struct kes_image {
    kes_pixel_format format;
    uint32_t width, height; /* visible pixels */
    uint32_t width_stride;  /* bytes between plane-0 rows */
    uint32_t height_stride; /* rows per plane-0 (chroma planes derive from it) */
    void* data;             /* plane 0; 128-byte aligned when Kestrel allocated it */
    size_t size;            /* bytes available at data (≥ kes_image_buffer_size) */
    kes_mem_pool* pool;     /* owning pool, or NULL */
    uint32_t owns_data;     /* 1: kes_image_release frees data (to pool, or kes_mem_free) */
    uint32_t reserved;
} kes_image;

typedef struct kes_image_plane {
    uint8_t* data;
    uint32_t row_bytes; /* bytes of pixel data per row (no padding) */
    uint32_t stride;    /* bytes between rows */
    uint32_t rows;      /* visible rows */
} kes_image_plane;

/* "NV12", "RGB888", ...; "UNKNOWN" for other values. */
KES_API const char* kes_pixel_format_name(kes_pixel_format format);
/* Planes (1..3); 0 for unknown formats. */
KES_API uint32_t kes_pixel_format_planes(kes_pixel_format format);
/* 1 for the YUV family (including packed YUV), 0 for RGB/BGR/alpha formats and unknown ones. */
KES_API int kes_pixel_format_is_yuv(kes_pixel_format format);
/* Chroma subsampling shifts: 4:2:0 → (1,1), 4:2:2 → (1,0), 4:4:0 → (0,1), others (0,0). */
KES_API kes_status kes_pixel_format_subsampling(kes_pixel_format format, uint32_t* out_shift_x, uint32_t* out_shift_y);

/* Strides a unit following `rule` on `board` produces for a width × height image, e.g. JPEGD on 310:
 * NV12 1920×1080 → 1920 × 1088; on 310B: 1920 × 1088; VPC on 310: 1000×600 → 1008 × 600.
 * The unit's pixel-width alignment is applied first, then multiplied by bytes per pixel (RGB888 on VPC
 * 310: align16(w)·3), except JPEGE, which aligns the byte width (YUYV: align16(2w), docs/BOARD-RULES.md §JPEGE). VDEC's
 * width stride is at least 32 on the boards. The host board gives KES_STRIDE_TIGHT for every rule.
 * Whether the unit accepts `format` at all is not checked here (the dvpp module does that).
 * KES_ERR_INVALID_ARGUMENT for an unknown format/rule/board or a size outside 1..65536. */
KES_API kes_status kes_image_strides(kes_pixel_format format, uint32_t width, uint32_t height, kes_stride_rule rule,
                                     kes_board board, uint32_t* out_width_stride, uint32_t* out_height_stride);

/* Bytes of all planes for the given strides (e.g. NV12: ws*hs*3/2). KES_ERR_INVALID_ARGUMENT if the
 * strides cannot hold the format's rows (odd stride for NV12, stride < 3*w for RGB, ...). */
KES_API kes_status kes_image_buffer_size(kes_pixel_format format, uint32_t width_stride, uint32_t height_stride,
                                         size_t* out_size);

/* Checks that an image is self-consistent: known format, width ≤ stride, buffer large enough, ... */
KES_API kes_status kes_image_validate(const kes_image* image);

/* Describes caller-owned pixels. Strides of 0 mean KES_STRIDE_TIGHT (each separately). The checks of
 * kes_image_validate apply; on failure *out_image is zeroed. */
KES_API kes_status kes_image_wrap(kes_image* out_image, kes_pixel_format format, uint32_t width, uint32_t height,
                                  uint32_t width_stride, uint32_t height_stride, void* data, size_t size);

/* Allocates an image with the given strides (0 = tight) from `pool`, or from kes_mem_alloc when pool is
 * NULL; `size` becomes kes_image_buffer_size() of the strides. The buffer's contents are undefined, as
 * on the board. On failure (KES_ERR_OUT_OF_MEMORY from the pool/backend, KES_ERR_INVALID_ARGUMENT)
 * *out_image is zeroed, so releasing it is harmless. */
KES_API kes_status kes_image_alloc(kes_image* out_image, kes_mem_pool* pool, kes_pixel_format format, uint32_t width,
                                   uint32_t height, uint32_t width_stride, uint32_t height_stride);

/* Frees an owned buffer, then zeroes the struct. NULL or an already released image is a no-op. */
KES_API void kes_image_release(kes_image* image);

/* Where the pixels live: the owning pool's backend, else the kes_mem_alloc buffer's, else (caller memory
 * described by kes_image_wrap) KES_MEM_HOST. With kes_mem_is_host_accessible it says whether the CPU may
 * read the image: not the DVPP output of a PCIe card (ACL_HOST run mode). NULL gives KES_MEM_HOST. */
KES_API kes_mem_backend kes_image_memory(const kes_image* image);

/* Plane `index` (0-based) of a valid image. Chroma row_bytes count whole samples: NV12 1919 wide has
 * 1920-byte UV rows (960 pairs), I420 1919 wide has 960-byte U and V rows. */
KES_API kes_status kes_image_get_plane(const kes_image* image, uint32_t index, kes_image_plane* out_plane);

KES_END_DECLS

#endif /* KESTREL_IMAGE_H */
