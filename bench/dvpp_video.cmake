# P5 (issue 3): H.264 1080p decode, kes_vdec beside a plain FFmpeg decode loop, and decode scaling
# over 1-4 channels. Included by bench/CMakeLists.txt.
if(NOT TARGET kes_dvpp OR NOT TARGET PkgConfig::KES_FFMPEG)  # KES_WITH_FFMPEG=OFF: no video to measure
  return()
endif()
target_sources(kes-bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bench_dvpp_video.cpp)
target_link_libraries(kes-bench PRIVATE PkgConfig::KES_FFMPEG)  # the peer decodes with FFmpeg directly

# The clip: 2 s of 1080p30 H.264 as an IP camera sends it (no B-frames, a key frame per second),
# made with Debian's ffmpeg when kes-bench is built.
find_program(KES_FFMPEG_EXECUTABLE ffmpeg)
if(KES_FFMPEG_EXECUTABLE)
  set(clip ${CMAKE_BINARY_DIR}/bench-data/h264_1080p30.h264)
  add_custom_command(
    OUTPUT ${clip}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/bench-data
    COMMAND ${KES_FFMPEG_EXECUTABLE} -nostdin -hide_banner -loglevel error -y -f lavfi
            -i testsrc2=size=1920x1080:rate=30 -frames:v 60 -c:v libx264 -preset veryfast -pix_fmt yuv420p
            -bf 0 -g 30 -b:v 6M -f h264 ${clip}
    COMMENT "Making the 1080p H.264 benchmark clip"
    VERBATIM)
  add_custom_target(kes_bench_video_clip DEPENDS ${clip})
  add_dependencies(kes-bench kes_bench_video_clip)
  target_compile_definitions(kes-bench PRIVATE KES_BENCH_VIDEO_CLIP="${clip}")
endif()
