# dvpp video: VDEC/VENC over FFmpeg 5.1 (libavformat, libavcodec, libavutil, libswscale), BOARD-RULES §VDEC, §VENC.
# Included by dvpp/CMakeLists.txt before kes_add_module; dvpp_video_after_module() runs after it.
# KES_WITH_FFMPEG=OFF: no FFmpeg at all; the video calls return KES_ERR_UNSUPPORTED (video_unavailable.cpp),
# for the smallest static binaries (bench/footprint.sh).
option(KES_WITH_FFMPEG "dvpp video (VDEC/VENC) over FFmpeg; OFF: the kes_vdec_*/kes_venc_* calls fail" ON)
if(NOT KES_WITH_FFMPEG)
  list(APPEND dvpp_sources video_unavailable.cpp)
  return()
endif()
pkg_check_modules(KES_FFMPEG REQUIRED IMPORTED_TARGET GLOBAL libavformat libavcodec libavutil libswscale)
# As for libturbojpeg: the installed kestrel.pc requires them and KestrelConfig.cmake re-finds them.
set_property(GLOBAL APPEND PROPERTY KES_PKGCONFIG_REQUIRES libavformat libavcodec libavutil libswscale)
set_property(GLOBAL APPEND PROPERTY KES_CONFIG_DEPENDENCIES
  "pkg_check_modules(KES_FFMPEG REQUIRED IMPORTED_TARGET GLOBAL libavformat libavcodec libavutil libswscale)")

list(APPEND dvpp_sources src/video_decode.cpp src/video_encode.cpp)
list(APPEND dvpp_libs PkgConfig::KES_FFMPEG)
list(APPEND dvpp_test_sources tests/test_vdec.cpp tests/test_vdec_rtsp.cpp tests/test_venc.cpp tests/test_struct_size.cpp)

function(dvpp_video_after_module)
  if(NOT KES_BUILD_TESTS)
    return()
  endif()
  kes_add_fuzzer(dvpp video_stream SOURCE fuzz/fuzz_video_stream.cpp
                 SEEDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds/video)

  # Test clips are made at build time on the build machine with Debian's ffmpeg (an x86 program that
  # qemu could not start from an emulated test), together with FFmpeg's own per-frame MD5s of the
  # decoded NV12 (framemd5): the reference the tests compare against. Small on purpose (qemu).
  find_program(KES_FFMPEG_EXECUTABLE ffmpeg)
  if(NOT KES_FFMPEG_EXECUTABLE)
    kes_missing_test_dependency(VideoClips "ffmpeg (the program, apt-get install ffmpeg)")
    return()
  endif()
  set(dir ${CMAKE_BINARY_DIR}/test-data/video)
  set(ff ${KES_FFMPEG_EXECUTABLE} -nostdin -hide_banner -loglevel error -y)
  set(src -f lavfi -i testsrc2=size=328x240:rate=30)
  # 328 is not a multiple of 16: the boards' VDEC stride (336) differs from the width.
  set(x265_log -x265-params log-level=error:keyint=10:min-keyint=10:scenecut=0)
  set(clips
    ${dir}/h264.mp4 ${dir}/h264.h264 ${dir}/h264.ts ${dir}/h264.nv12.framemd5 ${dir}/h264_160x120.nv12.framemd5
    ${dir}/h265.mkv ${dir}/h265.h265 ${dir}/h265.nv12.framemd5
    ${dir}/h265_10bit.h265 ${dir}/h265_10bit.nv12
    ${dir}/camera.mp4 ${dir}/camera.h264 ${dir}/tiny_64x64.h264)
  add_custom_command(
    OUTPUT ${clips}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    # H.264 with B-frames (reordering) and a key frame every 10 frames, closed GOPs.
    COMMAND ${ff} ${src} -frames:v 30 -c:v libx264 -pix_fmt yuv420p -g 10 -keyint_min 10 -sc_threshold 0
            -threads 1 ${dir}/h264.mp4
    COMMAND ${ff} -i ${dir}/h264.mp4 -c copy -bsf:v h264_mp4toannexb -f h264 ${dir}/h264.h264
    COMMAND ${ff} -i ${dir}/h264.mp4 -c copy -f mpegts ${dir}/h264.ts
    COMMAND ${ff} -i ${dir}/h264.mp4 -pix_fmt nv12 -f framemd5 ${dir}/h264.nv12.framemd5
    COMMAND ${ff} -i ${dir}/h264.mp4 -vf scale=160:120:flags=bilinear -pix_fmt nv12 -f framemd5
            ${dir}/h264_160x120.nv12.framemd5
    COMMAND ${ff} ${src} -frames:v 30 -c:v libx265 -pix_fmt yuv420p ${x265_log} ${dir}/h265.mkv
    COMMAND ${ff} -i ${dir}/h265.mkv -c copy -bsf:v hevc_mp4toannexb -f hevc ${dir}/h265.h265
    COMMAND ${ff} -i ${dir}/h265.mkv -pix_fmt nv12 -f framemd5 ${dir}/h265.nv12.framemd5
    COMMAND ${ff} ${src} -frames:v 8 -c:v libx265 -pix_fmt yuv420p10le ${x265_log} -f hevc ${dir}/h265_10bit.h265
    COMMAND ${ff} -i ${dir}/h265_10bit.h265 -pix_fmt nv12 -f rawvideo ${dir}/h265_10bit.nv12
    # What an IP camera sends: no B-frames, a key frame every 15 frames.
    COMMAND ${ff} ${src} -frames:v 90 -c:v libx264 -pix_fmt yuv420p -bf 0 -g 15 -threads 1 ${dir}/camera.mp4
    COMMAND ${ff} -i ${dir}/camera.mp4 -c copy -bsf:v h264_mp4toannexb -f h264 ${dir}/camera.h264
    COMMAND ${ff} -f lavfi -i testsrc2=size=64x64:rate=30 -frames:v 3 -c:v libx264 -pix_fmt yuv420p -threads 1
            -f h264 ${dir}/tiny_64x64.h264
    COMMENT "Making H.264/H.265 test clips with ffmpeg"
    VERBATIM)
  add_custom_target(kes_dvpp_video_clips DEPENDS ${clips})
  add_dependencies(kes_dvpp_tests kes_dvpp_video_clips)
  target_compile_definitions(kes_dvpp_tests PRIVATE KES_VIDEO_TEST_DATA="${dir}")
  # The hardware path's RTSP test (board/ascend-sim, added after the modules) serves the same clips.
  set_property(GLOBAL PROPERTY KES_VIDEO_TEST_DATA ${dir})

  # A camera-like RTSP server for the RTSP tests (GStreamer's rtsp-server library). A host-side test
  # helper only: not built when cross-compiling, and built without the sanitizers (it is not Kestrel).
  if(NOT CMAKE_CROSSCOMPILING)
    pkg_check_modules(KES_GST_RTSP QUIET IMPORTED_TARGET gstreamer-rtsp-server-1.0)
    if(KES_GST_RTSP_FOUND)
      add_executable(kes_rtsp_test_server tests/rtsp_test_server.c)
      set_property(TARGET kes_rtsp_test_server PROPERTY COMPILE_OPTIONS "")
      set_property(TARGET kes_rtsp_test_server PROPERTY LINK_OPTIONS "")
      target_link_libraries(kes_rtsp_test_server PRIVATE PkgConfig::KES_GST_RTSP)
      add_dependencies(kes_dvpp_tests kes_rtsp_test_server)
      target_compile_definitions(kes_dvpp_tests PRIVATE
        KES_RTSP_TEST_SERVER="$<TARGET_FILE:kes_rtsp_test_server>")
    else()
      kes_missing_test_dependency(VdecRtsp "gstreamer-rtsp-server-1.0 (libgstrtspserver-1.0-dev)")
    endif()
  endif()
endfunction()
