/* kestrel/osd.h — on-screen display: boxes, lines, text and segmentation masks drawn into NV12/NV21 images
 * on the CPU.
 *
 * What a face-search or detection app draws before it encodes a frame (kes_jpeg_encode, kes_venc):
 * a box per result with a label such as "alice 0.93". The pixels land directly in the image's planes,
 * as jetson-inference's cudaDraw/cudaFont do in RGBA, but in the 4:2:0 layout the DVPP units read, so
 * no colour conversion runs before or after. The image is any valid NV12/NV21 kes_image: its strides
 * are respected and no byte outside the visible pixels (row and plane padding) is ever written.
 *
 * Colours: a kes_osd_color holds the Y, U, V the image stores plus an alpha. Make one from RGB with
 * kes_osd_color_rgb (BT.601 full range, the VPC's and JPEG's default) or kes_osd_color_from_rgb (any
 * kes_vpc_csc_matrix): both use kes_vpc_convert_color's formula and fixed point, so a drawn area
 * equals what kes_vpc_convert_color makes of an RGB image of that colour, and converts back to it
 * (within the ±1 of each conversion). Pick the matrix the consumer of the image assumes.
 * Alpha 255 writes the colour; alpha a < 255 blends each sample a shape writes exactly once (where a
 * thick line's pen squares overlap too), out = (c·a + old·(255 − a) + 127) / 255 in integers; alpha 0
 * changes nothing. A label's plate and its glyphs are two shapes, the glyphs blended over the plate.
 *
 * Coverage: a shape covers a set of whole luma pixels (given per function below) and writes:
 *   - luma: every covered pixel inside the image;
 *   - chroma (one U,V pair per 2×2 block of luma pixels; the last block of an odd width or height
 *     has fewer): every pair whose block holds at least one covered pixel.
 * So every covered pixel gets exactly the shape's colour — a 1-pixel line at an odd coordinate is as
 * red as one at an even coordinate — and the price of 4:2:0 is paid outside the shape: an uncovered
 * pixel sharing a block with a covered one keeps its luma but takes the shape's chroma (a colour
 * fringe of at most one pixel). Shapes whose edges fall on even coordinates (even x, y, width,
 * height and thickness for boxes) have no fringe. In NV12 the pair is stored U,V; in NV21 V,U.
 *
 * Clipping: coordinates are signed; whatever part of a shape lies outside the image is clipped, and
 * a shape entirely outside draws nothing and returns KES_OK.
 *
 * Text: a built-in 8×16 bitmap font (Kestrel's own design, osd_font.cpp) with the printable ASCII
 * characters 0x20..0x7E. Text is UTF-8: '\n' starts a new line 16·scale pixels lower at the starting
 * x; any other code point outside 0x20..0x7E (tab, '\r', 'é', '张', a byte that is not valid UTF-8)
 * is drawn as one box glyph (the outline of a cell), so a caller sees that something was there.
 * Each character takes one 8·scale × 16·scale cell; the cell includes the spacing (glyph ink lies in
 * columns 0..6 and rows 2..15), so labels need no extra advance. `scale` is an integer magnification:
 * every font pixel becomes a scale × scale square.
 *
 * Errors: KES_ERR_INVALID_ARGUMENT for a NULL image/text/output, an image that kes_image_validate
 * refuses or the CPU cannot reach (see Memory), thickness outside 1..KES_OSD_MAX_THICKNESS, scale
 * outside 1..KES_OSD_MAX_SCALE, text wider or taller than 2^31 − 1 pixels; KES_ERR_UNSUPPORTED for an
 * image format other than NV12/NV21 (the message names it: convert with kes_vpc_convert_color
 * first). Nothing is drawn when a call fails.
 *
 * Memory: the CPU writes the pixels, so the image must be CPU-addressable. An image Kestrel allocated
 * in DVPP or device memory the CPU cannot reach (a PCIe card, ACL_HOST run mode) is refused with
 * KES_ERR_INVALID_ARGUMENT before anything is touched: copy it to host memory first (kes_mem_copy).
 * A buffer the caller wrapped (kes_image_wrap) is taken to be host memory: that one cannot be asked.
 *
 * Thread-safety: every function is reentrant and writes only the image passed in (the font is a
 * constant table; kes_osd_blend_mask also reads its mask and background image, which no other thread
 * may write meanwhile). Drawing into different images from different threads is safe; two threads drawing
 * into, or one drawing while another reads or encodes, the same image is the caller's to serialise.
 * Ownership: the caller owns the image, the text, the box array, the mask and the background; nothing is
 * kept after a call.
 */
#ifndef KESTREL_OSD_H
#define KESTREL_OSD_H

#include "kestrel/dvpp.h"
#include "kestrel/image.h"
#include "kestrel/status.h"
#include "kestrel/tensor.h"

KES_BEGIN_DECLS

#define KES_OSD_FONT_WIDTH 8   /* pixels per character cell at scale 1 */
#define KES_OSD_FONT_HEIGHT 16 /* pixels per text line at scale 1 */
#define KES_OSD_MAX_THICKNESS 1024
#define KES_OSD_MAX_SCALE 64

typedef struct kes_osd_color {
    uint8_t y, u, v; /* the samples written (full or narrow range, as the matrix that made them) */
    uint8_t alpha;   /* 255: opaque; 0: invisible */
} kes_osd_color;

/* R, G, B → an opaque colour with BT.601 full range (KES_VPC_CSC_BT601_WIDE): red (255,0,0) is
 * Y 76, U 85, V 255. Cannot fail. */
KES_API kes_osd_color kes_osd_color_rgb(uint8_t r, uint8_t g, uint8_t b);

/* R, G, B and alpha → a colour with `matrix` (BT.709 for HD video an encoder tags as such, narrow range
 * where the consumer expects studio swing). KES_ERR_INVALID_ARGUMENT for a NULL out_color or an unknown
 * matrix. */
KES_API kes_status kes_osd_color_from_rgb(uint8_t r, uint8_t g, uint8_t b, uint8_t alpha, kes_vpc_csc_matrix matrix,
                                          kes_osd_color* out_color);

/* Fills the rectangle of width × height pixels whose top-left pixel is (x, y): it covers
 * x ≤ px < x + width, y ≤ py < y + height. width or height ≤ 0 draws nothing. With alpha < 255 this
 * is a translucent fill (label backgrounds, privacy masks). */
KES_API kes_status kes_osd_fill_rect(kes_image* image, int32_t x, int32_t y, int32_t width, int32_t height,
                                     kes_osd_color color);

/* Outlines the same rectangle with a border `thickness` pixels wide drawn INSIDE it: the covered pixels
 * are those of kes_osd_fill_rect(x, y, width, height) less those of
 * kes_osd_fill_rect(x + thickness, y + thickness, width − 2·thickness, height − 2·thickness), so the
 * outer edge is the box the caller gave (a detection box) whatever the thickness; a thickness of half
 * the smaller side or more fills the rectangle. */
KES_API kes_status kes_osd_draw_rect(kes_image* image, int32_t x, int32_t y, int32_t width, int32_t height,
                                     int32_t thickness, kes_osd_color color);

/* A straight line from (x0, y0) to (x1, y1), both ends included, drawn with a square pen.
 * The centre pixels are Bresenham's: along the longer axis every step of 1, from (x0, y0); on the other
 * axis the ideal line's position rounded to the nearest pixel, halves rounded away from (x0, y0)
 * (so (x1, y1) is hit exactly; a line and its reverse may differ where the ideal line passes exactly
 * halfway between two pixels). The pen covers, around each centre pixel (cx, cy), the square
 * cx − (thickness−1)/2 .. cx + thickness/2 by cy − (thickness−1)/2 .. cy + thickness/2 (integer
 * division: centred for odd thickness, one more pixel right and down for even). A line with both
 * ends equal is that one square. Each pixel is written once even where pen squares overlap. */
KES_API kes_status kes_osd_draw_line(kes_image* image, int32_t x0, int32_t y0, int32_t x1, int32_t y1,
                                     int32_t thickness, kes_osd_color color);

/* The size of the block `text` occupies at `scale`: width = the longest line's characters ·
 * 8·scale, height = lines · 16·scale, where lines = 1 + the number of '\n' (a trailing '\n' counts an
 * empty last line). "" measures 0 × 0. KES_ERR_INVALID_ARGUMENT for NULL text or outputs, a bad scale
 * or a size beyond 2^31 − 1. */
KES_API kes_status kes_osd_text_size(const char* text, int32_t scale, uint32_t* out_width, uint32_t* out_height);

/* Draws `text` with its first cell's top-left pixel at (x, y). If `background` is not NULL, the whole
 * kes_osd_text_size block at (x, y) is first filled with it (a label plate), then the glyphs are drawn
 * over it in `color` (so where the plate and the glyph share a chroma block, the glyph's chroma wins).
 * Covered pixels: the set bits of each glyph, each a scale × scale square. */
KES_API kes_status kes_osd_draw_text(kes_image* image, int32_t x, int32_t y, const char* text, int32_t scale,
                                     kes_osd_color color, const kes_osd_color* background);

/* ---- many labelled boxes in one call ----------------------------------------------------------- */

/* One detection to draw: the box (as kes_osd_draw_rect) and an optional label. */
typedef struct kes_osd_box {
    int32_t x, y, width, height;
    kes_osd_color color; /* outline, and the label's plate */
    const char* label;   /* UTF-8 as kes_osd_draw_text; NULL or "": no label */
} kes_osd_box;

typedef struct kes_osd_box_style {
    uint32_t struct_size;     /* sizeof(kes_osd_box_style) */
    int32_t thickness;        /* outline thickness, default 2 */
    int32_t text_scale;       /* label scale, default 1 */
    kes_osd_color text_color; /* label glyphs, default opaque white (Y 255, U 128, V 128) */
    uint32_t label_inside;    /* 0 (default): the plate sits on top of the box, outside it, when it fits
                                 above the image's top edge, else inside the box's top-left corner;
                                 1: always inside */
} kes_osd_box_style;

/* Defaults as listed above. */
KES_API void kes_osd_box_style_init(kes_osd_box_style* style);

/* Draws boxes[0..count) in order, each as kes_osd_draw_rect(box, style.thickness, box.color) followed
 * by its label: a plate of (text width + 2·text_scale) × text height in box.color whose left edge is
 * the box's left edge, with the text at (plate left + text_scale, plate top) in style.text_color.
 * The plate's top is box.y − text height when that is ≥ 0 and label_inside is 0, else box.y.
 * Later boxes draw over earlier ones. style NULL: defaults. count 0 is a no-op (boxes may then be
 * NULL). Every box and the style are checked before anything is drawn: on failure the message names
 * the offending boxes[i] and the image is untouched. */
KES_API kes_status kes_osd_draw_boxes(kes_image* image, const kes_osd_box* boxes, uint32_t count,
                                      const kes_osd_box_style* style);

/* ---- segmentation masks ---------------------------------------------------------------------------- */

/* A segmentation model (MediaPipe's selfie segmentation: a 256×256 or 256×144 map of person
 * probabilities) gives a mask at its own resolution; kes_osd_blend_mask lays it over the whole frame and
 * replaces what the mask calls background: blurred (a video call's background blur), a solid colour, or
 * another image (a virtual background). */

#define KES_OSD_MAX_BLUR_RADIUS 255

typedef enum kes_osd_background {
    KES_OSD_BACKGROUND_BLUR = 0,  /* the frame itself, box-blurred */
    KES_OSD_BACKGROUND_COLOR = 1, /* a solid colour */
    KES_OSD_BACKGROUND_IMAGE = 2  /* another NV12/NV21 image of the frame's format and size */
} kes_osd_background;

typedef struct kes_osd_mask_config {
    uint32_t struct_size;          /* sizeof(kes_osd_mask_config) (_init sets it) */
    kes_osd_background background; /* default BLUR */
    uint32_t blur_radius;          /* BLUR: the box's radius in luma pixels, 1..KES_OSD_MAX_BLUR_RADIUS;
                                      default 12 */
    kes_osd_color color;           /* COLOR: the background (its alpha is ignored); default black */
    const kes_image* image;        /* IMAGE: the background (the caller's; read only); default NULL */
    int32_t invert;                /* non-zero: the mask gives the background's weight instead of the
                                      foreground's; default 0 */
} kes_osd_mask_config;

KES_API void kes_osd_mask_config_init(kes_osd_mask_config* config);

/* Blends `frame` (NV12/NV21, in place) with the configured background through `mask`:
 *   out = m·frame + (1 − m)·background, rounded to nearest, per luma and chroma sample,
 * where m is the mask's foreground weight (1 − it with invert) at that sample, clamped to [0, 1].
 * The mask: a kes_tensor of F32 (weights) or U8 (255 = 1) with the map's height H and width W as
 * shape[ndim − 3], shape[ndim − 2] for NHWC (the last dimension 1, MediaPipe's [1, H, W, 1]) or as the
 * last two dimensions otherwise ([1, 1, H, W], [H, W]), every other dimension 1; any strides. It
 * covers the whole frame (the model's input was the whole frame resized) and is upsampled bilinearly as
 * kes_vpc_crop_resize resizes (half-pixel centres, edges clamped): a luma pixel (x, y) reads the mask at
 * ((x + 0.5)·W/width − 0.5, (y + 0.5)·H/height − 0.5), a chroma pair at the centre of its 2×2 block.
 * BLUR: each background sample is the rounded mean of the (2r + 1)² samples around it in its plane,
 * coordinates clamped to the plane's edge, with r = blur_radius for luma and (blur_radius + 1) / 2 for
 * chroma; it allocates a blurred copy of the frame's planes (plus 2r + 2 rows of sums) for the call.
 * config NULL: defaults. Errors: those of the drawing calls for `frame` (osd.h's header); for the
 * mask KES_ERR_INVALID_ARGUMENT naming the problem (NULL, not valid, dtype neither F32 nor U8, a shape
 * not of the above form, a side of 0), KES_ERR_CORRUPT_DATA for a non-finite F32 value (naming the
 * element); for the config KES_ERR_INVALID_ARGUMENT (unknown background, radius out of range, IMAGE
 * without an image or with one whose format or size differs from the frame's or which the CPU cannot
 * read). The frame is untouched when the call fails. */
KES_API kes_status kes_osd_blend_mask(kes_image* frame, const kes_tensor* mask, const kes_osd_mask_config* config);

KES_END_DECLS

#endif /* KESTREL_OSD_H */
