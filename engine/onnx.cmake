# onnx.cmake — the ONNX importer (src/convert/onnx_import.cpp) and its protobuf wire-format reader.
# Included by engine/CMakeLists.txt; the tests, tool, conformance runner and fuzzer are wired up in
# convert.cmake (they need the conversion pipeline as well).
list(APPEND convert_sources
  src/convert/protobuf_reader.cpp
  src/convert/onnx_import.cpp)
