# track.cmake — multi-object tracking (kestrel/track.h, issue 26 §1): a ByteTrack-style tracker (Kalman
# filter per track, two score rounds, optimal assignment with an optional appearance cost) in src/track/.
# Scalar C++ only: a frame's work is a few small matrices. Included by engine/CMakeLists.txt; appends to
# engine_sources / engine_test_sources.
list(APPEND engine_sources
  src/track/assignment.cpp
  src/track/tracker.cpp
  src/track/track_api.cpp)
list(APPEND engine_test_sources tests/test_track.cpp)
