// The dvpp module on the simulated DVPP hardware (board/ascend-sim's libacl_dvpp.so), on both SoCs and
// in both run modes: each call on a hardware channel is compared with the same call on a CPU channel
// (kes_dvpp_channel_config.backend = KES_BACKEND_CPU) in the same process, the automatic fallbacks are
// counted, and every fault ends in a clear status with nothing leaked (the simulator's aclFinalize, run
// by kes_backend_shutdown, fails on any descriptor or DVPP buffer left behind).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "ascend_test_env.hpp"
#include "dvpp_test_util.hpp"
#include "kestrel/dvpp.h"
#include "kestrel/memory.h"
#include "test_deps.hpp"

namespace {

using kes_test::Image;

struct ChannelHandle {
    kes_dvpp_channel* ch = nullptr;
    explicit ChannelHandle(kes_backend backend, uint32_t accept_warnings = 0) {
        kes_dvpp_channel_config cfg;
        kes_dvpp_channel_config_init(&cfg);
        cfg.backend = backend;
        cfg.accept_warnings = accept_warnings;
        EXPECT_EQ(kes_dvpp_channel_create(&cfg, &ch), KES_OK) << kes_last_error();
    }
    ~ChannelHandle() { kes_dvpp_channel_destroy(ch); }
    ChannelHandle(const ChannelHandle&) = delete;
    ChannelHandle& operator=(const ChannelHandle&) = delete;
    kes_dvpp_channel_stats stats() const {
        kes_dvpp_channel_stats s{};
        s.struct_size = sizeof s;
        EXPECT_EQ(kes_dvpp_channel_get_stats(ch, &s), KES_OK) << kes_last_error();
        return s;
    }
};

kes_mem_backend where(const kes_image& img) {
    if (img.pool) return kes_mem_pool_backend(img.pool);
    kes_mem_backend b = KES_MEM_HOST;
    EXPECT_EQ(kes_mem_get_backend(img.data, &b), KES_OK) << kes_last_error();
    return b;
}

// The image's buffer, readable by the test in both run modes.
std::vector<uint8_t> host_bytes(const kes_image& img) {
    size_t bytes = 0;
    EXPECT_EQ(kes_image_buffer_size(img.format, img.width_stride, img.height_stride, &bytes), KES_OK);
    std::vector<uint8_t> out(bytes);
    const kes_mem_backend b = where(img);
    EXPECT_EQ(kes_mem_copy(out.data(), bytes, img.data, bytes,
                           b == KES_MEM_HOST ? KES_MEMCPY_HOST_TO_HOST : KES_MEMCPY_DEVICE_TO_HOST),
              KES_OK)
        << kes_last_error();
    return out;
}

// Largest and mean absolute difference over the visible samples of every plane of two images of the
// same format and size (strides may differ).
struct Diff {
    int max = 0;
    double mean = 0;
};
Diff compare(const kes_image& a, const kes_image& b) {
    EXPECT_EQ(a.format, b.format);
    EXPECT_EQ(a.width, b.width);
    EXPECT_EQ(a.height, b.height);
    std::vector<uint8_t> ha = host_bytes(a), hb = host_bytes(b);
    kes_image va = a, vb = b;
    va.data = ha.data();
    vb.data = hb.data();
    Diff d;
    size_t n = 0;
    double sum = 0;
    for (uint32_t p = 0; p < kes_pixel_format_planes(a.format); ++p) {
        kes_image_plane pa, pb;
        EXPECT_EQ(kes_image_get_plane(&va, p, &pa), KES_OK);
        EXPECT_EQ(kes_image_get_plane(&vb, p, &pb), KES_OK);
        for (uint32_t r = 0; r < pa.rows; ++r)
            for (uint32_t i = 0; i < pa.row_bytes; ++i) {
                const int e =
                    std::abs(int(pa.data[size_t(r) * pa.stride + i]) - int(pb.data[size_t(r) * pb.stride + i]));
                d.max = std::max(d.max, e);
                sum += e;
                ++n;
            }
    }
    d.mean = n ? sum / double(n) : 0;
    return d;
}

std::vector<uint8_t> jpegtran(const std::vector<uint8_t>& jpeg, const char* option) {
    const std::string dir = KES_TEST_TMPDIR;
    // One pair of files per process: ctest runs the SoC/run-mode instances of a test in parallel.
    const std::string tag = std::to_string(static_cast<long>(getpid()));
    const std::string in = dir + "/dvpp_ascend_in_" + tag + ".jpg", out = dir + "/dvpp_ascend_out_" + tag + ".jpg";
    FILE* f = std::fopen(in.c_str(), "wb");
    if (!f) return {};
    std::fwrite(jpeg.data(), 1, jpeg.size(), f);
    std::fclose(f);
    const std::string cmd = std::string("jpegtran ") + option + " -outfile " + out + " " + in + " 2>/dev/null";
    const int rc = std::system(cmd.c_str());
    std::remove(in.c_str());
    if (rc != 0) return {};
    f = std::fopen(out.c_str(), "rb");
    if (!f) return {};
    std::vector<uint8_t> bytes;
    unsigned char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) bytes.insert(bytes.end(), buf, buf + n);
    std::fclose(f);
    std::remove(out.c_str());
    return bytes;
}

class DvppHardware : public kes_test::AscendBoardTest {
protected:
    void ExpectCleanShutdown() {
        EXPECT_EQ(kes_backend_shutdown(), KES_OK) << "leak or release failure: " << kes_last_error();
    }
};

INSTANTIATE_TEST_SUITE_P(Sim, DvppHardware, testing::ValuesIn(kes_test::kSimBoards), kes_test::sim_board_name);

TEST_P(DvppHardware, JpegDecodeRunsOnTheHardwareAndEqualsTheCpuPath) {
    {
        ChannelHandle hw(KES_BACKEND_AUTO), cpu(KES_BACKEND_CPU);
        ASSERT_EQ(hw.stats().backend, KES_BACKEND_ASCEND);
        ASSERT_EQ(cpu.stats().backend, KES_BACKEND_CPU);
        EXPECT_EQ(kes_mem_is_host_accessible(KES_MEM_DVPP), host_mode() ? 0 : 1);
        uint64_t decodes = 0;
        for (int samp : {TJSAMP_420, TJSAMP_422, TJSAMP_444, TJSAMP_GRAY}) {
            for (auto size : {std::pair<int, int>{640, 480}, {333, 217}}) {
                const std::vector<uint8_t> jpeg = kes_test::encode_jpeg(size.first, size.second, samp);
                for (kes_pixel_format format : {KES_PIXEL_NV12, KES_PIXEL_NV21}) {
                    Image a, b;
                    ASSERT_EQ(kes_jpeg_decode(hw.ch, jpeg.data(), jpeg.size(), format, nullptr, &a), KES_OK)
                        << kes_last_error();
                    ++decodes;
                    ASSERT_EQ(kes_jpeg_decode(cpu.ch, jpeg.data(), jpeg.size(), format, nullptr, &b), KES_OK)
                        << kes_last_error();
                    EXPECT_EQ(where(a), KES_MEM_DVPP);
                    EXPECT_EQ(a.width_stride, b.width_stride);
                    EXPECT_EQ(a.height_stride, b.height_stride);
                    // Both decode through libjpeg-turbo and subsample non-4:2:0 chroma by the same documented
                    // rule (dvpp.h; JPEGD's own filter is undocumented): equal bytes.
                    EXPECT_EQ(compare(a, b).max, 0)
                        << "subsampling " << samp << " " << size.first << "x" << size.second;
                }
            }
        }
        EXPECT_EQ(hw.stats().hardware_calls, decodes);
        EXPECT_EQ(hw.stats().fallbacks, 0u);
        EXPECT_EQ(cpu.stats().hardware_calls, 0u);
    }
    ExpectCleanShutdown();
}

TEST_P(DvppHardware, OrientationAndSemiPlanarOutputsAreDecodedOnTheHardware) {
    {
        ChannelHandle hw(KES_BACKEND_AUTO), cpu(KES_BACKEND_CPU);
        struct Case {
            int samp;
            uint16_t orientation;
            kes_pixel_format format;
        } cases[] = {{TJSAMP_420, 6, KES_PIXEL_NV12},     {TJSAMP_420, 3, KES_PIXEL_NV21},
                     {TJSAMP_422, 8, KES_PIXEL_NV12},     {TJSAMP_444, 1, KES_PIXEL_YUV444SP},
                     {TJSAMP_422, 1, KES_PIXEL_YVU422SP}, {TJSAMP_444, 1, KES_PIXEL_UNKNOWN}};
        for (const Case& c : cases) {
            // Odd sizes: rotation must not bring TurboJPEG's padding into view, and subsampled chroma follows
            // dvpp.h's rule (replicate, orient, rounded mean) on both sides (UNCONFIRMED against a board).
            const std::vector<uint8_t> jpeg =
                kes_test::with_exif(kes_test::encode_jpeg(331, 213, c.samp), c.orientation);
            Image a, b;
            ASSERT_EQ(kes_jpeg_decode(hw.ch, jpeg.data(), jpeg.size(), c.format, nullptr, &a), KES_OK)
                << kes_last_error();
            ASSERT_EQ(kes_jpeg_decode(cpu.ch, jpeg.data(), jpeg.size(), c.format, nullptr, &b), KES_OK);
            EXPECT_EQ(a.format, b.format);
            EXPECT_EQ(a.width_stride, b.width_stride);
            EXPECT_EQ(compare(a, b).max, 0) << "orientation " << c.orientation << ", format " << c.format;
        }
        EXPECT_EQ(hw.stats().hardware_calls, sizeof cases / sizeof cases[0]);
    }
    ExpectCleanShutdown();
}

TEST_P(DvppHardware, WhatTheHardwareRefusesFallsBackToTheCpuByItself) {
    const std::vector<uint8_t> base = kes_test::encode_jpeg(320, 240, TJSAMP_420);
    std::vector<std::pair<const char*, std::vector<uint8_t>>> cases;
    cases.emplace_back("progressive", kes_test::encode_jpeg(320, 240, TJSAMP_420, 90, TJFLAG_PROGRESSIVE));
    cases.emplace_back("no EOI", std::vector<uint8_t>(base.begin(), base.end() - 2));
    const std::vector<uint8_t> arith = jpegtran(base, "-arithmetic");
    if (arith.empty()) KES_TEST_SKIP("jpegtran (libjpeg-turbo-progs) is missing");
    cases.emplace_back("arithmetic", arith);
    {
        ChannelHandle hw(KES_BACKEND_AUTO, 1), cpu(KES_BACKEND_CPU, 1);
        for (const auto& c : cases) {
            Image a, b;
            ASSERT_EQ(kes_jpeg_decode(hw.ch, c.second.data(), c.second.size(), KES_PIXEL_NV12, nullptr, &a), KES_OK)
                << c.first << ": " << kes_last_error();
            ASSERT_EQ(kes_jpeg_decode(cpu.ch, c.second.data(), c.second.size(), KES_PIXEL_NV12, nullptr, &b), KES_OK)
                << c.first << ": " << kes_last_error();
            EXPECT_EQ(compare(a, b).max, 0) << c.first;
        }
        const kes_dvpp_channel_stats s = hw.stats();
        EXPECT_EQ(s.hardware_calls, 0u);
        EXPECT_EQ(s.fallbacks, cases.size());
        EXPECT_EQ(s.cpu_calls, cases.size());
    }
    ExpectCleanShutdown();
}

TEST_P(DvppHardware, VpcCallsRunOnTheHardwareCloseToTheCpuPath) {
    const std::vector<uint8_t> jpeg = kes_test::encode_jpeg(640, 480, TJSAMP_420);
    {
        ChannelHandle hw(KES_BACKEND_AUTO), cpu(KES_BACKEND_CPU);
        Image src_hw, src_cpu;
        ASSERT_EQ(kes_jpeg_decode(hw.ch, jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &src_hw), KES_OK);
        ASSERT_EQ(kes_jpeg_decode(cpu.ch, jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &src_cpu), KES_OK);
        const kes_vpc_roi roi{64, 32, 64 + 320 - 1, 32 + 240 - 1};
        // The hardware's bilinear and Kestrel's OpenCV-exact one need not agree bit for bit (the board's
        // filters are undocumented): the simulator's independent implementation must stay within these.
        constexpr int kMaxDiff = 2;
        constexpr double kMeanDiff = 0.5;

        Image a, b;
        ASSERT_EQ(kes_vpc_crop_resize(hw.ch, &src_hw, &roi, 224, 160, KES_VPC_INTERP_BILINEAR, nullptr, &a), KES_OK)
            << kes_last_error();
        ASSERT_EQ(kes_vpc_crop_resize(cpu.ch, &src_cpu, &roi, 224, 160, KES_VPC_INTERP_BILINEAR, nullptr, &b), KES_OK);
        EXPECT_EQ(where(a), KES_MEM_DVPP);
        Diff d = compare(a, b);
        EXPECT_LE(d.max, kMaxDiff);
        EXPECT_LE(d.mean, kMeanDiff);

        // Letterbox: padding and paste area as the CPU path.
        kes_vpc_letterbox_config lb;
        kes_vpc_letterbox_config_init(&lb);
        lb.fill_y = 114;
        Image la, lbi;
        kes_vpc_roi area_hw{}, area_cpu{};
        ASSERT_EQ(kes_vpc_letterbox(hw.ch, &src_hw, nullptr, 256, 256, &lb, nullptr, &la, &area_hw), KES_OK)
            << kes_last_error();
        ASSERT_EQ(kes_vpc_letterbox(cpu.ch, &src_cpu, nullptr, 256, 256, &lb, nullptr, &lbi, &area_cpu), KES_OK);
        EXPECT_EQ(area_hw.left, area_cpu.left);
        EXPECT_EQ(area_hw.bottom, area_cpu.bottom);
        d = compare(la, lbi);
        EXPECT_LE(d.max, kMaxDiff);
        EXPECT_LE(d.mean, kMeanDiff);

        // Crop-and-paste into a host canvas: staged in and out of DVPP memory, the rest kept.
        Image canvas_hw, canvas_cpu;
        for (Image* c : {&canvas_hw, &canvas_cpu}) {
            ASSERT_EQ(kes_image_alloc(c, nullptr, KES_PIXEL_NV12, 256, 128, 256, 128), KES_OK);
            std::memset(c->data, 77, c->size);
        }
        const kes_vpc_roi paste{32, 16, 32 + 128 - 1, 16 + 96 - 1};
        ASSERT_EQ(kes_vpc_crop_and_paste(hw.ch, &src_hw, &roi, &canvas_hw, &paste, KES_VPC_INTERP_BILINEAR), KES_OK)
            << kes_last_error();
        ASSERT_EQ(kes_vpc_crop_and_paste(cpu.ch, &src_cpu, &roi, &canvas_cpu, &paste, KES_VPC_INTERP_BILINEAR), KES_OK);
        d = compare(canvas_hw, canvas_cpu);
        EXPECT_LE(d.max, kMaxDiff);
        EXPECT_EQ(static_cast<uint8_t*>(canvas_hw.data)[0], 77);              // outside the paste area
        EXPECT_EQ(static_cast<uint8_t*>(canvas_hw.data)[128 * 256 - 1], 77);  // the last luma byte

        // Batch crop over two pictures, ROIs out of source order: outputs come back in the caller's order.
        const kes_image pics_hw[2] = {src_hw, a}, pics_cpu[2] = {src_cpu, b};
        const kes_vpc_batch_roi rois[3] = {
            {1, {0, 0, 111, 79}, 64, 48}, {0, {0, 0, 319, 239}, 160, 120}, {1, {112, 80, 223, 159}, 112, 80}};
        kes_image out_hw[3], out_cpu[3];
        ASSERT_EQ(kes_vpc_batch_crop(hw.ch, pics_hw, 2, rois, 3, KES_VPC_INTERP_BILINEAR, nullptr, out_hw), KES_OK)
            << kes_last_error();
        ASSERT_EQ(kes_vpc_batch_crop(cpu.ch, pics_cpu, 2, rois, 3, KES_VPC_INTERP_BILINEAR, nullptr, out_cpu), KES_OK);
        for (int i = 0; i < 3; ++i) {
            EXPECT_EQ(out_hw[i].width, rois[i].out_width);
            // A crop of the hardware's own resize (a) compounds two filters: allow one more level.
            d = compare(out_hw[i], out_cpu[i]);
            EXPECT_LE(d.max, rois[i].image_index == 1 ? kMaxDiff + 2 : kMaxDiff) << "roi " << i;
            kes_image_release(&out_hw[i]);
            kes_image_release(&out_cpu[i]);
        }
        EXPECT_EQ(hw.stats().hardware_calls, 5u);
        EXPECT_EQ(hw.stats().fallbacks, 0u);
    }
    ExpectCleanShutdown();
}

TEST_P(DvppHardware, JpegEncodeRunsOnTheHardwareAndDecodesBackToTheImage) {
    const std::vector<uint8_t> jpeg = kes_test::encode_jpeg(640, 480, TJSAMP_420, 95);
    {
        ChannelHandle hw(KES_BACKEND_AUTO), cpu(KES_BACKEND_CPU);
        Image src, src_cpu;
        ASSERT_EQ(kes_jpeg_decode(hw.ch, jpeg.data(), jpeg.size(), KES_PIXEL_NV21, nullptr, &src), KES_OK);
        ASSERT_EQ(kes_jpeg_decode(cpu.ch, jpeg.data(), jpeg.size(), KES_PIXEL_NV21, nullptr, &src_cpu), KES_OK);
        size_t capacity = 0;
        ASSERT_EQ(kes_jpeg_predict_encode_size(hw.ch, &src, &capacity), KES_OK) << kes_last_error();
        std::vector<uint8_t> out(capacity);
        size_t written = 0;
        ASSERT_EQ(kes_jpeg_encode(hw.ch, &src, 90, out.data(), out.size(), &written), KES_OK) << kes_last_error();
        EXPECT_EQ(hw.stats().hardware_calls, 2u);
        ASSERT_GT(written, 100u);
        Image back;
        ASSERT_EQ(kes_jpeg_decode(cpu.ch, out.data(), written, KES_PIXEL_NV21, nullptr, &back), KES_OK)
            << kes_last_error();
        EXPECT_EQ(back.width, 640u);
        EXPECT_EQ(back.height, 480u);
        const Diff d = compare(back, src_cpu);
        EXPECT_LT(d.mean, 2.0);  // a quality-90 round trip
        // A buffer that is too small is refused with the size it needed, never overrun.
        size_t tiny_written = 0;
        EXPECT_EQ(kes_jpeg_encode(hw.ch, &src, 90, out.data(), 64, &tiny_written), KES_ERR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(kes_last_error()).find("too small"), std::string::npos) << kes_last_error();
        EXPECT_EQ(tiny_written, 0u);
    }
    ExpectCleanShutdown();
}

TEST_P(DvppHardware, NearestInterpolationRunsOnTheHardwareAsOnTheCpu) {
    const std::vector<uint8_t> jpeg = kes_test::encode_jpeg(320, 240, TJSAMP_420);
    {
        ChannelHandle hw(KES_BACKEND_AUTO), cpu(KES_BACKEND_CPU);
        Image src_hw, src_cpu, a, b;
        ASSERT_EQ(kes_jpeg_decode(hw.ch, jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &src_hw), KES_OK);
        ASSERT_EQ(kes_jpeg_decode(cpu.ch, jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &src_cpu), KES_OK);
        ASSERT_EQ(kes_vpc_crop_resize(hw.ch, &src_hw, nullptr, 96, 70, KES_VPC_INTERP_NEAREST, nullptr, &a), KES_OK)
            << kes_last_error();
        ASSERT_EQ(kes_vpc_crop_resize(cpu.ch, &src_cpu, nullptr, 96, 70, KES_VPC_INTERP_NEAREST, nullptr, &b), KES_OK);
        EXPECT_EQ(hw.stats().hardware_calls, 2u);
        EXPECT_EQ(compare(a, b).max, 0);  // nearest has one answer
    }
    ExpectCleanShutdown();
}

TEST_P(DvppHardware, CpuOnlyCallsSayWhenTheCpuCannotReadTheImage) {
    const std::vector<uint8_t> jpeg = kes_test::encode_jpeg(320, 240, TJSAMP_420);
    {
        ChannelHandle hw(KES_BACKEND_AUTO);
        Image src, out;
        ASSERT_EQ(kes_jpeg_decode(hw.ch, jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &src), KES_OK);
        // Colour conversion runs on the CPU: on a PCIe card (ACL_HOST) it cannot read DVPP memory and says
        // so instead of crashing; on a board it reads it in place.
        const kes_status st = kes_vpc_convert_color(hw.ch, &src, KES_PIXEL_NV21, KES_VPC_CSC_BT601_WIDE, nullptr, &out);
        if (host_mode()) {
            EXPECT_EQ(st, KES_ERR_UNSUPPORTED);
            EXPECT_NE(std::string(kes_last_error()).find("the CPU cannot read"), std::string::npos) << kes_last_error();
        } else {
            EXPECT_EQ(st, KES_OK) << kes_last_error();
        }
    }
    ExpectCleanShutdown();
}

TEST_P(DvppHardware, OutputsGoToADvppPoolDirectlyAndToAHostPoolByCopy) {
    const std::vector<uint8_t> jpeg = kes_test::encode_jpeg(320, 240, TJSAMP_420);
    {
        ChannelHandle hw(KES_BACKEND_AUTO), cpu(KES_BACKEND_CPU);
        for (kes_mem_backend backend : {KES_MEM_DVPP, KES_MEM_HOST}) {
            kes_mem_pool_config pc;
            kes_mem_pool_config_init(&pc);
            pc.backend = backend;
            pc.initial_bytes = 4 << 20;
            kes_mem_pool* pool = nullptr;
            ASSERT_EQ(kes_mem_pool_create(&pc, &pool), KES_OK) << kes_last_error();
            {
                Image a, b;
                ASSERT_EQ(kes_jpeg_decode(hw.ch, jpeg.data(), jpeg.size(), KES_PIXEL_NV12, pool, &a), KES_OK)
                    << kes_last_error();
                ASSERT_EQ(kes_jpeg_decode(cpu.ch, jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &b), KES_OK);
                EXPECT_EQ(a.pool, pool);
                EXPECT_EQ(kes_mem_pool_contains(pool, a.data), 1);
                EXPECT_EQ(compare(a, b).max, 0);
            }
            kes_mem_pool_destroy(pool);
        }
    }
    ExpectCleanShutdown();
}

// ---- faults: each a clear status and message, nothing leaked ------------------------------------------

class DvppHardwareFaults : public kes_test::AscendTest {
protected:
    void ExpectCleanShutdown() {
        EXPECT_EQ(kes_backend_shutdown(), KES_OK) << "leak or release failure: " << kes_last_error();
    }
    // Runs one JPEG decode on a hardware channel under KES_SIM_FAIL=<fault>.
    kes_status decode_with(const char* fault, std::string* message) {
        setenv("KES_SIM_FAIL", fault, 1);
        const std::vector<uint8_t> jpeg = kes_test::encode_jpeg(320, 240, TJSAMP_420);
        kes_status st = KES_OK;
        {
            ChannelHandle hw(KES_BACKEND_AUTO);
            Image img;
            st = kes_jpeg_decode(hw.ch, jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img);
            *message = kes_last_error();
            EXPECT_EQ(img.data, nullptr);
        }
        return st;
    }
};

TEST_F(DvppHardwareFaults, FailedJpegDecodeIsReportedAndLeaksNothing) {
    std::string msg;
    EXPECT_EQ(decode_with("acldvppJpegDecodeAsync:1:500002", &msg), KES_ERR_INTERNAL);
    EXPECT_NE(msg.find("acldvppJpegDecodeAsync"), std::string::npos) << msg;
    EXPECT_NE(msg.find("500002"), std::string::npos) << msg;
    ExpectCleanShutdown();
}

TEST_F(DvppHardwareFaults, DvppOutOfMemoryIsReportedAndLeaksNothing) {
    std::string msg;
    EXPECT_EQ(decode_with("acldvppMalloc:2:207018", &msg), KES_ERR_OUT_OF_MEMORY);  // the output buffer
    EXPECT_NE(msg.find("acldvppMalloc"), std::string::npos) << msg;
    ExpectCleanShutdown();
}

TEST_F(DvppHardwareFaults, SyncTimeoutIsReportedAndLeaksNothing) {
    std::string msg;
    EXPECT_EQ(decode_with("aclrtSynchronizeStreamWithTimeout:1:507046,aclrtSynchronizeStream:1:507046", &msg),
              KES_ERR_TIMEOUT);
    EXPECT_NE(msg.find("ACL_ERROR_RT_STREAM_SYNC_TIMEOUT"), std::string::npos) << msg;
    ExpectCleanShutdown();
}

TEST_F(DvppHardwareFaults, ExhaustedChannelsAreNamedAndCpuChannelsStillWork) {
    std::vector<kes_dvpp_channel*> channels;
    kes_status st = KES_OK;
    std::string msg;
    for (int i = 0; i < 1024 && st == KES_OK; ++i) {
        kes_dvpp_channel* ch = nullptr;
        st = kes_dvpp_channel_create(nullptr, &ch);
        if (st == KES_OK)
            channels.push_back(ch);
        else
            msg = kes_last_error();
    }
    EXPECT_EQ(st, KES_ERR_BUSY);
    EXPECT_NE(msg.find("every DVPP channel"), std::string::npos) << msg;
    EXPECT_FALSE(channels.empty());
    {
        ChannelHandle cpu(KES_BACKEND_CPU);
        EXPECT_NE(cpu.ch, nullptr);
    }
    for (kes_dvpp_channel* ch : channels) kes_dvpp_channel_destroy(ch);
    ExpectCleanShutdown();
}

TEST_F(DvppHardwareFaults, CpuBackendNeverTouchesTheHardware) {
    setenv("KES_BACKEND", "cpu", 1);
    const std::vector<uint8_t> jpeg = kes_test::encode_jpeg(64, 48, TJSAMP_420);
    ChannelHandle ch(KES_BACKEND_AUTO);
    EXPECT_EQ(ch.stats().backend, KES_BACKEND_CPU);
    Image img;
    ASSERT_EQ(kes_jpeg_decode(ch.ch, jpeg.data(), jpeg.size(), KES_PIXEL_NV12, nullptr, &img), KES_OK);
    EXPECT_EQ(where(img), KES_MEM_HOST);
    EXPECT_EQ(ch.stats().cpu_calls, 1u);
}

TEST_F(DvppHardwareFaults, AscendChannelWithoutDvppFailsClearly) {
    // A runtime directory without libacl_dvpp.so: the runtime loads, DVPP does not.
    const std::string dir = std::string(KES_TEST_TMPDIR) + "/runtime-only";
    ASSERT_EQ(std::system(("mkdir -p " + dir + " && cp " + KES_ASCEND_SIM_DIR + "/libascendcl.so " + dir).c_str()), 0);
    setenv("KES_ASCEND_LIB_DIR", dir.c_str(), 1);
    kes_dvpp_channel_config cfg;
    kes_dvpp_channel_config_init(&cfg);
    cfg.backend = KES_BACKEND_ASCEND;
    kes_dvpp_channel* ch = nullptr;
    EXPECT_EQ(kes_dvpp_channel_create(&cfg, &ch), KES_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(kes_last_error()).find("libacl_dvpp.so"), std::string::npos) << kes_last_error();
    EXPECT_EQ(ch, nullptr);
    cfg.backend = KES_BACKEND_AUTO;  // auto: the CPU serves
    ASSERT_EQ(kes_dvpp_channel_create(&cfg, &ch), KES_OK) << kes_last_error();
    kes_dvpp_channel_stats s{};
    s.struct_size = sizeof s;
    EXPECT_EQ(kes_dvpp_channel_get_stats(ch, &s), KES_OK);
    EXPECT_EQ(s.backend, KES_BACKEND_CPU);
    kes_dvpp_channel_destroy(ch);
    ExpectCleanShutdown();
}

}  // namespace
