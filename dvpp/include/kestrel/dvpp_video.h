/* kestrel/dvpp_video.h — video decode (VDEC) and encode (VENC) on the host, over FFmpeg 5.1.
 *
 * What a 310-class board's VDEC and VENC do, done on the CPU with libavformat/libavcodec/libswscale,
 * following the board's rules (docs/BOARD-RULES.md §VDEC, §VENC): H.264 and H.265
 * in, NV12/NV21 out with VDEC strides (kes_image_strides KES_STRIDE_VDEC: align16(w), at least 32, ×
 * align2(h) on the boards; tight on the host profile), every frame a kes_image from the caller's pool,
 * at most vdec_max_channels decoder channels at once, and NV12 frames back to H.264/H.265.
 *
 * A decoder channel (kes_vdec, like aclvdecChannelDesc + aclvdecCreateChannel) is fed one of two ways:
 *   - source mode: config.source names a file (mp4, mkv, ts, ... anything libavformat reads), a raw
 *     Annex-B stream (.h264/.h265/.264/.265/.hevc) or an rtsp:// URL; kes_vdec_read_frame demuxes,
 *     decodes and returns the next frame;
 *   - packet mode: config.source is NULL and config.codec names the codec; the app feeds Annex-B bytes
 *     with kes_vdec_send_packet (one frame per call as on the board, or any chunking — a parser splits
 *     them) and takes frames with kes_vdec_receive_frame, the board's send-frame/callback pair.
 *
 * End of stream: kes_vdec_read_frame / kes_vdec_receive_frame return KES_OK with
 * frame->end_of_stream = 1 and an empty image once every frame has been delivered (kes_status has no
 * end-of-stream code; a flag keeps KES_OK meaning "the call did what it should"). Later calls return
 * the same. In packet mode KES_ERR_BUSY means "no frame yet: send more packets".
 *
 * Broken data: a packet the decoder rejects is logged (KES_LOG_WARN, module "dvpp"), counted in
 * kes_vdec_stats.corrupt_packets and skipped; decoding goes on with the next packet, as the board
 * flags a bad frame as a decode failure and carries on (BOARD-RULES §VDEC). Frames the decoder had to conceal
 * (missing references, damaged slices) are delivered with frame->concealed = 1 and counted in
 * concealed_frames, or dropped when config.drop_concealed is set. FFmpeg 5.1 marks concealed frames
 * reliably only when it decodes without frame threads (threads = 1): with frame threads its
 * error-concealment flag can miss the frame it belongs to, so concealment is then best-effort. Only a stream that
 * cannot be opened at all fails the call (KES_ERR_CORRUPT_DATA / KES_ERR_UNSUPPORTED / KES_ERR_IO).
 *
 * The DVPP hardware: when the Ascend backend is active (kestrel/backend.h) and libacl_dvpp.so loads, a
 * decoder decodes on the board's VDEC (aclvdec*, DVPP V1) unless config.backend says KES_BACKEND_CPU:
 * FFmpeg still demuxes (files, Annex-B packets, RTSP) on the CPU; each access unit goes to the hardware
 * in Annex-B (MP4/MKV through FFmpeg's *_mp4toannexb filters), one frame per send, and comes back as a
 * frame in DVPP memory (KES_MEM_DVPP, or config.pool when its backend is KES_MEM_DVPP; another pool gets
 * a copy) with the same size, strides, pts, frame_index and keyframe flag as the CPU path gives — on a
 * PCIe card (ACL_HOST) the CPU cannot read DVPP memory: ask kes_mem_is_host_accessible(KES_MEM_DVPP) or
 * pass a host pool. kes_vdec_stream_info.backend says which path decodes. Each hardware decoder holds
 * one VDEC channel id (0..31, unique in the process) and a thread of its own that runs the hardware's
 * callbacks; every id taken is KES_ERR_BUSY. The CPU decodes instead, by itself and logged once per
 * cause (KES_LOG_INFO), a stream the hardware does not take: not 8-bit 4:2:0 (10-bit H.265 is
 * converted to 8 bits on the CPU; 4:2:2 is refused as below), B-frames (VDEC's send-frame mode returns
 * pictures in decode order), interlaced H.265, above level 5.1, outside the size limits or max_pixels,
 * and an output resize (output_width/height other than the stream's size). The choice is made at
 * create from the stream's parameters (packet mode: from the first access unit); in packet mode a
 * stream that turns out to reorder pictures later fails kes_vdec_send_packet with
 * KES_ERR_UNSUPPORTED (use KES_BACKEND_CPU for it). On the hardware:
 *   - a frame the hardware returns without a picture (a non-zero ret code) counts as a corrupt packet
 *     and is skipped, as a decode error on the CPU; frames are never concealed (concealed = 0);
 *   - a failed aclvdecSendFrame is never retried: the call fails with the mapped AscendCL error and
 *     the access unit is dropped. No DVPP memory for a frame is KES_ERR_OUT_OF_MEMORY with the access
 *     unit kept: the next call sends it first (kes_vdec_send_packet has then taken all its bytes: do not
 *     send them again). A frame not back within 10 s is KES_ERR_TIMEOUT;
 *   - frames waiting in the channel hold DVPP memory (packet mode: receive them as they come);
 *   - frame_interval skips on the host: every frame is still decoded (they are references).
 *
 * FFmpeg's log: FFmpeg's messages (and libx264's, which libavcodec passes on) go through Kestrel's
 * logger (kestrel/log.h, module "ffmpeg": its errors as KES_LOG_ERROR, warnings as KES_LOG_WARN, its
 * info lines — x264's settings and statistics — as KES_LOG_INFO), so KES_LOG_LEVEL and
 * kes_log_set_callback govern them too. Kestrel installs its av_log callback (av_log_set_callback) at the
 * first kes_vdec_create or kes_venc_create; an app that wants FFmpeg's log elsewhere sets its own after
 * that call. libx265 logs to stderr by itself: VENC keeps it to errors.
 *
 * Thread-safety: a channel (kes_vdec or kes_venc) is used by one thread at a time, except
 * kes_vdec_get_health, which any thread may call at any time; different channels run fully in parallel (each has its
 * own FFmpeg contexts; decoder threads are the channel's own, config.threads). The pools passed in are thread-safe
 * (memory.h).
 *
 * Ownership: the caller owns every frame image it received: release it with kes_image_release (it
 * comes from config.pool, else kes_mem_alloc). Strings in the configs are copied at create.
 *
 * Choices where the boards' documentation is silent or the host differs (UNCONFIRMED against real boards):
 *   - Codecs: H.264 (any profile the FFmpeg decoder takes) and H.265. A stream whose chroma is not
 *     4:2:0 is refused with KES_ERR_UNSUPPORTED (the boards decode YUV420 only). High bit depth
 *     (H.265 Main10, H.264 High10) is converted to 8-bit NV12/NV21 by libswscale, so a pipeline built
 *     for 8-bit frames takes every stream (the boards can also write 10-bit semi-planar output, pixel
 *     formats 18/19, which Kestrel does not offer); set config.refuse_high_bit_depth to get
 *     KES_ERR_UNSUPPORTED instead.
 *   - Stream size outside the profile's vdec_min_dim..vdec_max_dim (e.g. 128..4096 on 310) is
 *     KES_ERR_UNSUPPORTED; it is checked when the size is known (create in source mode, the first
 *     frame in packet mode, and at every size change).
 *   - Output size: the stream size (rounded down to even on the boards, whose NV12 output has even
 *     sizes; the host profile keeps odd sizes), or config.output_width × output_height, both even and
 *     within the VPC output limits of the profile (vpc_min_width × vpc_min_height ..
 *     vpc_max_output_width × vpc_max_output_height: VDEC scales through VPC, BOARD-RULES §VDEC). The resize
 *     is libswscale's bilinear; it is not bit-exact with the board's VPC.
 *   - Channel limit: at most the profile's vdec_max_channels (32 on 310/310B) channels exist at once
 *     in the process, counted over all kes_vdec channels; one more is KES_ERR_BUSY.
 *   - Frame skipping: frame_interval N delivers frames 0, N, 2N, ... (all frames are still decoded:
 *     they are references); keyframes_only decodes only key frames (the decoder discards the rest
 *     unread, AVDISCARD_NONKEY), for apps that sample a stream cheaply (a Kestrel extension).
 *   - frame_index: the frame's position in display order in the stream (0-based), counting frames
 *     skipped by frame_interval. In keyframes_only mode it is the index of the key frame's packet in
 *     the stream (equal to its display position in closed-GOP streams, which x264, x265 and IP cameras
 *     write by default).
 *   - pts: source mode — microseconds on the container's timeline (KES_VIDEO_NO_PTS if the container
 *     has none); packet mode — the value the app passed with the packet, carried through reordering.
 *   - RTSP: config.rtsp_transport (TCP default: no loss on busy networks) and config.timeout_ms (open
 *     and each read; default 5000) bound every network wait: a server that does not answer in time
 *     gives KES_ERR_TIMEOUT, one that refuses the connection KES_ERR_IO.
 *
 * Reconnect (RTSP sources by default; config.reconnect and kes_vdec_reconnect): cameras drop, and a
 * channel that stopped at the first read error (as ACLLite's VideoCapture does) leaves every app to
 * write the same loop. Once a source is open (kes_vdec_create still fails at once if it cannot be
 * opened), a lost connection — a read error, the server closing the stream (a live source never ends,
 * so with reconnect on the end of a network stream counts as a loss), or no packet for timeout_ms — is
 * handled inside kes_vdec_read_frame:
 *   - the frames the decoder already holds are delivered first; then the channel waits
 *     reconnect_delay_ms (500) and opens the URL again (each attempt bounded by timeout_ms); after a
 *     failed attempt the wait doubles, up to reconnect_max_delay_ms (10000). reconnect_max_attempts
 *     failed attempts in a row (0: no limit; a connection that drops again before its first packet
 *     counts as a failed attempt) stop the channel: that read and every later one return
 *     KES_ERR_IO, "'URL': gave up after N reconnect attempts (lost: ...; last attempt: ...)";
 *   - a read never blocks for ever: while reconnecting, a call that has no frame after timeout_ms
 *     returns KES_ERR_TIMEOUT (the message says the channel is reconnecting, and why); the next call
 *     goes on with the same schedule. A call may take up to about twice timeout_ms (an attempt that
 *     started just before the end of the call's wait is allowed its own timeout_ms);
 *   - on reconnect the stream's parameters are read again and the decoder starts afresh (a new
 *     decoder on the CPU; on the hardware the new parameter sets go ahead of the next unit): packets
 *     before the next key frame are passed over and counted in kes_vdec_health.frames_dropped. A
 *     stream that comes back with another codec is a failed attempt;
 *   - pts keep increasing on the channel's timeline: the first frame after a reconnect is stamped with
 *     the last pts before the loss plus the wall-clock time between the last packet before the loss
 *     and the first one after (the camera's new session restarts its own clock), so pts stay close to
 *     real time. frame_index goes on counting delivered positions (frames sent while the link was
 *     down are not counted);
 *   - kes_vdec_get_health reports the state, the counters and the last error, from any thread.
 * With KES_VDEC_RECONNECT_OFF the first loss ends the channel, as before reconnect existed: a broken
 * connection fails the read with KES_ERR_IO (state STOPPED), a read that times out is KES_ERR_TIMEOUT
 * (call again to keep waiting), and a connection the server closed is end_of_stream (state ENDED:
 * FFmpeg cannot tell a camera that died from one that ended its stream).
 *   - FFmpeg's own log (av_log: "error while decoding MB ...", x264's statistics) is left as the app
 *     configured it: Kestrel never changes process-wide FFmpeg state. Call av_log_set_level to quiet it.
 *   - VENC: libx264/libx265 with FFmpeg's default preset; CRF 23 (H.264) / 28 (H.265) unless
 *     bitrate_kbps is set (then average bitrate). MP4 files get their index at kes_venc_finish.
 *   - VENC input: NV12/NV21, even width and height within venc_min_dim..venc_max_dim; on the board
 *     profiles the width stride must be a multiple of kes_board_profile.venc_width_stride_align (16,
 *     BOARD-RULES §VENC). No B-frames (the boards' VENC writes none).
 */
#ifndef KESTREL_DVPP_VIDEO_H
#define KESTREL_DVPP_VIDEO_H

#include "kestrel/backend.h"
#include "kestrel/board.h"
#include "kestrel/image.h"
#include "kestrel/memory.h"
#include "kestrel/status.h"

KES_BEGIN_DECLS

/* pts value of a frame without a timestamp (FFmpeg's AV_NOPTS_VALUE). */
#define KES_VIDEO_NO_PTS ((int64_t)INT64_MIN)

/* VENC input width stride alignment on the board profiles (BOARD-RULES §VENC: widthStride = align16(w)). The
 * rule lives in the profile (kes_board_profile.venc_width_stride_align, 0 on the host); this constant
 * stays for code written against it and equals the boards' value. */
#define KES_VENC_WIDTH_STRIDE_ALIGN 16u

typedef enum kes_video_codec {
    KES_VIDEO_CODEC_UNKNOWN = 0, /* source mode: taken from the stream */
    KES_VIDEO_CODEC_H264 = 1,
    KES_VIDEO_CODEC_H265 = 2
} kes_video_codec;

typedef enum kes_rtsp_transport {
    KES_RTSP_TCP = 0, /* RTP interleaved in the RTSP connection (default) */
    KES_RTSP_UDP = 1
} kes_rtsp_transport;

/* ---- VDEC ---------------------------------------------------------------------------------------- */

typedef struct kes_vdec kes_vdec; /* opaque handle: one decoder channel */

typedef enum kes_vdec_reconnect {
    KES_VDEC_RECONNECT_AUTO = 0, /* rtsp:// and rtsps:// sources reconnect (cameras); other sources do not
                                    (an http:// file would replay from its start at its end) */
    KES_VDEC_RECONNECT_OFF = 1,  /* a lost connection fails the read (KES_ERR_IO), for good */
    KES_VDEC_RECONNECT_ON = 2    /* any network source reconnects (a live udp:// or http:// stream);
                                    KES_ERR_INVALID_ARGUMENT for a file */
} kes_vdec_reconnect;

typedef struct kes_vdec_config {
    uint32_t struct_size;                   /* sizeof(kes_vdec_config) */
    const kes_board_profile* board_profile; /* NULL: kes_board_active_profile() now; copied */
    const char* source;                     /* file path or rtsp:// URL; NULL: packet mode */
    kes_video_codec codec;                  /* packet mode: H264 or H265 (required); source mode:
                                               UNKNOWN, or the codec the stream must have */
    kes_pixel_format output_format;         /* NV12 (default) or NV21 */
    uint32_t output_width, output_height;   /* 0, 0: the stream's size; else both even (see above) */
    uint32_t frame_interval;                /* deliver every Nth frame (1 = all, the default) */
    uint32_t keyframes_only;                /* 1: decode and deliver key frames only */
    uint32_t threads;                       /* decoder threads; 0: FFmpeg's choice (one per core) */
    kes_mem_pool* pool;                     /* frames are allocated here; NULL: kes_mem_alloc */
    kes_rtsp_transport rtsp_transport;      /* rtsp:// sources only */
    uint32_t timeout_ms;                    /* network sources: bound of open and of each read (5000) */
    uint32_t refuse_high_bit_depth;         /* 1: > 8-bit streams are KES_ERR_UNSUPPORTED (default 0:
                                               converted to 8 bits) */
    uint32_t drop_concealed;                /* 1: frames with concealed errors are not delivered */
    uint64_t max_pixels; /* 0: the board's vdec_max_dim² only. Otherwise frames of more pixels are refused
                            by the decoder before it allocates them: a guard for untrusted streams */
    kes_backend backend; /* KES_BACKEND_AUTO (default): the DVPP hardware (VDEC) when the process's
                            backend is Ascend and libacl_dvpp.so loaded, for a stream it takes (see "The
                            DVPP hardware" above), else the CPU. KES_BACKEND_CPU: never the hardware.
                            KES_BACKEND_ASCEND: a hardware channel or a failed create (the reason in
                            kes_last_error), whatever the process's backend; a stream outside the VDEC
                            rules still falls back to the CPU. Apps built before this field get AUTO. */
    /* Reconnection of a network source that drops (see "Reconnect" above); apps built before these
       fields get the defaults. */
    kes_vdec_reconnect reconnect;    /* KES_VDEC_RECONNECT_AUTO (default): RTSP sources reconnect */
    uint32_t reconnect_delay_ms;     /* wait before the first attempt; 0: 500 */
    uint32_t reconnect_max_delay_ms; /* the wait doubles after each failed attempt up to this; 0: 10000 */
    uint32_t reconnect_max_attempts; /* failed attempts in a row before giving up; 0: never give up */
} kes_vdec_config;

/* Defaults: active board, packet mode, NV12, stream size, every frame, threads 0, no pool, TCP, 5000 ms,
 * backend AUTO, reconnect AUTO (500 ms doubling to 10 s, never give up). */
KES_API void kes_vdec_config_init(kes_vdec_config* config);

/* Opens a channel. Source mode opens and probes the source now: KES_ERR_NOT_FOUND for a missing
 * file, KES_ERR_IO for an unreadable one or a refused connection, KES_ERR_TIMEOUT for a server that
 * does not answer within timeout_ms, KES_ERR_CORRUPT_DATA for data no demuxer recognises,
 * KES_ERR_UNSUPPORTED for a stream without H.264/H.265 video or one the board cannot decode.
 * KES_ERR_INVALID_ARGUMENT for a broken config rule, KES_ERR_BUSY when vdec_max_channels are open. */
KES_API kes_status kes_vdec_create(const kes_vdec_config* config, kes_vdec** out_vdec);
KES_API void kes_vdec_destroy(kes_vdec* vdec); /* NULL is a no-op; undelivered frames are dropped */

typedef struct kes_vdec_frame {
    kes_image image;        /* NV12/NV21 with VDEC strides; zeroed at end of stream */
    int64_t pts;            /* see the header comment; KES_VIDEO_NO_PTS if unknown */
    uint64_t frame_index;   /* display-order index in the stream (see the header comment) */
    uint32_t keyframe;      /* 1 for an IDR/I frame */
    uint32_t concealed;     /* 1 if the decoder concealed errors in this frame */
    uint32_t end_of_stream; /* 1: no more frames; image is empty */
    uint32_t reserved;
} kes_vdec_frame;

/* Source mode: the next frame, or end_of_stream. Network sources (see "Reconnect" above): a channel
 * that is reconnecting and has no frame within timeout_ms returns KES_ERR_TIMEOUT (call again: it keeps
 * reconnecting); one that gave up returns KES_ERR_IO, as do all later calls. With reconnect OFF, a read
 * that times out is KES_ERR_TIMEOUT (call again to keep waiting) and a broken connection KES_ERR_IO
 * (a closed one end_of_stream). kes_last_error names the URL and the cause. Corrupt packets never fail the call (see
 * above). KES_ERR_OUT_OF_MEMORY when the pool is full: the frame is kept and the next call retries it.
 * KES_ERR_INVALID_ARGUMENT in packet mode. */
KES_API kes_status kes_vdec_read_frame(kes_vdec* vdec, kes_vdec_frame* out_frame);

/* Packet mode: feeds Annex-B bytes (any split; the board wants one frame per send) tagged with `pts`
 * (any unit, carried to the frame decoded from them; KES_VIDEO_NO_PTS for none). data NULL / size 0
 * marks the end of the stream: the decoder is flushed and, once the last frame has been received,
 * receive_frame reports end_of_stream. Sending after the end is KES_ERR_INVALID_ARGUMENT. A corrupt
 * packet is counted and skipped (KES_OK). Frames decoded meanwhile wait in the channel (decoded,
 * not yet converted; they take no pool memory) until received. */
KES_API kes_status kes_vdec_send_packet(kes_vdec* vdec, const void* data, size_t size, int64_t pts);

/* Packet mode: the next decoded frame, KES_ERR_BUSY if none is ready (send more), or end_of_stream
 * after the end was sent and every frame received. */
KES_API kes_status kes_vdec_receive_frame(kes_vdec* vdec, kes_vdec_frame* out_frame);

typedef struct kes_vdec_stream_info {
    uint32_t struct_size; /* sizeof(kes_vdec_stream_info), set by the caller */
    kes_video_codec codec;
    uint32_t width, height;               /* coded picture as displayed (cropping applied) */
    uint32_t bit_depth;                   /* 8, 10, ... */
    uint32_t fps_num, fps_den;            /* 0/0 when the source does not say (packet mode) */
    int64_t duration_us;                  /* 0 when unknown (raw streams, live sources) */
    uint32_t output_width, output_height; /* of delivered frames */
    uint32_t width_stride, height_stride; /* VDEC strides of delivered frames */
    size_t frame_size;                    /* bytes each frame takes (kes_image_buffer_size) */
    kes_backend backend;                  /* KES_BACKEND_ASCEND when the DVPP hardware decodes, else CPU */
} kes_vdec_stream_info;

/* The stream's properties. Known after create in source mode; in packet mode after the first frame
 * was decoded (KES_ERR_BUSY before). */
KES_API kes_status kes_vdec_get_stream_info(kes_vdec* vdec, kes_vdec_stream_info* out_info);

typedef struct kes_vdec_stats {
    uint64_t packets;          /* packets sent to the decoder */
    uint64_t frames_decoded;   /* frames the decoder produced */
    uint64_t frames_delivered; /* frames handed to the app */
    uint64_t frames_skipped;   /* decoded but not delivered (frame_interval, drop_concealed) */
    uint64_t corrupt_packets;  /* packets the decoder rejected (skipped) */
    uint64_t concealed_frames; /* frames with concealed errors */
} kes_vdec_stats;

KES_API kes_status kes_vdec_get_stats(const kes_vdec* vdec, kes_vdec_stats* out_stats);

typedef enum kes_vdec_state {
    KES_VDEC_STATE_RUNNING = 1,      /* the source is open and read (files and packet mode too) */
    KES_VDEC_STATE_RECONNECTING = 2, /* the connection was lost; attempts run inside kes_vdec_read_frame */
    KES_VDEC_STATE_STOPPED = 3,      /* lost for good (gave up, or reconnect OFF): reads fail with KES_ERR_IO */
    KES_VDEC_STATE_ENDED = 4         /* end_of_stream was delivered */
} kes_vdec_state;

#define KES_VDEC_HEALTH_TEXT_MAX 256

/* A stream's health, for a camera app's dashboard. Counters run over the channel's life, across
 * reconnects. */
typedef struct kes_vdec_health {
    uint32_t struct_size; /* sizeof(kes_vdec_health), set by the caller */
    kes_vdec_state state;
    uint64_t frames_decoded;     /* frames the decoder produced */
    uint64_t frames_delivered;   /* frames handed to the app */
    uint64_t frames_dropped;     /* received but never delivered: corrupt packets, frames dropped by
                                    drop_concealed, and frames passed over after a reconnect until the
                                    next key frame. Frames the camera sent while the link was down are
                                    not known and not counted. frame_interval skips are not drops. */
    uint64_t reconnects;         /* connections restored */
    uint64_t reconnect_attempts; /* attempts made, successful or not */
    uint32_t failed_attempts;    /* failed attempts in a row since the stream was last up (0 when up) */
    uint32_t next_attempt_ms;    /* RECONNECTING: how long until the next attempt; else 0 */
    kes_status last_error;       /* the last failure: the loss or a failed attempt; KES_OK if none. Kept
                                    after the stream recovers, so an app can log why it reconnected */
    char last_error_text[KES_VDEC_HEALTH_TEXT_MAX]; /* its message (URL and cause), NUL-terminated; "" if none */
} kes_vdec_health;

/* The channel's health. Unlike the other calls on a channel, it may be called from any thread at any
 * time, also while another thread is blocked in kes_vdec_read_frame (a monitor thread watching a
 * reconnecting camera); it returns a consistent snapshot as of the reading thread's last step (a frame
 * delivered, a connection lost, an attempt made). */
KES_API kes_status kes_vdec_get_health(const kes_vdec* vdec, kes_vdec_health* out_health);

/* Decoder channels open now in this process (all profiles). */
KES_API uint32_t kes_vdec_open_channels(void);

/* ---- VENC ---------------------------------------------------------------------------------------- */

typedef struct kes_venc kes_venc; /* opaque handle: one encoder channel */

typedef enum kes_venc_container {
    KES_VENC_CONTAINER_MP4 = 0,   /* ISO MP4 (avcC/hvcC, seekable) */
    KES_VENC_CONTAINER_ANNEXB = 1 /* raw Annex-B elementary stream (.h264 / .h265), as the board writes */
} kes_venc_container;

typedef struct kes_venc_config {
    uint32_t struct_size;                   /* sizeof(kes_venc_config) */
    const kes_board_profile* board_profile; /* NULL: kes_board_active_profile() now; copied */
    const char* path;                       /* output file (created or truncated) */
    kes_venc_container container;
    kes_video_codec codec;     /* H264 (libx264, default) or H265 (libx265) */
    uint32_t width, height;    /* frame size, even */
    uint32_t fps_num, fps_den; /* frame rate (default 30/1) */
    uint32_t bitrate_kbps;     /* target average bitrate; 0: constant quality (CRF 23 / 28) */
    uint32_t gop;              /* key frame interval in frames (default 30) */
    uint32_t threads;          /* encoder threads; 0: the encoder's choice */
} kes_venc_config;

/* Defaults: active board, MP4, H.264, 30/1 fps, CRF, GOP 30, threads 0; path, width, height unset. */
KES_API void kes_venc_config_init(kes_venc_config* config);

/* Opens the encoder and creates the file. KES_ERR_INVALID_ARGUMENT for a broken config rule,
 * KES_ERR_UNSUPPORTED if this FFmpeg lacks the encoder, KES_ERR_IO if the file cannot be written. */
KES_API kes_status kes_venc_create(const kes_venc_config* config, kes_venc** out_venc);

/* Encodes one NV12/NV21 frame of the configured size (board stride rules, see above). Frames get
 * consecutive timestamps at the configured rate. KES_ERR_INVALID_ARGUMENT after kes_venc_finish. */
KES_API kes_status kes_venc_encode_frame(kes_venc* venc, const kes_image* frame);

/* Flushes the encoder and finishes the file (MP4 index). Calling it again is a no-op. */
KES_API kes_status kes_venc_finish(kes_venc* venc);

/* Frames encoded and bytes written so far. */
KES_API kes_status kes_venc_get_counts(const kes_venc* venc, uint64_t* out_frames, uint64_t* out_bytes);

/* Destroys the channel; a file not finished is finished first (errors then only logged). */
KES_API void kes_venc_destroy(kes_venc* venc); /* NULL is a no-op */

KES_END_DECLS

#endif /* KESTREL_DVPP_VIDEO_H */
