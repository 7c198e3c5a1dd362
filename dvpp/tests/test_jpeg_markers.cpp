// The marker walk and the EXIF orientation parser: outside data, so every malformed shape is tried.
#include "dvpp_test_util.hpp"
#include "jpeg_markers.hpp"

using namespace kes_test;

TEST(JpegMarkers, ExifOrientationBothByteOrders) {
    for (bool be : {false, true})
        for (uint16_t o = 1; o <= 8; ++o) {
            const auto seg = exif_segment(o, be);
            EXPECT_EQ(kes::parse_exif_orientation(seg.data() + 4, seg.size() - 4), o) << "big endian " << be;
        }
}

TEST(JpegMarkers, MalformedExifGivesOrientation1) {
    auto seg = exif_segment(6, false);
    const uint8_t* payload = seg.data() + 4;
    const size_t n = seg.size() - 4;
    // The value ends 26 bytes in ("Exif\0\0" 6 + TIFF header 8 + count 2 + tag/type/count 8 + SHORT 2):
    // any shorter cut gives 1, and nothing after it is needed.
    for (size_t len = 0; len < n; ++len)
        EXPECT_EQ(kes::parse_exif_orientation(payload, len), len < 26 ? 1u : 6u) << len;
    auto bad_value = exif_segment(9, false);
    EXPECT_EQ(kes::parse_exif_orientation(bad_value.data() + 4, bad_value.size() - 4), 1u);
    auto bad_type = seg;
    bad_type[4 + 6 + 8 + 2 + 2] = 4;  // type LONG instead of SHORT
    EXPECT_EQ(kes::parse_exif_orientation(bad_type.data() + 4, bad_type.size() - 4), 1u);
    auto far_ifd = seg;
    far_ifd[4 + 6 + 4] = 0xF0;  // IFD0 offset beyond the segment
    far_ifd[4 + 6 + 7] = 0x7F;
    EXPECT_EQ(kes::parse_exif_orientation(far_ifd.data() + 4, far_ifd.size() - 4), 1u);
    auto many = seg;
    many[4 + 6 + 8] = 0xFF;  // 65535 entries declared, one present
    many[4 + 6 + 9] = 0xFF;
    EXPECT_EQ(kes::parse_exif_orientation(many.data() + 4, many.size() - 4), 6u);  // found before the end
    auto bad_magic = seg;
    bad_magic[4 + 6 + 2] = 43;
    EXPECT_EQ(kes::parse_exif_orientation(bad_magic.data() + 4, bad_magic.size() - 4), 1u);
}

TEST(JpegMarkers, ScanFindsFrameTypeAndOrientation) {
    const auto base = encode_jpeg(32, 32, TJSAMP_420);
    kes::JpegMarkers m = kes::scan_jpeg_markers(base.data(), base.size());
    EXPECT_TRUE(m.found_sof);
    EXPECT_EQ(m.sof_type, 0);
    EXPECT_EQ(m.precision, 8u);
    EXPECT_EQ(m.components, 3u);
    EXPECT_EQ(m.orientation, 1u);
    const auto prog = with_exif(encode_jpeg(32, 32, TJSAMP_420, 90, TJFLAG_PROGRESSIVE), 8, true);
    m = kes::scan_jpeg_markers(prog.data(), prog.size());
    EXPECT_TRUE(m.progressive());
    EXPECT_FALSE(m.arithmetic());
    EXPECT_EQ(m.orientation, 8u);
    for (size_t len = 0; len < 200 && len < prog.size(); ++len) kes::scan_jpeg_markers(prog.data(), len);
    EXPECT_FALSE(kes::scan_jpeg_markers(nullptr, 0).found_sof);
}
