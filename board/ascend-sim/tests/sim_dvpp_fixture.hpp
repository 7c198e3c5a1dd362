// sim_dvpp_fixture.hpp — what the tests of the simulator's libacl_dvpp.so share: the runtime and DVPP
// calls bound here through dlopen the way Kestrel binds them (a kes::acl::DvppApi), the SimDvpp fixture
// (one simulated SoC and run mode per instance) and RAII over buffers, pictures, channels and ROIs.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <turbojpeg.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ascend_test_env.hpp"
#include "kes/acl_dvpp.hpp"

namespace acl = kes::acl;
using kes_test::SimBoard;

namespace sim_dvpp_test {

// The runtime calls the tests use (libascendcl.so).
struct Runtime {
    acl::Error (*aclInit)(const char*);
    acl::Error (*aclFinalize)();
    const char* (*aclGetRecentErrMsg)();
    acl::Error (*aclrtSetDevice)(int32_t);
    acl::Error (*aclrtResetDevice)(int32_t);
    acl::Error (*aclrtGetCurrentContext)(acl::Context*);
    acl::Error (*aclrtSetCurrentContext)(acl::Context);
    acl::Error (*aclrtCreateStream)(acl::Stream*);
    acl::Error (*aclrtDestroyStream)(acl::Stream);
    acl::Error (*aclrtSynchronizeStream)(acl::Stream);
    acl::Error (*aclrtMalloc)(void**, size_t, int32_t);
    acl::Error (*aclrtFree)(void*);
    acl::Error (*aclrtMemcpy)(void*, size_t, const void*, size_t, int32_t);
    acl::Error (*aclrtMemset)(void*, size_t, int32_t, size_t);
    acl::Error (*aclrtMemcpyAsync)(void*, size_t, const void*, size_t, int32_t, acl::Stream);
    acl::Error (*aclrtMallocHost)(void**, size_t);
    acl::Error (*aclrtFreeHost)(void*);
    acl::Error (*aclrtGetRunMode)(int32_t*);
};

// The resize-config VPC calls, bound apart from kes::acl::DvppApi (re-typed from acl_dvpp.h).
struct VpcResize {
    acl::Error (*acldvppSetResizeConfigInterpolation)(acl::DvppResizeConfig*, uint32_t);
    acl::Error (*acldvppVpcCropResizeAsync)(acl::DvppChannelDesc*, acl::DvppPicDesc*, acl::DvppPicDesc*,
                                            acl::DvppRoiConfig*, acl::DvppResizeConfig*, acl::Stream);
    acl::Error (*acldvppVpcCropResizePasteAsync)(acl::DvppChannelDesc*, acl::DvppPicDesc*, acl::DvppPicDesc*,
                                                 acl::DvppRoiConfig*, acl::DvppRoiConfig*, acl::DvppResizeConfig*,
                                                 acl::Stream);
    acl::Error (*acldvppVpcBatchCropResizeAsync)(acl::DvppChannelDesc*, acl::DvppBatchPicDesc*, uint32_t*, uint32_t,
                                                 acl::DvppBatchPicDesc*, acl::DvppRoiConfig*[], acl::DvppResizeConfig*,
                                                 acl::Stream);
};

struct Loaded {
    Runtime rt{};
    acl::DvppApi dvpp{};
    VpcResize vpc{};
    std::string error;
};

template <class F>
void bind(void* lib, const char* name, F* slot, std::string* error) {
    *slot = reinterpret_cast<F>(dlsym(lib, name));
    if (!*slot && error->empty()) *error = std::string("missing symbol ") + name;
}

// Loads libascendcl.so, then libacl_dvpp.so beside it, once per process (each TEST is its own process).
inline const Loaded& load() {
    static const Loaded loaded = [] {
        Loaded l;
        const std::string dir = KES_ASCEND_SIM_DIR;
        void* rt = dlopen((dir + "/libascendcl.so").c_str(), RTLD_NOW | RTLD_LOCAL);
        void* dv = rt ? dlopen((dir + "/libacl_dvpp.so").c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
        if (!rt || !dv) {
            l.error = dlerror();
            return l;
        }
#define RT(name) bind(rt, #name, &l.rt.name, &l.error)
        RT(aclInit), RT(aclFinalize), RT(aclGetRecentErrMsg), RT(aclrtSetDevice), RT(aclrtResetDevice);
        RT(aclrtGetCurrentContext), RT(aclrtSetCurrentContext), RT(aclrtCreateStream), RT(aclrtDestroyStream);
        RT(aclrtSynchronizeStream), RT(aclrtMalloc), RT(aclrtFree), RT(aclrtMemcpy), RT(aclrtMemset);
        RT(aclrtMemcpyAsync), RT(aclrtMallocHost), RT(aclrtFreeHost), RT(aclrtGetRunMode);
#undef RT
#define DV(name) bind(dv, #name, &l.dvpp.name, &l.error)
#define DR(name) bind(rt, #name, &l.dvpp.name, &l.error)
        DV(acldvppMalloc), DV(acldvppFree), DV(acldvppCreateChannelDesc), DV(acldvppDestroyChannelDesc);
        DV(acldvppSetChannelDescMode), DV(acldvppCreateChannel), DV(acldvppDestroyChannel), DV(acldvppCreatePicDesc);
        DV(acldvppDestroyPicDesc), DV(acldvppSetPicDescData), DV(acldvppSetPicDescSize), DV(acldvppSetPicDescFormat);
        DV(acldvppSetPicDescWidth), DV(acldvppSetPicDescHeight), DV(acldvppSetPicDescWidthStride);
        DV(acldvppSetPicDescHeightStride), DV(acldvppGetPicDescData), DV(acldvppGetPicDescSize);
        DV(acldvppGetPicDescFormat), DV(acldvppGetPicDescWidth), DV(acldvppGetPicDescHeight);
        DV(acldvppGetPicDescWidthStride), DV(acldvppGetPicDescHeightStride), DV(acldvppGetPicDescRetCode);
        DV(acldvppCreateBatchPicDesc), DV(acldvppGetPicDesc), DV(acldvppDestroyBatchPicDesc);
        DV(acldvppCreateRoiConfig), DV(acldvppDestroyRoiConfig), DV(acldvppCreateResizeConfig);
        DV(acldvppDestroyResizeConfig), DV(acldvppVpcResizeAsync), DV(acldvppVpcCropAsync);
        DV(acldvppVpcCropAndPasteAsync), DV(acldvppVpcBatchCropAsync), DV(acldvppJpegGetImageInfoV2);
        DV(acldvppJpegPredictDecSize), DV(acldvppJpegDecodeAsync), DV(acldvppCreateJpegeConfig);
        DV(acldvppDestroyJpegeConfig), DV(acldvppSetJpegeConfigLevel), DV(acldvppJpegPredictEncSize);
        DV(acldvppJpegEncodeAsync), DV(acldvppCreateStreamDesc), DV(acldvppDestroyStreamDesc);
        DV(acldvppSetStreamDescData), DV(acldvppSetStreamDescSize), DV(acldvppSetStreamDescFormat);
        DV(acldvppSetStreamDescTimestamp), DV(acldvppSetStreamDescEos), DV(acldvppGetStreamDescData);
        DV(acldvppGetStreamDescTimestamp), DV(acldvppGetStreamDescRetCode), DV(acldvppGetStreamDescEos);
        DV(aclvdecCreateChannelDesc), DV(aclvdecDestroyChannelDesc), DV(aclvdecSetChannelDescChannelId);
        DV(aclvdecSetChannelDescThreadId), DV(aclvdecSetChannelDescCallback), DV(aclvdecSetChannelDescEnType);
        DV(aclvdecSetChannelDescOutPicFormat), DV(aclvdecCreateChannel), DV(aclvdecDestroyChannel);
        DV(aclvdecCreateFrameConfig), DV(aclvdecDestroyFrameConfig), DV(aclvdecSendFrame);
        DR(aclrtSubscribeReport), DR(aclrtProcessReport), DR(aclrtUnSubscribeReport);
#define VPC(name) bind(dv, #name, &l.vpc.name, &l.error)
        VPC(acldvppSetResizeConfigInterpolation), VPC(acldvppVpcCropResizeAsync), VPC(acldvppVpcCropResizePasteAsync);
        VPC(acldvppVpcBatchCropResizeAsync);
#undef VPC
#undef DV
#undef DR
        // Like CANN's, the DVPP symbols are libacl_dvpp.so's own, not the runtime's.
        if (l.error.empty() && dlsym(rt, "acldvppMalloc")) l.error = "libascendcl.so exports acldvppMalloc";
        return l;
    }();
    return loaded;
}

inline std::vector<uint8_t> read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

inline std::string data_path(const char* name) {
#ifdef KES_SIM_DVPP_DATA
    return std::string(KES_SIM_DVPP_DATA) + "/" + name;
#else
    return std::string("(no test data: ffmpeg or jpegtran missing at build time)/") + name;
#endif
}

inline uint32_t align(uint32_t v, uint32_t a) {
    return (v + a - 1) / a * a;
}

class SimDvpp : public testing::TestWithParam<SimBoard> {
protected:
    const Runtime& rt = load().rt;
    const acl::DvppApi& api = load().dvpp;
    const VpcResize& vpc = load().vpc;
    acl::Stream stream = nullptr;
    bool running = false;

    void SetUp() override {
        kes_test::clear_sim_env();
        setenv("KES_SIM_SOC", GetParam().soc, 1);
        setenv("KES_SIM_RUN_MODE", GetParam().mode, 1);
        ASSERT_EQ(load().error, "");
    }
    // Starts the runtime (after a test set KES_SIM_FAIL): device 0, its context, one stream.
    void start() {
        ASSERT_EQ(rt.aclInit(nullptr), 0) << recent();
        running = true;
        ASSERT_EQ(rt.aclrtSetDevice(0), 0) << recent();
        ASSERT_EQ(rt.aclrtCreateStream(&stream), 0) << recent();
    }
    // Releases the runtime; aclFinalize's ledger fails the test on anything the test leaked.
    void TearDown() override {
        if (!running) return;
        if (stream) {
            EXPECT_EQ(rt.aclrtDestroyStream(stream), 0) << recent();
        }
        EXPECT_EQ(rt.aclrtResetDevice(0), 0) << recent();
        EXPECT_EQ(rt.aclFinalize(), 0) << recent();
    }
    std::string recent() const {
        const char* m = rt.aclGetRecentErrMsg();
        return m ? m : "";
    }
    bool v100() const { return std::string(GetParam().soc) == "Ascend310"; }
    bool host_mode() const { return std::string(GetParam().mode) == "host"; }
};

// RAII over the simulator's objects, so a failing assertion leaks nothing into the next check.
struct Buffer {
    const acl::DvppApi& api;
    const Runtime& rt;
    void* p = nullptr;
    size_t size = 0;
    Buffer(const acl::DvppApi& a, const Runtime& r, size_t n, int fill = 0) : api(a), rt(r), size(n) {
        EXPECT_EQ(api.acldvppMalloc(&p, n), 0);
        if (p) {
            EXPECT_EQ(rt.aclrtMemset(p, n, fill, n), 0);
        }
    }
    ~Buffer() {
        if (p) {
            EXPECT_EQ(api.acldvppFree(p), 0);
        }
    }
    void upload(const std::vector<uint8_t>& bytes, size_t offset = 0) {
        ASSERT_EQ(rt.aclrtMemcpy(static_cast<uint8_t*>(p) + offset, size - offset, bytes.data(), bytes.size(),
                                 acl::kMemcpyH2D),
                  0);
    }
    std::vector<uint8_t> download() const {
        std::vector<uint8_t> out(size);
        EXPECT_EQ(rt.aclrtMemcpy(out.data(), size, p, size, acl::kMemcpyD2H), 0);
        return out;
    }
};

struct Pic {
    const acl::DvppApi& api;
    acl::DvppPicDesc* d;
    explicit Pic(const acl::DvppApi& a) : api(a), d(a.acldvppCreatePicDesc()) {}
    Pic(const acl::DvppApi& a, void* data, uint32_t size, int32_t format, uint32_t w, uint32_t h, uint32_t ws,
        uint32_t hs)
        : Pic(a) {
        set(api, d, data, size, format, w, h, ws, hs);
    }
    static void set(const acl::DvppApi& api, acl::DvppPicDesc* d, void* data, uint32_t size, int32_t format, uint32_t w,
                    uint32_t h, uint32_t ws, uint32_t hs) {
        EXPECT_EQ(api.acldvppSetPicDescData(d, data), 0);
        EXPECT_EQ(api.acldvppSetPicDescSize(d, size), 0);
        EXPECT_EQ(api.acldvppSetPicDescFormat(d, format), 0);
        EXPECT_EQ(api.acldvppSetPicDescWidth(d, w), 0);
        EXPECT_EQ(api.acldvppSetPicDescHeight(d, h), 0);
        EXPECT_EQ(api.acldvppSetPicDescWidthStride(d, ws), 0);
        EXPECT_EQ(api.acldvppSetPicDescHeightStride(d, hs), 0);
    }
    ~Pic() { EXPECT_EQ(api.acldvppDestroyPicDesc(d), 0); }
};

struct Channel {
    const acl::DvppApi& api;
    acl::DvppChannelDesc* d;
    acl::Error created;
    explicit Channel(const acl::DvppApi& a)
        : api(a), d(a.acldvppCreateChannelDesc()), created(a.acldvppCreateChannel(d)) {}
    ~Channel() {
        if (created == 0) {
            EXPECT_EQ(api.acldvppDestroyChannel(d), 0);
        }
        EXPECT_EQ(api.acldvppDestroyChannelDesc(d), 0);
    }
};

struct Roi {
    const acl::DvppApi& api;
    acl::DvppRoiConfig* r;
    Roi(const acl::DvppApi& a, uint32_t left, uint32_t right, uint32_t top, uint32_t bottom)
        : api(a), r(a.acldvppCreateRoiConfig(left, right, top, bottom)) {}
    ~Roi() { EXPECT_EQ(api.acldvppDestroyRoiConfig(r), 0); }
};

// A w x h NV12 picture (stride ws, height stride h) with a pattern that differs per pixel.
inline std::vector<uint8_t> pattern_nv12(uint32_t w, uint32_t h, uint32_t ws) {
    std::vector<uint8_t> p(size_t(ws) * h * 3 / 2, 0);
    for (uint32_t y = 0; y < h; ++y) {
        for (uint32_t x = 0; x < w; ++x) p[y * ws + x] = uint8_t((x * 7 + y * 13) & 0xFF);
    }
    for (uint32_t y = 0; y < h / 2; ++y) {
        for (uint32_t x = 0; x < w; ++x) p[size_t(h) * ws + y * ws + x] = uint8_t((x * 5 + y * 11 + 40) & 0xFF);
    }
    return p;
}

// TurboJPEG's own decode at the JPEG's native subsampling.
struct TjPlanes {
    int width = 0, height = 0, subsamp = 0;
    std::vector<uint8_t> planes[3];
    int strides[3] = {};
};
inline TjPlanes tj_decode(const std::vector<uint8_t>& jpeg) {
    TjPlanes t;
    tjhandle h = tjInitDecompress();
    int cs = 0;
    EXPECT_EQ(tjDecompressHeader3(h, jpeg.data(), jpeg.size(), &t.width, &t.height, &t.subsamp, &cs), 0);
    unsigned char* ptrs[3] = {};
    for (int i = 0; i < (t.subsamp == TJSAMP_GRAY ? 1 : 3); ++i) {
        t.strides[i] = tjPlaneWidth(i, t.width, t.subsamp);
        t.planes[i].resize(size_t(t.strides[i]) * tjPlaneHeight(i, t.height, t.subsamp));
        ptrs[i] = t.planes[i].data();
    }
    EXPECT_EQ(tjDecompressToYUVPlanes(h, jpeg.data(), jpeg.size(), ptrs, t.width, t.strides, t.height, 0), 0);
    tjDestroy(h);
    return t;
}

}  // namespace sim_dvpp_test

using namespace sim_dvpp_test;
