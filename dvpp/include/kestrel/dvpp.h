/* kestrel/dvpp.h — DVPP on the host: JPEG decode (JPEGD), JPEG encode (JPEGE), PNG decode (PNGD), VPC.
 *
 * What a 310-class board's DVPP does to still images, done on the CPU with libjpeg-turbo (TurboJPEG
 * API 2) and libpng, following the board's documented rules (docs/BOARD-RULES.md, whose sections the
 * comments below cite as "BOARD-RULES §VPC") so that an app behaves here as it will on the board: the same
 * output formats per source, the same strides (kes_image_strides with KES_STRIDE_JPEGD / KES_STRIDE_PNGD),
 * the same size limits, the same refusals. VPC: crop/resize, crop-and-paste, letterbox and batch crop on
 * NV12/NV21, colour conversion NV12/NV21/I420 ↔ RGB888/BGR888 (BT.601/BT.709, full/narrow range), between
 * the 4:2:0 layouts and to YUV400. Video (VDEC/VENC) is in kestrel/dvpp_video.h; the affine warp (rotated
 * crops, which the VPC cannot do: the CPU) in kestrel/warp.h; drawing and mask blending in kestrel/osd.h.
 *
 * Channels: like acldvppCreateChannel, every call goes through a kes_dvpp_channel. A channel captures
 * the board profile when it is created (kes_board_set later does not change it), owns its decoder and
 * encoder state (TurboJPEG handles), and optionally a default output pool.
 *
 * The DVPP hardware: when the Ascend backend is active (kestrel/backend.h: KES_BACKEND=auto with CANN
 * present, or ascend) and libacl_dvpp.so loads, a channel also owns a hardware DVPP channel and a stream,
 * and JPEG decode and encode and VPC run on the hardware (DVPP V1, acldvpp*; VDEC too, kestrel/dvpp_video.h):
 * the same calls, the same rules, the same output geometry. The image then lives in DVPP memory (KES_MEM_DVPP, or the
 * pool passed when its backend is KES_MEM_DVPP; another pool gets a copy), so it feeds VPC or a model's static-AIPP
 * input with no copy. On a board (ACL_DEVICE run mode) the CPU reads it directly; on a PCIe card (ACL_HOST) it does
 * not: ask kes_mem_is_host_accessible(KES_MEM_DVPP), or pass a host pool. Where the hardware refuses an input
 * (progressive or arithmetic-coded JPEG, CMYK, 4:1:1, RGB output, scaled decode, EXIF handling turned off, or the
 * hardware's own refusal, ACL_ERROR_UNSUPPORTED_JPEG) the CPU path serves the call by itself, logged once per cause;
 * kes_dvpp_channel_get_stats counts both. kes_dvpp_channel_config.backend = KES_BACKEND_CPU keeps a channel off the
 * hardware.
 *
 * Thread-safety: a channel is used by one thread at a time (its TurboJPEG handles are not shareable);
 * give each thread its own channel — different channels run fully in parallel. Using one channel
 * from two threads at once is the caller's bug. The pools passed in are thread-safe (memory.h).
 *
 * Ownership: the caller owns the input bytes, the output buffer of kes_jpeg_encode, the canvas of
 * kes_vpc_crop_and_paste and every image a decode or VPC call fills: release it with kes_image_release (it is allocated
 * from the pool passed to the call, else the channel's pool, else kes_mem_alloc). On failure the output image is
 * zeroed.
 *
 * Errors: KES_ERR_INVALID_ARGUMENT for a broken rule of the call or of the board (size outside the
 * unit's limits, output format the source cannot give, stride rule of the encoder input);
 * KES_ERR_UNSUPPORTED for inputs the board's hardware refuses in strict mode (progressive,
 * arithmetic, CMYK/YCCK/RGB colour, 4:1:1, ...) and for what the host libraries cannot decode at all
 * (12-bit and lossless JPEG), and for VPC format pairs Kestrel does not implement;
 * KES_ERR_CORRUPT_DATA for truncated or malformed data, including a bad PNG CRC; KES_ERR_OUT_OF_MEMORY when the pool is
 * full; KES_ERR_IO / KES_ERR_NOT_FOUND for files. kes_last_error() names the call and the reason.
 *
 * Choices where the boards' documentation is silent (UNCONFIRMED against real boards; each is what Kestrel does):
 *   - Chroma for an output subsampling coarser than the source (4:4:4 → NV12, ...) is the rounded
 *     mean of the source samples covering each output sample (JPEGD does not document its filter).
 *   - Odd sizes: on 310B, 4:2:0 output (NV12/NV21) has width and height rounded down to even
 *     (BOARD-RULES §JPEGD, read the size back from the image); on 310 and host odd sizes are kept (the
 *     chroma plane then holds ceil(w/2) × ceil(h/2) samples, as image.h describes).
 *   - EXIF orientation is applied (BOARD-RULES §JPEGD) before the even rounding and before the strides are
 *     computed; KES_PIXEL_UNKNOWN resolves to the VU-ordered form of the *source* subsampling
 *     (4:0:0 → NV21, 4:1:1 → NV21) even when a 90° rotation would transpose it.
 *   - libjpeg warnings (e.g. "Premature end of JPEG file", which libjpeg answers with grey rows)
 *     are errors (KES_ERR_CORRUPT_DATA) unless the channel sets accept_warnings: the hardware
 *     decoder reports a broken stream rather than padding it.
 *   - Size limits are checked on the coded JPEG size (before orientation), as PredictDecSize does.
 *   - RGB888/BGR888 JPEG output is a Kestrel extension (the board's JPEGD writes YUV only); it uses the
 *     JPEGD stride rule with 3 bytes per pixel. Software fallback colour conversions use JFIF BT.601
 *     full range; CMYK is taken as Adobe's inverted CMYK (R = C·K/255).
 *   - PNG: 16-bit samples are scaled to 8 bits (png_set_scale_16), palette and grey expanded, tRNS
 *     becomes alpha for RGBA output; a bad CRC in any chunk, critical or ancillary, is an error.
 *     Gamma is not applied (the board does not either, as far as documented).
 *   - VPC resize is bit-exact with OpenCV 4.6 cv::resize (INTER_LINEAR / INTER_NEAREST) on the luma
 *     plane and on the chroma plane as 2-channel pairs, on EVERY profile: the 310B promises OpenCV's
 *     results, and the 310's own filters (its default "high-order filter" included) are not public,
 *     so Kestrel gives it the same pixels (UNCONFIRMED against a 310).
 *   - VPC ROI parity on 310 is enforced (an error), not rounded as ACLLite does.
 *   - Paste areas are 4:2:0-aligned on every profile (left, top, width, height even); on 310 also the
 *     odd right/bottom parity and a 16-aligned left. Letterbox centres by default (left rounded down
 *     to that alignment, top to even) and can place at the top-left; padding is black unless set.
 *   - Batch crop checks every ROI before allocating anything: all outputs or none.
 *   - Colour conversion on 310 outputs NV12/NV21 only with the default BT.601 full-range matrix (the
 *     310 VPC writes only 4:2:0 SP and has no matrix setting); 310B/host allow every listed pair.
 *   - JPEGE from packed 4:2:2 writes a 4:2:2 JPEG (the board's choice is not documented).
 */
#ifndef KESTREL_DVPP_H
#define KESTREL_DVPP_H

#include "kestrel/backend.h"
#include "kestrel/board.h"
#include "kestrel/image.h"
#include "kestrel/memory.h"
#include "kestrel/status.h"

KES_BEGIN_DECLS

/* ---- channels ------------------------------------------------------------------------------------ */

typedef struct kes_dvpp_channel kes_dvpp_channel; /* opaque handle */

typedef struct kes_dvpp_channel_config {
    uint32_t struct_size;                   /* sizeof(kes_dvpp_channel_config) */
    const kes_board_profile* board_profile; /* NULL: kes_board_active_profile() now; copied */
    kes_mem_pool* pool;                     /* default pool for outputs; NULL: kes_mem_alloc */
    uint32_t strict;                        /* 1: refuse what the board's hardware refuses (KES_ERR_UNSUPPORTED);
                                               0 (default): decode it as the board's software fallback would */
    uint32_t accept_warnings;               /* 1: a JPEG that decodes with libjpeg warnings is accepted (default 0) */
    uint32_t apply_orientation; /* 1 (default): apply EXIF orientation as JPEGD does (BOARD-RULES §JPEGD) */
    uint64_t max_pixels;        /* 0: only the board's size limits. Otherwise a decode of a JPEG/PNG whose coded
                                   width × height exceeds this is refused (KES_ERR_INVALID_ARGUMENT) before
                                   anything is allocated: a guard for untrusted input, since libjpeg buffers
                                   a whole progressive image of coefficients whatever the output scale */
    kes_backend backend;        /* KES_BACKEND_AUTO (default): the DVPP hardware when the process's backend is
                                   Ascend and libacl_dvpp.so loaded, else the CPU. KES_BACKEND_CPU: never the
                                   hardware. KES_BACKEND_ASCEND: the hardware or a failed create (the reason
                                   in kes_last_error), whatever the process's backend; AUTO under
                                   KES_BACKEND=ascend without libacl_dvpp.so gets the CPU (logged once). Apps
                                   built before this field get AUTO. */
} kes_dvpp_channel_config;

/* Defaults: active board, no pool, strict 0, accept_warnings 0, apply_orientation 1, max_pixels 0,
 * backend AUTO. */
KES_API void kes_dvpp_channel_config_init(kes_dvpp_channel_config* config);

/* Creates a channel. config may be NULL (defaults). KES_ERR_INVALID_ARGUMENT for a bad struct_size,
 * KES_ERR_OUT_OF_MEMORY if the codec state cannot be created. With the hardware: KES_ERR_BUSY when the
 * SoC's DVPP channels are all taken (the message names the limit; destroy a channel, or create this one
 * with backend KES_BACKEND_CPU), or the mapped AscendCL error of acldvppCreateChannel. */
KES_API kes_status kes_dvpp_channel_create(const kes_dvpp_channel_config* config, kes_dvpp_channel** out_channel);
KES_API void kes_dvpp_channel_destroy(kes_dvpp_channel* channel); /* NULL is a no-op */

/* The board profile the channel captured at creation (valid while the channel lives). */
KES_API const kes_board_profile* kes_dvpp_channel_profile(const kes_dvpp_channel* channel);

typedef struct kes_dvpp_channel_stats {
    uint32_t struct_size;    /* sizeof(kes_dvpp_channel_stats), set by the caller */
    kes_backend backend;     /* KES_BACKEND_ASCEND when the channel owns a hardware DVPP channel, else CPU */
    uint64_t hardware_calls; /* calls the DVPP hardware served */
    uint64_t cpu_calls;      /* calls the CPU path served, fallbacks included */
    uint64_t fallbacks;      /* of cpu_calls: the channel has the hardware but it refused the input */
} kes_dvpp_channel_stats;

/* Which path served the channel's calls so far. */
KES_API kes_status kes_dvpp_channel_get_stats(const kes_dvpp_channel* channel, kes_dvpp_channel_stats* out_stats);

/* ---- JPEG decode (JPEGD, BOARD-RULES §JPEGD) ------------------------------------------------------------------ */

/* Values equal acldvppJpegFormat's. */
typedef enum kes_jpeg_subsampling {
    KES_JPEG_CSS_444 = 0,
    KES_JPEG_CSS_422 = 1,
    KES_JPEG_CSS_420 = 2,
    KES_JPEG_CSS_GRAY = 3,
    KES_JPEG_CSS_440 = 4,
    KES_JPEG_CSS_411 = 5,
    KES_JPEG_CSS_UNKNOWN = 1000
} kes_jpeg_subsampling;

/* Why the board's hardware would refuse a JPEG (bit flags in kes_jpeg_info.hw_unsupported). */
#define KES_JPEG_HW_PROGRESSIVE 0x01u
#define KES_JPEG_HW_ARITHMETIC 0x02u
#define KES_JPEG_HW_LOSSLESS 0x04u
#define KES_JPEG_HW_PRECISION 0x08u   /* not 8 bits per sample */
#define KES_JPEG_HW_COLORSPACE 0x10u  /* CMYK, YCCK or RGB: not YUV */
#define KES_JPEG_HW_SUBSAMPLING 0x20u /* 4:1:1 or unusual factors */

typedef struct kes_jpeg_info {
    uint32_t struct_size;               /* sizeof(kes_jpeg_info), set by the caller */
    uint32_t coded_width, coded_height; /* as stored in the frame header */
    uint32_t width, height;             /* as displayed: swapped for EXIF orientations 5..8 when the
                                           channel applies orientation */
    kes_jpeg_subsampling subsampling;
    uint32_t components;              /* 1 grey, 3 YCbCr/RGB, 4 CMYK/YCCK */
    uint32_t orientation;             /* EXIF orientation 1..8 (1 when absent or invalid) */
    uint32_t precision;               /* bits per sample (8; 12 for extended JPEGs) */
    uint32_t progressive, arithmetic; /* 1 if so */
    uint32_t hw_unsupported;          /* KES_JPEG_HW_* flags; 0: the hardware decoder takes it */
    /* For the format asked for in kes_jpeg_get_info (PredictDecSize): */
    kes_pixel_format output_format;       /* KES_PIXEL_UNKNOWN resolved (see the header comment) */
    uint32_t output_width, output_height; /* after orientation and the 310B even rounding */
    uint32_t width_stride, height_stride;
    size_t output_size; /* bytes a decode allocates: kes_image_buffer_size */
} kes_jpeg_info;

/* Reads the headers only (GetImageInfo + PredictDecSize). `format` is the output format of a later
 * decode (KES_PIXEL_UNKNOWN: the board's default). Refuses formats the source cannot give and sizes
 * outside jpegd_min_dim..jpegd_max_dim (KES_ERR_INVALID_ARGUMENT); does not apply strict mode. */
KES_API kes_status kes_jpeg_get_info(kes_dvpp_channel* channel, const void* data, size_t size, kes_pixel_format format,
                                     kes_jpeg_info* out_info);

/* Decodes to `format`: NV12/NV21 from every source; YUV/YVU444SP from 4:4:4, 422SP from 4:2:2,
 * 440SP from 4:4:0 (BOARD-RULES §JPEGD table); RGB888/BGR888 from any (extension); UNKNOWN as above. A grey
 * JPEG gives UV bytes of 0x80. `pool` NULL: the channel's pool. */
KES_API kes_status kes_jpeg_decode(kes_dvpp_channel* channel, const void* data, size_t size, kes_pixel_format format,
                                   kes_mem_pool* pool, kes_image* out_image);

/* Reads the whole file, then kes_jpeg_decode. KES_ERR_NOT_FOUND / KES_ERR_IO for the file. */
KES_API kes_status kes_jpeg_decode_file(kes_dvpp_channel* channel, const char* path, kes_pixel_format format,
                                        kes_mem_pool* pool, kes_image* out_image);

/* Decode-at-scale: picks the smallest libjpeg-turbo DCT scaling factor (1/8, 1/4, 3/8, ..., 1) whose
 * output (as displayed, after orientation) is still at least target_width × target_height, so a
 * 1920×1080 photo with target 224×224 decodes at 1/4 (480×270). Targets larger than the image give
 * scale 1. target sizes must be ≥ 1. */
KES_API kes_status kes_jpeg_decode_scaled(kes_dvpp_channel* channel, const void* data, size_t size,
                                          kes_pixel_format format, uint32_t target_width, uint32_t target_height,
                                          kes_mem_pool* pool, kes_image* out_image);

/* ---- JPEG encode (JPEGE, BOARD-RULES §JPEGE) ------------------------------------------------------------------ */

/* The board's acldvppJpegPredictEncSize: kes_image_buffer_size of the input's strides + 640 + 128,
 * rounded up to 2 MiB. An output buffer of this size always suffices. */
KES_API kes_status kes_jpeg_predict_encode_size(kes_dvpp_channel* channel, const kes_image* image, size_t* out_size);

/* Encodes an NV12/NV21 image as baseline Huffman JPEG 4:2:0, or a packed 4:2:2 image (YUYV, UYVY,
 * YVYU, VYUY) as 4:2:2 (the input's subsampling: nothing is thrown away; the board's JPEGE output
 * subsampling for packed input is not documented, UNCONFIRMED), at `quality` 1..100. Board input rules
 * (BOARD-RULES §JPEGE), each KES_ERR_INVALID_ARGUMENT: width (and for NV12/NV21 height) even, both within
 * jpege_min_dim..jpege_max_dim; width_stride (bytes) a multiple of jpege_width_align — align16(w) for
 * NV12/NV21, align16(2w) for packed 4:2:2 (kes_image_strides KES_STRIDE_JPEGE gives it);
 * height_stride ≥ height. Writes at most `capacity` bytes to `out` and the size to *out_size;
 * KES_ERR_INVALID_ARGUMENT if the JPEG does not fit (use kes_jpeg_predict_encode_size). */
KES_API kes_status kes_jpeg_encode(kes_dvpp_channel* channel, const kes_image* image, uint32_t quality, void* out,
                                   size_t capacity, size_t* out_size);

/* ---- PNG decode (PNGD, BOARD-RULES §PNGD) -------------------------------------------------------------------- */

typedef struct kes_png_info {
    uint32_t struct_size; /* sizeof(kes_png_info), set by the caller */
    uint32_t width, height;
    uint32_t bit_depth;  /* 1, 2, 4, 8 or 16 as stored */
    uint32_t color_type; /* PNG colour type: 0 grey, 2 RGB, 3 palette, 4 grey+alpha, 6 RGBA */
    uint32_t has_alpha;  /* alpha channel or tRNS chunk */
    uint32_t interlaced;
    kes_pixel_format output_format; /* UNKNOWN resolved to RGBA8888 (BOARD-RULES §PNGD) */
    uint32_t width_stride, height_stride;
    size_t output_size;
} kes_png_info;

/* Reads the PNG header for a decode to `format` (RGB888, RGBA8888 or UNKNOWN = RGBA8888). Sizes
 * outside pngd_min_dim..pngd_max_dim are KES_ERR_INVALID_ARGUMENT; input of ≤ 29 bytes is
 * KES_ERR_CORRUPT_DATA (the board's minimum, BOARD-RULES §PNGD). */
KES_API kes_status kes_png_get_info(kes_dvpp_channel* channel, const void* data, size_t size, kes_pixel_format format,
                                    kes_png_info* out_info);

/* Decodes to RGB888 or RGBA8888 with the PNGD strides (BOARD-RULES §PNGD). Every bit depth and colour type is
 * converted (16-bit scaled, palette and grey expanded, alpha dropped for RGB888 / set to 255 for
 * RGBA8888 when absent). A bad CRC or truncated data is KES_ERR_CORRUPT_DATA. */
KES_API kes_status kes_png_decode(kes_dvpp_channel* channel, const void* data, size_t size, kes_pixel_format format,
                                  kes_mem_pool* pool, kes_image* out_image);

KES_API kes_status kes_png_decode_file(kes_dvpp_channel* channel, const char* path, kes_pixel_format format,
                                       kes_mem_pool* pool, kes_image* out_image);

/* ---- VPC crop / resize (BOARD-RULES §VPC) ------------------------------------------------------------------ */

/* Values equal acldvppSetResizeConfigInterpolation's. */
typedef enum kes_vpc_interp {
    KES_VPC_INTERP_DEFAULT = 0,  /* 310: the board's undocumented "high-order filter" — Kestrel uses
                                    bilinear (UNCONFIRMED); 310B/host: bilinear, as the board treats 0 */
    KES_VPC_INTERP_BILINEAR = 1, /* OpenCV cv::resize INTER_LINEAR on each plane, bit-exact with OpenCV
                                    4.6 (see kes_vpc_crop_resize) */
    KES_VPC_INTERP_NEAREST = 2   /* OpenCV INTER_NEAREST: source = min(floor(dst · src/dst), src − 1) */
} kes_vpc_interp;

/* Inclusive pixel rectangle, as acldvppCreateRoiConfig(left, right, top, bottom). */
typedef struct kes_vpc_roi {
    uint32_t left, top, right, bottom;
} kes_vpc_roi;

/* Crops `roi` of an NV12/NV21 image (NULL: the whole image, its width and height rounded down to even
 * as VPC does) and resizes it to out_width × out_height (both even), writing an image of the same
 * format with VPC strides (kes_image_strides KES_STRIDE_VPC) allocated from `pool`.
 * Rules of the channel's profile, each a KES_ERR_INVALID_ARGUMENT naming it:
 *   - input vpc_min_width × vpc_min_height .. vpc_max_input_dim_nv12 per side; output
 *     vpc_min_width × vpc_min_height .. vpc_max_output_width × vpc_max_output_height;
 *   - the ROI inside the image; on 310 (vpc_roi_parity) left/top even and right/bottom odd — Kestrel
 *     ENFORCES the parity instead of rounding it as ACLLite does, so an app never gets pixels other
 *     than the ones it named (round in the app if that is what it wants);
 *   - scale per axis within [1/vpc_scale_min_den, vpc_scale_max] of the ROI.
 * Pixels: the luma ROI is resized as a CV_8UC1 image and the chroma pairs under it (ROI left/right
 * halved) as a CV_8UC2 image, each bit-exact with OpenCV 4.6 cv::resize (INTER_LINEAR or
 * INTER_NEAREST) of the same plane — on every profile (the 310's own filters are undocumented; Kestrel
 * gives it the same pixels, UNCONFIRMED against a board). Bilinear is OpenCV's 8-bit fixed point:
 * half-pixel centres, 11-bit weights, clamped edges, its vectorised rounding of the vertical step,
 * and an exact 2× downscale on both axes averages 2×2 (INTER_AREA), all as OpenCV does.
 * Other input formats are KES_ERR_UNSUPPORTED (convert with kes_vpc_convert_color first);
 * interpolation values 3/4 (TensorFlow-like, 310 only) are KES_ERR_UNSUPPORTED. */
KES_API kes_status kes_vpc_crop_resize(kes_dvpp_channel* channel, const kes_image* in, const kes_vpc_roi* roi,
                                       uint32_t out_width, uint32_t out_height, kes_vpc_interp interp,
                                       kes_mem_pool* pool, kes_image* out_image);

/* Crop-and-paste (acldvppVpcCropAndPasteAsync): resizes `crop` of `in` (NULL: whole image, as above)
 * into the inclusive rectangle `paste` of `canvas`, an NV12/NV21 image the caller owns (e.g. from
 * kes_image_alloc), of the same format; pixels of the canvas outside `paste` are left as they were.
 * Rules, each KES_ERR_INVALID_ARGUMENT: the crop rules of kes_vpc_crop_resize; the canvas within the
 * VPC output size limits with strides multiple of vpc_width_align × vpc_height_align (VPC output
 * stride rule); `paste` inside the canvas, left/top/width/height even (4:2:0), the 310 parity rule, and
 * left a multiple of vpc_paste_left_align (16 on 310); the crop → paste scale within the ratio limits.
 * Pixels are those of kes_vpc_crop_resize to the paste size. */
KES_API kes_status kes_vpc_crop_and_paste(kes_dvpp_channel* channel, const kes_image* in, const kes_vpc_roi* crop,
                                          kes_image* canvas, const kes_vpc_roi* paste, kes_vpc_interp interp);

typedef enum kes_vpc_letterbox_align {
    KES_VPC_LETTERBOX_CENTER = 0,  /* centred (left rounded down to the paste-left alignment, top to even) */
    KES_VPC_LETTERBOX_TOP_LEFT = 1 /* at (0, 0): padding right and bottom only */
} kes_vpc_letterbox_align;

typedef struct kes_vpc_letterbox_config {
    uint32_t struct_size;           /* sizeof(kes_vpc_letterbox_config) */
    kes_vpc_interp interp;          /* default KES_VPC_INTERP_BILINEAR */
    kes_vpc_letterbox_align align;  /* default KES_VPC_LETTERBOX_CENTER */
    uint8_t fill_y, fill_u, fill_v; /* padding colour; default black (0, 128, 128); YOLO's grey is 114,128,128 */
} kes_vpc_letterbox_config;

KES_API void kes_vpc_letterbox_config_init(kes_vpc_letterbox_config* config);

/* Letterbox (ACLLite ProportionPaste / ProportionPasteCenter): allocates an out_width × out_height
 * image (even sizes, VPC strides) of the input's format, fills it with the padding colour and pastes
 * `crop` (NULL: whole image) scaled to keep its aspect ratio: the paste area is the largest one of the
 * crop's aspect ratio (each side rounded to nearest, then down to even) that fits, placed per `align`
 * and obeying the paste rules above. *out_paste_area (may be NULL) receives it, to map results back.
 * config NULL: defaults. */
KES_API kes_status kes_vpc_letterbox(kes_dvpp_channel* channel, const kes_image* in, const kes_vpc_roi* crop,
                                     uint32_t out_width, uint32_t out_height, const kes_vpc_letterbox_config* config,
                                     kes_mem_pool* pool, kes_image* out_image, kes_vpc_roi* out_paste_area);

/* One crop of a batch: images[image_index], inclusive `roi`, resized to out_width × out_height. */
typedef struct kes_vpc_batch_roi {
    uint32_t image_index;
    kes_vpc_roi roi;
    uint32_t out_width, out_height;
} kes_vpc_batch_roi;

/* Batch crop (acldvppVpcBatchCropAsync): roi_count crops (1..vpc_max_batch_rois, 256 on the boards:
 * BATCH_ROI_MAX_SIZE) from image_count NV12/NV21 images, each as kes_vpc_crop_resize, into
 * out_images[0..roi_count) allocated from `pool` (else the channel's). Every rule of every ROI is
 * checked before anything is allocated, and the batch succeeds or fails as a whole: on failure all
 * outputs are zeroed; the message names the offending rois[i]. */
KES_API kes_status kes_vpc_batch_crop(kes_dvpp_channel* channel, const kes_image* images, uint32_t image_count,
                                      const kes_vpc_batch_roi* rois, uint32_t roi_count, kes_vpc_interp interp,
                                      kes_mem_pool* pool, kes_image* out_images);

/* ---- VPC colour conversion (acldvppVpcConvertColorAsync, BOARD-RULES §Formats, §VPC) ------------------------- */

/* Values equal acldvppCscMatrix's. "Wide" is full range (Y, U, V in 0..255), "narrow" is studio range
 * (Y 16..235, U/V 16..240). */
typedef enum kes_vpc_csc_matrix {
    KES_VPC_CSC_BT601_WIDE = 0, /* the board's default; also JPEG/JFIF's */
    KES_VPC_CSC_BT601_NARROW = 1,
    KES_VPC_CSC_BT709_WIDE = 2,
    KES_VPC_CSC_BT709_NARROW = 3
} kes_vpc_csc_matrix;

/* Converts `in` to out_format, allocating the output (VPC strides) from `pool`:
 *   NV12/NV21/I420 → RGB888/BGR888, NV12/NV21/I420 (re-layout, exact), YUV400 (the luma plane);
 *   RGB888/BGR888 → NV12/NV21/I420, YUV400.
 * Formulas (Kr, Kb = 0.299, 0.114 for BT.601; 0.2126, 0.0722 for BT.709; Kg = 1 − Kr − Kb):
 *   Y = Kr·R + Kg·G + Kb·B, U = (B − Y) / (2(1 − Kb)) + 128, V = (R − Y) / (2(1 − Kr)) + 128 for wide;
 *   narrow scales Y by 219/255 and adds 16, U and V by 224/255. YUV → RGB is the exact inverse.
 * Each output sample is within 1 of the formula evaluated exactly and rounded (16-bit fixed point).
 * Chroma: YUV → RGB repeats each chroma sample over its 2×2 block (as OpenCV and libyuv do);
 * RGB → YUV converts the rounded mean colour of each 2×2 block. Odd sizes are rounded down to even
 * (as VPC does). Rules (KES_ERR_INVALID_ARGUMENT): input/output size limits of the profile; on 310
 * the output is NV12/NV21 only and the matrix must be KES_VPC_CSC_BT601_WIDE (310 has no matrix
 * setting). Other format pairs are KES_ERR_UNSUPPORTED. */
KES_API kes_status kes_vpc_convert_color(kes_dvpp_channel* channel, const kes_image* in, kes_pixel_format out_format,
                                         kes_vpc_csc_matrix matrix, kes_mem_pool* pool, kes_image* out_image);

/* The kernel table the software VPC uses on this CPU: "avx2", "sse2", "neon" or "scalar" (chosen on
 * first use; see kestrel/cpu.h). */
KES_API const char* kes_vpc_kernels_name(void);

KES_END_DECLS

/* Video (VDEC/VENC) has its own header, included here so kestrel/dvpp.h is the whole module. */
#include "kestrel/dvpp_video.h"

#endif /* KESTREL_DVPP_H */
