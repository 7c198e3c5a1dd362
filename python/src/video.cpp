// kestrel.VideoReader (kes_vdec: files, Annex-B, rtsp:// with reconnect, or packets) as an iterator of
// frames, and kestrel.VideoWriter (kes_venc).
#include <cstring>
#include <shared_mutex>

#include "image.hpp"

namespace kespy {
namespace {

// Reads and sends are serialised by `mu` (a decoder is used by one thread at a time); health() may run
// from any thread during a read, as in C. Every call holds `life` shared and close() holds it exclusively,
// so the decoder is never destroyed under a call.
struct VdecState {
    std::mutex mu;
    std::shared_mutex life;
    kes_vdec* vdec = nullptr;
    ~VdecState() { kes_vdec_destroy(vdec); }
};

struct VideoFrame {
    Image image;
    int64_t pts;
    uint64_t frame_index;
    bool keyframe, concealed;
};

struct VideoReader {
    std::shared_ptr<VdecState> state;

    // Runs f(vdec) with the decoder alive (and, if `exclusive`, serialised), the GIL released.
    template <class F>
    kes_status call(bool exclusive, F&& f) const {
        if (!state) throw ClosedError("VideoReader");
        kes_status st;
        bool closed = false;
        {
            py::gil_scoped_release nogil;
            std::shared_lock<std::shared_mutex> alive(state->life);
            std::unique_lock<std::mutex> one(state->mu, std::defer_lock);
            if (exclusive) one.lock();
            if (!state->vdec)
                closed = true, st = KES_OK;
            else
                st = f(state->vdec);
        }
        if (closed) throw ClosedError("VideoReader");
        return st;
    }

    py::object frame(bool packet_mode) const {
        kes_vdec_frame f;
        std::memset(&f, 0, sizeof f);
        const kes_status st = call(true, [&](kes_vdec* v) {
            return packet_mode ? kes_vdec_receive_frame(v, &f) : kes_vdec_read_frame(v, &f);
        });
        if (packet_mode && st == KES_ERR_BUSY) {
            kes_clear_error();
            return py::none();
        }
        check(st, packet_mode ? "kes_vdec_receive_frame" : "kes_vdec_read_frame");
        if (f.end_of_stream) return py::none();
        return py::cast(VideoFrame{Image::adopt(f.image), f.pts, f.frame_index, f.keyframe != 0, f.concealed != 0});
    }

    void close() {
        if (!state) return;
        py::gil_scoped_release nogil;
        std::unique_lock<std::shared_mutex> lk(state->life);
        kes_vdec_destroy(state->vdec);
        state->vdec = nullptr;
    }
};

struct VencState {
    std::mutex mu;
    kes_venc* venc = nullptr;
    ~VencState() { kes_venc_destroy(venc); }
};

struct VideoWriter {
    std::shared_ptr<VencState> state;
    std::unique_lock<std::mutex> lock() const {
        if (!state) throw ClosedError("VideoWriter");
        auto lk = lock_nogil(state->mu);
        if (!state->venc) throw ClosedError("VideoWriter");
        return lk;
    }
    void close() {
        if (!state) return;
        auto lk = lock_nogil(state->mu);
        if (!state->venc) return;
        const kes_status st = kes_venc_finish(state->venc);
        kes_venc_destroy(state->venc);
        state->venc = nullptr;
        check(st, "kes_venc_finish");
    }
};

kes_video_codec codec_from(const py::object& codec) {
    if (codec.is_none()) return KES_VIDEO_CODEC_UNKNOWN;
    const std::string c = codec.cast<std::string>();
    if (c == "h264") return KES_VIDEO_CODEC_H264;
    if (c == "h265" || c == "hevc") return KES_VIDEO_CODEC_H265;
    invalid("codec must be 'h264' or 'h265', got '" + c + "'");
}

const char* codec_name(kes_video_codec c) {
    return c == KES_VIDEO_CODEC_H264 ? "h264" : c == KES_VIDEO_CODEC_H265 ? "h265" : "unknown";
}

const char* state_name(kes_vdec_state s) {
    switch (s) {
        case KES_VDEC_STATE_RUNNING: return "running";
        case KES_VDEC_STATE_RECONNECTING: return "reconnecting";
        case KES_VDEC_STATE_STOPPED: return "stopped";
        case KES_VDEC_STATE_ENDED: return "ended";
    }
    return "unknown";
}

}  // namespace

void register_video(py::module_& m) {
    py::class_<VideoFrame>(m, "VideoFrame",
                           "A decoded frame: image (NV12/NV21, VDEC strides), pts, frame_index, "
                           "keyframe, concealed.")
        .def_readonly("image", &VideoFrame::image)
        .def_property_readonly(
            "pts",
            [](const VideoFrame& f) {
                return f.pts == KES_VIDEO_NO_PTS ? py::object(py::none()) : py::object(py::int_(f.pts));
            },
            "Timestamp (microseconds in source mode, the sent pts in packet mode), None when unknown.")
        .def_readonly("frame_index", &VideoFrame::frame_index)
        .def_readonly("keyframe", &VideoFrame::keyframe)
        .def_readonly("concealed", &VideoFrame::concealed)
        .def(
            "close", [](VideoFrame& f) { f.image.close(); }, "Frees the frame's pixels now.")
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](VideoFrame& f, const py::args&) { f.image.close(); });

    py::class_<VideoReader>(m, "VideoReader",
                            "A VDEC channel (kes_vdec). VideoReader(source) reads a file, an Annex-B stream or an "
                            "rtsp:// camera (reconnecting by itself) and iterates over VideoFrame objects; "
                            "VideoReader(None, codec='h264') takes Annex-B packets (send, receive). The GIL is "
                            "released while it waits, demuxes and decodes; health() may be called from another "
                            "thread meanwhile.")
        .def(py::init([](const py::object& source, const py::object& codec, const py::object& format,
                         const py::object& size, uint32_t frame_interval, bool keyframes_only, uint32_t threads,
                         const std::string& rtsp_transport, uint32_t timeout_ms, const std::string& reconnect,
                         uint32_t reconnect_delay_ms, uint32_t reconnect_max_delay_ms, uint32_t reconnect_max_attempts,
                         uint64_t max_pixels, bool drop_concealed, const std::string& backend) {
                 kes_vdec_config c;
                 kes_vdec_config_init(&c);
                 std::string src;
                 if (!source.is_none() && !as_path(source, &src))
                     invalid("source is a path or URL (str), or None for packet mode");
                 c.source = source.is_none() ? nullptr : src.c_str();
                 c.codec = codec_from(codec);
                 c.output_format = pixel_format_from(format);
                 if (!size.is_none()) {
                     const auto wh = size.cast<std::pair<uint32_t, uint32_t>>();
                     c.output_width = wh.first;
                     c.output_height = wh.second;
                 }
                 c.frame_interval = frame_interval;
                 c.keyframes_only = keyframes_only;
                 c.threads = threads;
                 if (rtsp_transport == "udp")
                     c.rtsp_transport = KES_RTSP_UDP;
                 else if (rtsp_transport != "tcp")
                     invalid("rtsp_transport must be 'tcp' or 'udp'");
                 c.timeout_ms = timeout_ms;
                 if (reconnect == "off")
                     c.reconnect = KES_VDEC_RECONNECT_OFF;
                 else if (reconnect == "on")
                     c.reconnect = KES_VDEC_RECONNECT_ON;
                 else if (reconnect != "auto")
                     invalid("reconnect must be 'auto', 'on' or 'off'");
                 c.reconnect_delay_ms = reconnect_delay_ms;
                 c.reconnect_max_delay_ms = reconnect_max_delay_ms;
                 c.reconnect_max_attempts = reconnect_max_attempts;
                 c.max_pixels = max_pixels;
                 c.drop_concealed = drop_concealed;
                 check(kes_backend_from_name(backend.c_str(), &c.backend), "kes_backend_from_name");
                 auto st = std::make_shared<VdecState>();
                 call_nogil("kes_vdec_create", [&] { return kes_vdec_create(&c, &st->vdec); });
                 return VideoReader{st};
             }),
             py::arg("source"), py::kw_only(), py::arg("codec") = py::none(), py::arg("format") = "nv12",
             py::arg("size") = py::none(), py::arg("frame_interval") = 1, py::arg("keyframes_only") = false,
             py::arg("threads") = 0, py::arg("rtsp_transport") = "tcp", py::arg("timeout_ms") = 5000,
             py::arg("reconnect") = "auto", py::arg("reconnect_delay_ms") = 0, py::arg("reconnect_max_delay_ms") = 0,
             py::arg("reconnect_max_attempts") = 0, py::arg("max_pixels") = 0, py::arg("drop_concealed") = false,
             py::arg("backend") = "auto")
        .def("__iter__", [](py::object self) { return self; })
        .def("__next__",
             [](const VideoReader& r) {
                 py::object f = r.frame(false);
                 if (f.is_none()) throw py::stop_iteration();
                 return f;
             })
        .def(
            "read", [](const VideoReader& r) { return r.frame(false); },
            "The next frame, or None at the end of the stream. A reconnecting camera raises TimeoutError "
            "(call again: it keeps reconnecting).")
        .def(
            "send",
            [](const VideoReader& r, const py::object& data, int64_t pts) {
                if (data.is_none()) {
                    check(
                        r.call(true, [](kes_vdec* v) { return kes_vdec_send_packet(v, nullptr, 0, KES_VIDEO_NO_PTS); }),
                        "kes_vdec_send_packet");
                    return;
                }
                Bytes b(data, "the packet");
                check(r.call(true, [&](kes_vdec* v) { return kes_vdec_send_packet(v, b.data(), b.size(), pts); }),
                      "kes_vdec_send_packet");
            },
            py::arg("data"), py::arg("pts") = KES_VIDEO_NO_PTS,
            "Packet mode: feeds Annex-B bytes (None: the end of the stream).")
        .def(
            "receive", [](const VideoReader& r) { return r.frame(true); },
            "Packet mode: the next decoded frame, or None when none is ready or the stream ended.")
        .def_property_readonly(
            "info",
            [](const VideoReader& r) {
                kes_vdec_stream_info i;
                std::memset(&i, 0, sizeof i);
                i.struct_size = sizeof i;
                check(r.call(false, [&](kes_vdec* v) { return kes_vdec_get_stream_info(v, &i); }),
                      "kes_vdec_get_stream_info");
                py::dict d;
                d["codec"] = codec_name(i.codec);
                d["width"] = i.width;
                d["height"] = i.height;
                d["bit_depth"] = i.bit_depth;
                d["fps"] = py::make_tuple(i.fps_num, i.fps_den);
                d["duration_us"] = i.duration_us;
                d["output_width"] = i.output_width;
                d["output_height"] = i.output_height;
                d["width_stride"] = i.width_stride;
                d["height_stride"] = i.height_stride;
                d["frame_size"] = i.frame_size;
                d["backend"] = kes_backend_name(i.backend);
                return d;
            },
            "The stream's properties (packet mode: after the first frame).")
        .def("stats",
             [](const VideoReader& r) {
                 kes_vdec_stats s;
                 std::memset(&s, 0, sizeof s);
                 check(r.call(false, [&](kes_vdec* v) { return kes_vdec_get_stats(v, &s); }), "kes_vdec_get_stats");
                 py::dict d;
                 d["packets"] = s.packets;
                 d["frames_decoded"] = s.frames_decoded;
                 d["frames_delivered"] = s.frames_delivered;
                 d["frames_skipped"] = s.frames_skipped;
                 d["corrupt_packets"] = s.corrupt_packets;
                 d["concealed_frames"] = s.concealed_frames;
                 return d;
             })
        .def(
            "health",
            [](const VideoReader& r) {
                kes_vdec_health h;
                std::memset(&h, 0, sizeof h);
                h.struct_size = sizeof h;
                check(r.call(false, [&](kes_vdec* v) { return kes_vdec_get_health(v, &h); }), "kes_vdec_get_health");
                py::dict d;
                d["state"] = state_name(h.state);
                d["frames_decoded"] = h.frames_decoded;
                d["frames_delivered"] = h.frames_delivered;
                d["frames_dropped"] = h.frames_dropped;
                d["reconnects"] = h.reconnects;
                d["reconnect_attempts"] = h.reconnect_attempts;
                d["failed_attempts"] = h.failed_attempts;
                d["next_attempt_ms"] = h.next_attempt_ms;
                d["last_error"] = kes_status_str(h.last_error);
                d["last_error_text"] = std::string(h.last_error_text);
                return d;
            },
            "The stream's health (state, counters, the last error); safe from any thread, also during a read.")
        .def("close", &VideoReader::close, "Destroys the decoder now (waits for a running read). Idempotent.")
        .def_property_readonly("closed", [](const VideoReader& r) { return !r.state || !r.state->vdec; })
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](VideoReader& self, const py::args&) { self.close(); });

    py::class_<VideoWriter>(m, "VideoWriter",
                            "A VENC channel (kes_venc): NV12/NV21 frames to an H.264/H.265 MP4 or Annex-B file. "
                            "close() (or a with block) finishes the file.")
        .def(py::init([](const py::object& path, uint32_t width, uint32_t height,
                         const std::pair<uint32_t, uint32_t>& fps, const std::string& codec,
                         const std::string& container, uint32_t bitrate_kbps, uint32_t gop, uint32_t threads) {
                 kes_venc_config c;
                 kes_venc_config_init(&c);
                 std::string p;
                 if (!as_path(path, &p)) invalid("path is a file path");
                 c.path = p.c_str();
                 c.width = width;
                 c.height = height;
                 c.fps_num = fps.first;
                 c.fps_den = fps.second;
                 c.codec = codec_from(py::str(codec));
                 if (container == "annexb")
                     c.container = KES_VENC_CONTAINER_ANNEXB;
                 else if (container != "mp4")
                     invalid("container must be 'mp4' or 'annexb'");
                 c.bitrate_kbps = bitrate_kbps;
                 c.gop = gop;
                 c.threads = threads;
                 auto st = std::make_shared<VencState>();
                 call_nogil("kes_venc_create", [&] { return kes_venc_create(&c, &st->venc); });
                 return VideoWriter{st};
             }),
             py::arg("path"), py::arg("width"), py::arg("height"), py::kw_only(),
             py::arg("fps") = std::make_pair(30u, 1u), py::arg("codec") = "h264", py::arg("container") = "mp4",
             py::arg("bitrate_kbps") = 0, py::arg("gop") = 30, py::arg("threads") = 0)
        .def(
            "write",
            [](const VideoWriter& w, Image& frame) {
                auto keep = frame.get();
                const kes_image img = keep->image;
                auto lk = w.lock();
                call_nogil("kes_venc_encode_frame", [&] { return kes_venc_encode_frame(w.state->venc, &img); });
            },
            py::arg("frame"), "Encodes one frame of the configured size (JPEGE/VENC stride rules).")
        .def(
            "finish",
            [](const VideoWriter& w) {
                auto lk = w.lock();
                call_nogil("kes_venc_finish", [&] { return kes_venc_finish(w.state->venc); });
            },
            "Flushes the encoder and finishes the file; later writes raise.")
        .def_property_readonly(
            "counts",
            [](const VideoWriter& w) {
                auto lk = w.lock();
                uint64_t frames = 0, bytes = 0;
                check(kes_venc_get_counts(w.state->venc, &frames, &bytes), "kes_venc_get_counts");
                return py::make_tuple(frames, bytes);
            },
            "(frames encoded, bytes written) so far.")
        .def("close", &VideoWriter::close, "Finishes the file and destroys the encoder. Idempotent.")
        .def_property_readonly("closed", [](const VideoWriter& w) { return !w.state || !w.state->venc; })
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](VideoWriter& self, const py::args&) { self.close(); });
}

}  // namespace kespy
