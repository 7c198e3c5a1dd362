// sim_vdec.cpp — VDEC (aclvdec*, acldvppStreamDesc) of libacl_dvpp.so through FFmpeg's libavcodec
// (BOARD-RULES §VDEC).
//
// As CANN does it (its aclvdecCreateChannel subscribes the channel's thread id to the channel's own
// stream), each channel's results come back through the report thread: the thread whose id was set with
// aclvdecSetChannelDescThreadId runs the channel's callback from inside aclrtProcessReport, once per sent
// frame, in the order the frames were sent, with the frame's stream description, its output picture
// description and user data. The picture is written into the output buffer just before its callback
// (so it is invisible until then), and the description gets width, height (even), widthStride =
// align16(w) (at least 32), heightStride = align2(h), the channel's output format and a ret code:
// 0 = picture; non-zero = no picture (UNCONFIRMED values, sim_dvpp.hpp: 1 decode failed, 2 the stream
// ended before this frame gave a picture, 3 output buffer too small or not DVPP memory, 4 stream outside
// the limits: 128x128 .. 4096x4096 on 310, .. 8192x8192 on 310B, 8-bit 4:2:0 only).
// A frame sent with acldvppSetStreamDescEos(desc, 1) flushes the decoder: the remaining frames come
// back, then aclvdecSendFrame returns once the report thread has run every callback (no callback for the
// EOS frame itself, as CANN). aclvdecDestroyChannel does the same flush first, so the report thread
// must keep running until it returns (the simulator gives up after 60 s with 507012).
// Input: Annex-B H.264 (enType 1..3) or H.265 (0), one frame per send, in any device memory (no
// alignment rule, UNCONFIRMED); output: NV12/NV21 in acldvppMalloc memory (310B: aclrtMalloc too).
// Channel ids 0..31; a second channel on an id in use is 207005 (UNCONFIRMED code).
extern "C" {
#include <libavcodec/avcodec.h>
}

#include <pthread.h>

#include <condition_variable>
#include <cstring>
#include <deque>

#include "sim_dvpp.hpp"

namespace kes_sim {

namespace {

// A decoded picture, compact NV12.
struct Picture {
    uint32_t width = 0, height = 0;
    std::vector<uint8_t> luma, chroma;
};

// Reports posted and not yet run, for the EOS / destroy wait.
struct InFlight {
    std::mutex mutex;
    std::condition_variable cv;
    uint64_t count = 0;
};

struct CodecDeleter {
    void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
    void operator()(AVPacket* p) const { av_packet_free(&p); }
    void operator()(AVFrame* f) const { av_frame_free(&f); }
};

uint32_t write_picture(const Picture& pic, acldvppPicDesc* out, int32_t format) {
    if (!pic_alive(out)) return kVdecBadOutput;
    const uint32_t ws = std::max<uint32_t>(align_up(pic.width, 16), 32), hs = align_up(pic.height, 2);
    const uint64_t bytes = uint64_t(ws) * hs * 3 / 2;
    if (out->size < bytes || !buffer_alive(out->data, bytes)) return kVdecBadOutput;
    uint8_t* y = static_cast<uint8_t*>(out->data);
    uint8_t* uv = y + uint64_t(ws) * hs;
    DeviceWork work;
    for (uint32_t r = 0; r < pic.height; ++r) {
        std::memcpy(y + uint64_t(r) * ws, pic.luma.data() + uint64_t(r) * pic.width, pic.width);
    }
    for (uint32_t r = 0; r < pic.height / 2; ++r) {
        uint8_t* row = uv + uint64_t(r) * ws;
        const uint8_t* from = pic.chroma.data() + uint64_t(r) * pic.width;
        if (format == kNv21) {
            for (uint32_t x = 0; x < pic.width; x += 2) {
                row[x] = from[x + 1];
                row[x + 1] = from[x];
            }
        } else {
            std::memcpy(row, from, pic.width);
        }
    }
    out->width = pic.width;
    out->height = pic.height;
    out->width_stride = ws;
    out->height_stride = hs;
    out->format = format;
    return 0;
}

}  // namespace

struct VdecDecoder {
    std::unique_ptr<AVCodecContext, CodecDeleter> codec;
    std::unique_ptr<AVPacket, CodecDeleter> packet;
    std::unique_ptr<AVFrame, CodecDeleter> frame;
    struct Pending {
        acldvppStreamDesc* in = nullptr;
        acldvppPicDesc* out = nullptr;
        void* user = nullptr;
        bool done = false;
        uint32_t ret = 0;
        std::shared_ptr<Picture> picture;
    };
    std::deque<Pending> pending;  // sent frames, in order, until their report is posted
    std::shared_ptr<InFlight> in_flight = std::make_shared<InFlight>();
    aclvdecChannelDesc* desc = nullptr;

    // Gives each picture the decoder has ready to the oldest frame still waiting for one.
    void drain() {
        const SocRules& r = soc_rules();
        while (avcodec_receive_frame(codec.get(), frame.get()) == 0) {
            Pending* p = nullptr;
            for (Pending& q : pending) {
                if (!q.done) {
                    p = &q;
                    break;
                }
            }
            const AVFrame* f = frame.get();
            if (p) {
                p->done = true;
                const uint32_t w = uint32_t(f->width) & ~1u, h = uint32_t(f->height) & ~1u;
                if ((f->format != AV_PIX_FMT_YUV420P && f->format != AV_PIX_FMT_YUVJ420P) || f->width < 128 ||
                    f->height < 128 || uint32_t(f->width) > r.vdec_max_width ||
                    uint32_t(f->height) > r.vdec_max_height) {
                    p->ret = kVdecUnsupported;
                } else {
                    auto pic = std::make_shared<Picture>();
                    pic->width = w;
                    pic->height = h;
                    pic->luma.resize(size_t(w) * h);
                    pic->chroma.resize(size_t(w) * h / 2);
                    for (uint32_t y = 0; y < h; ++y) {
                        std::memcpy(&pic->luma[size_t(y) * w], f->data[0] + int64_t(y) * f->linesize[0], w);
                    }
                    for (uint32_t y = 0; y < h / 2; ++y) {
                        const uint8_t* u = f->data[1] + int64_t(y) * f->linesize[1];
                        const uint8_t* v = f->data[2] + int64_t(y) * f->linesize[2];
                        uint8_t* row = &pic->chroma[size_t(y) * w];
                        for (uint32_t x = 0; x < w / 2; ++x) {
                            row[2 * x] = u[x];
                            row[2 * x + 1] = v[x];
                        }
                    }
                    p->picture = std::move(pic);
                }
            }
            av_frame_unref(frame.get());
        }
    }

    // Posts the report of every finished frame at the front, in send order.
    void post_finished() {
        while (!pending.empty() && pending.front().done) {
            Pending p = std::move(pending.front());
            pending.pop_front();
            std::shared_ptr<InFlight> flight = in_flight;
            {
                std::lock_guard<std::mutex> lock(flight->mutex);
                ++flight->count;
            }
            const aclvdecCallback callback = desc->callback;
            const int32_t format = desc->out_format;
            post_report(desc->thread_id, [p, flight, callback, format] {
                {
                    std::lock_guard<std::recursive_mutex> lock(sim().mutex);
                    const uint32_t ret = p.ret ? p.ret : write_picture(*p.picture, p.out, format);
                    if (pic_alive(p.out)) p.out->ret_code = ret;
                }
                callback(p.in, p.out, p.user);
                {
                    std::lock_guard<std::mutex> lock(flight->mutex);
                    --flight->count;
                }
                flight->cv.notify_all();
            });
        }
    }

    // EOS: every remaining frame comes back; the decoder starts over for the next stream.
    void flush() {
        avcodec_send_packet(codec.get(), nullptr);
        drain();
        for (Pending& p : pending) {
            if (!p.done) {
                p.done = true;
                p.ret = kVdecNoPicture;
            }
        }
        post_finished();
        avcodec_flush_buffers(codec.get());
    }
};

namespace {

// Waits, without the simulator's lock, until the report thread has run every posted callback.
aclError wait_for_reports(const std::string& call, const std::shared_ptr<InFlight>& flight,
                          std::unique_lock<std::recursive_mutex>& sim_lock) {
    sim_lock.unlock();
    std::unique_lock<std::mutex> lock(flight->mutex);
    const bool done = flight->cv.wait_for(lock, std::chrono::seconds(60), [&] { return flight->count == 0; });
    lock.unlock();
    sim_lock.lock();
    if (!done) {
        return report(kRtReportTimeout, call +
                                            ": the channel's report thread ran no callback for 60 s (it must "
                                            "loop on aclrtProcessReport while frames are decoded)");
    }
    return kOk;
}

}  // namespace
}  // namespace kes_sim

using namespace kes_sim;

aclvdecChannelDesc::~aclvdecChannelDesc() = default;

// ---- stream descriptions -----------------------------------------------------------------------------

DVPP_API acldvppStreamDesc* acldvppCreateStreamDesc() {
    DVPP_ENTER_OR(kNeedContext, nullptr);
    return dvpp().streams.create();
}

DVPP_API aclError acldvppDestroyStreamDesc(acldvppStreamDesc* streamDesc) {
    DVPP_ENTER(kNeedContext);
    if (streamDesc && !dvpp().streams.destroy(streamDesc)) {
        return report(kInvalidParam,
                      "acldvppDestroyStreamDesc: " + hex(streamDesc) + " is not a live stream description");
    }
    return kOk;
}

#define STREAM_SETTER(name, field, type)                                           \
    DVPP_API aclError name(acldvppStreamDesc* streamDesc, type value) {            \
        DVPP_ENTER(kNeedNothing);                                                  \
        if (!dvpp().streams.contains(streamDesc))                                  \
            return report(kInvalidParam, #name ": not a live stream description"); \
        streamDesc->field = value;                                                 \
        return kOk;                                                                \
    }
#define STREAM_GETTER(name, field, type)                                                                \
    DVPP_API type name(const acldvppStreamDesc* streamDesc) {                                           \
        DVPP_LOCK;                                                                                      \
        return dvpp().streams.contains(streamDesc) ? streamDesc->field : decltype(streamDesc->field){}; \
    }

STREAM_SETTER(acldvppSetStreamDescData, data, void*)
STREAM_SETTER(acldvppSetStreamDescSize, size, uint32_t)
STREAM_SETTER(acldvppSetStreamDescFormat, format, int32_t)
STREAM_SETTER(acldvppSetStreamDescTimestamp, timestamp, uint64_t)
STREAM_SETTER(acldvppSetStreamDescRetCode, ret_code, uint32_t)
STREAM_SETTER(acldvppSetStreamDescEos, eos, uint8_t)
STREAM_GETTER(acldvppGetStreamDescData, data, void*)
STREAM_GETTER(acldvppGetStreamDescSize, size, uint32_t)
STREAM_GETTER(acldvppGetStreamDescFormat, format, int32_t)
STREAM_GETTER(acldvppGetStreamDescTimestamp, timestamp, uint64_t)
STREAM_GETTER(acldvppGetStreamDescRetCode, ret_code, uint32_t)
STREAM_GETTER(acldvppGetStreamDescEos, eos, uint8_t)

// ---- VDEC channel descriptions and frame configs -------------------------------------------------

DVPP_API aclvdecChannelDesc* aclvdecCreateChannelDesc() {
    DVPP_ENTER_OR(kNeedContext, nullptr);
    return dvpp().vdecs.create();
}

DVPP_API aclError aclvdecDestroyChannelDesc(aclvdecChannelDesc* channelDesc) {
    DVPP_ENTER(kNeedContext);
    if (!channelDesc) return kOk;
    if (!dvpp().vdecs.contains(channelDesc)) {
        return report(kInvalidParam, "aclvdecDestroyChannelDesc: " + hex(channelDesc) + " is not a live description");
    }
    if (channelDesc->decoder) {
        return report(kResourceNotCleared,
                      "aclvdecDestroyChannelDesc: its channel still exists (aclvdecDestroyChannel first)");
    }
    dvpp().vdecs.destroy(channelDesc);
    return kOk;
}

#define VDEC_SETTER(name, field, type)                                                                \
    DVPP_API aclError name(aclvdecChannelDesc* channelDesc, type value) {                             \
        DVPP_ENTER(kNeedNothing);                                                                     \
        if (!dvpp().vdecs.contains(channelDesc))                                                      \
            return report(kInvalidParam, #name ": not a live VDEC channel description");              \
        if (channelDesc->decoder) return report(kInvalidParam, #name ": the channel already exists"); \
        channelDesc->field = value;                                                                   \
        return kOk;                                                                                   \
    }
#define VDEC_GETTER(name, field, type)                                                                   \
    DVPP_API type name(const aclvdecChannelDesc* channelDesc) {                                          \
        DVPP_LOCK;                                                                                       \
        return dvpp().vdecs.contains(channelDesc) ? channelDesc->field : decltype(channelDesc->field){}; \
    }

VDEC_SETTER(aclvdecSetChannelDescChannelId, channel_id, uint32_t)
VDEC_SETTER(aclvdecSetChannelDescThreadId, thread_id, uint64_t)
VDEC_SETTER(aclvdecSetChannelDescCallback, callback, aclvdecCallback)
VDEC_SETTER(aclvdecSetChannelDescEnType, en_type, int32_t)
VDEC_SETTER(aclvdecSetChannelDescOutPicFormat, out_format, int32_t)
VDEC_GETTER(aclvdecGetChannelDescChannelId, channel_id, uint32_t)
VDEC_GETTER(aclvdecGetChannelDescThreadId, thread_id, uint64_t)
VDEC_GETTER(aclvdecGetChannelDescCallback, callback, aclvdecCallback)
VDEC_GETTER(aclvdecGetChannelDescEnType, en_type, int32_t)
VDEC_GETTER(aclvdecGetChannelDescOutPicFormat, out_format, int32_t)

DVPP_API aclvdecFrameConfig* aclvdecCreateFrameConfig() {
    DVPP_ENTER_OR(kNeedInit, nullptr);
    return dvpp().frame_configs.create();
}

DVPP_API aclError aclvdecDestroyFrameConfig(aclvdecFrameConfig* vdecFrameConfig) {
    DVPP_ENTER(kNeedInit);
    if (vdecFrameConfig && !dvpp().frame_configs.destroy(vdecFrameConfig)) {
        return report(kInvalidParam,
                      "aclvdecDestroyFrameConfig: " + hex(vdecFrameConfig) + " is not a live frame config");
    }
    return kOk;
}

// ---- VDEC channels -------------------------------------------------------------------------------

DVPP_API aclError aclvdecCreateChannel(aclvdecChannelDesc* channelDesc) {
    DVPP_ENTER(kNeedContext);
    const std::string call = __func__;
    Dvpp& d = dvpp();
    if (!d.vdecs.contains(channelDesc)) return report(kInvalidParam, call + ": not a live VDEC channel description");
    aclvdecChannelDesc& c = *channelDesc;
    if (c.decoder) return report(kInvalidParam, call + ": the channel already exists");
    if (!c.callback) return report(kInvalidParam, call + ": no callback (aclvdecSetChannelDescCallback)");
    if (c.thread_id == 0) return report(kInvalidParam, call + ": no thread id (aclvdecSetChannelDescThreadId)");
    if (c.en_type < kH265Main || c.en_type > kH264High) {
        return report(kInvalidParam, call + ": stream format " + std::to_string(c.en_type) + " is not H.264/H.265");
    }
    if (c.out_format != kNv12 && c.out_format != kNv21) {
        return report(kInvalidParam,
                      call + ": VDEC V1 outputs NV12/NV21 only (format " + std::to_string(c.out_format) + ")");
    }
    const uint32_t ids = soc_rules().vdec_channel_ids;
    if (c.channel_id >= ids) {
        return report(kInvalidParam, call + ": channel id " + std::to_string(c.channel_id) + " is not in 0.." +
                                         std::to_string(ids - 1));
    }
    if (d.vdec_ids.count(c.channel_id)) {
        return report(kRtResourceAllocFail, call + ": VDEC channel " + std::to_string(c.channel_id) + " is in use");
    }
    auto dec = std::make_unique<VdecDecoder>();
    const AVCodec* codec = avcodec_find_decoder(c.en_type == kH265Main ? AV_CODEC_ID_HEVC : AV_CODEC_ID_H264);
    dec->codec.reset(codec ? avcodec_alloc_context3(codec) : nullptr);
    dec->packet.reset(av_packet_alloc());
    dec->frame.reset(av_frame_alloc());
    if (!dec->codec || !dec->packet || !dec->frame) return report(kRtAicpuException, call + ": no FFmpeg decoder");
    dec->codec->thread_count = 1;
    dec->codec->flags |= AV_CODEC_FLAG_LOW_DELAY;  // output in decode order, as VDEC's send-frame mode
    if (avcodec_open2(dec->codec.get(), codec, nullptr) < 0) {
        return report(kRtAicpuException, call + ": FFmpeg's decoder did not open");
    }
    if (aclError e = subscribe_report(c.thread_id, channelDesc, call.c_str())) return e;
    dec->desc = channelDesc;
    c.decoder = std::move(dec);
    d.vdec_ids.insert(c.channel_id);
    return kOk;
}

DVPP_API aclError aclvdecDestroyChannel(aclvdecChannelDesc* channelDesc) {
    DVPP_ENTER(kNeedContext);
    const std::string call = __func__;
    if (!dvpp().vdecs.contains(channelDesc) || !channelDesc->decoder) {
        return report(kInvalidParam, call + ": " + hex(channelDesc) + " has no live VDEC channel");
    }
    channelDesc->decoder->flush();
    const aclError waited = wait_for_reports(call, channelDesc->decoder->in_flight, sim_lock_);
    if (!dvpp().vdecs.contains(channelDesc) || !channelDesc->decoder) return waited;
    unsubscribe_report(channelDesc->thread_id, channelDesc, call.c_str());
    dvpp().vdec_ids.erase(channelDesc->channel_id);
    channelDesc->decoder.reset();
    return waited;
}

DVPP_API aclError aclvdecSendFrame(aclvdecChannelDesc* channelDesc, acldvppStreamDesc* input, acldvppPicDesc* output,
                                   aclvdecFrameConfig* config, void* userData) {
    DVPP_ENTER(kNeedContext);
    const std::string call = __func__;
    if (!dvpp().vdecs.contains(channelDesc) || !channelDesc->decoder) {
        return report(kInvalidParam, call + ": " + hex(channelDesc) + " has no live VDEC channel");
    }
    if (config && !dvpp().frame_configs.contains(config)) {
        return report(kInvalidParam, call + ": the frame config is not live");
    }
    if (!dvpp().streams.contains(input))
        return report(kInvalidParam, call + ": the input is not a live stream description");
    VdecDecoder& dec = *channelDesc->decoder;
    if (input->eos) {
        dec.flush();
        return wait_for_reports(call, dec.in_flight, sim_lock_);
    }
    if (aclError e = check_buffer(call, "stream data", input->data, input->size, true, 1)) return e;
    if (input->size == 0) return report(kInvalidParam, call + ": the stream description's size is 0");
    if (!pic_alive(output)) return report(kInvalidParam, call + ": the output is not a live picture description");
    if (aclError e = check_buffer(call, "output picture data", output->data, output->size,
                                  soc_rules().vpc_takes_device_memory)) {
        return e;
    }
    AVPacket* pkt = dec.packet.get();
    if (av_new_packet(pkt, int(input->size)) < 0) return report(kRtAicpuException, call + ": out of memory");
    {
        DeviceWork work;
        std::memcpy(pkt->data, input->data, input->size);
    }
    pkt->pts = int64_t(input->timestamp);
    VdecDecoder::Pending p;
    p.in = input;
    p.out = output;
    p.user = userData;
    dec.pending.push_back(p);
    const int sent = avcodec_send_packet(dec.codec.get(), pkt);
    av_packet_unref(pkt);
    if (sent < 0) {
        dec.pending.back().done = true;
        dec.pending.back().ret = kVdecDecodeFailed;
    }
    dec.drain();
    dec.post_finished();
    return kOk;
}
