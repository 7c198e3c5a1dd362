#!/usr/bin/env bash
# kes-convert --om: ATC is run with the equivalent options, or its absence is said plainly.
#   kes_convert_om_check.sh atc-missing|atc-arguments|atc-writes-nothing KES_CONVERT TMPDIR MODELS_DIR [EMULATOR...]
# atc-missing: no atc anywhere → exit 1 and a message naming atc, PATH and ASCEND_HOME_PATH.
# atc-writes-nothing: an atc that exits 0 without writing the .om → exit 1 naming the file (kes-convert
# printed "atc wrote b.om").
# atc-arguments: a fake atc on PATH records its arguments; each kes-convert option must arrive under
# ATC's name (--framework=5, --soc_version from --board, the same --insert_op_conf file, the gears).
# Exit 77 (skipped) when a real atc is installed in /usr/bin or /bin (the first case cannot be staged).
set -u
case_name=$1 tool=$2 tmp=$3
shift 4
emulator=("$@")
seed="$(cd "$(dirname "$0")/.." && pwd)/fuzz/seeds_onnx/conv_bn_relu.onnx"
mkdir -p "$tmp"
fail() { echo "FAIL: $*"; exit 1; }

if [ "$case_name" = atc-missing ]; then
  # The system directories stay on PATH (the emulator is a script); a real atc there cannot be hidden.
  if PATH=/usr/bin:/bin command -v atc >/dev/null; then echo "atc is installed in /usr/bin or /bin"; exit 77; fi
  out=$(env -u ASCEND_HOME_PATH PATH=/usr/bin:/bin "${emulator[@]}" "$tool" "$seed" --input-shape x:1,1,4,4 \
          -o "$tmp/m.kom" --om "$tmp/m.om" --board 310B 2>&1)
  code=$?
  echo "$out"
  [ $code -eq 1 ] || fail "exit code $code, expected 1"
  grep -q "ATC (atc) is missing" <<<"$out" || fail "no 'atc is missing' message"
  grep -q "ASCEND_HOME_PATH" <<<"$out" || fail "the message does not say where it looked"
  [ -s "$tmp/m.kom" ] || fail "the .kom was not written"
  echo "ok"
  exit 0
fi

if [ "$case_name" = atc-arguments ]; then
  bin=$(mktemp -d "$tmp/fakeatc.XXXXXX")
  args="$bin/args"
  cat >"$bin/atc" <<FAKE
#!/bin/sh
for a in "\$@"; do echo "\$a"; done >"$args"
for a in "\$@"; do case "\$a" in --output=*) : >"\${a#--output=}.om";; esac; done
exit 0
FAKE
  chmod +x "$bin/atc"
  conf="$tmp/aipp_gray.cfg"
  printf 'aipp_op {\n  aipp_mode: static\n  input_format: YUV400_U8\n}\n' >"$conf"
  out=$(env -u ASCEND_HOME_PATH PATH="$bin:/usr/bin:/bin" "${emulator[@]}" "$tool" "$seed" \
          --input-shape x:-1,1,4,4 --dynamic-batch 1,2,4 --insert-op-conf "$conf" --board 310 \
          -o "$tmp/g.kom" --om "$tmp/g.om" 2>&1)
  code=$?
  echo "$out"
  [ $code -eq 0 ] || fail "exit code $code"
  [ -f "$tmp/g.om" ] || fail "atc's output is not $tmp/g.om"
  for want in "--framework=5" "--model=$seed" "--output=$tmp/g" "--soc_version=Ascend310" \
              "--input_shape=x:-1,1,4,4" "--dynamic_batch_size=1,2,4" "--insert_op_conf=$conf"; do
    grep -qxF -- "$want" "$args" || fail "atc did not get $want (got: $(tr '\n' ' ' <"$args"))"
  done
  # The SoC follows --soc-version, and gears of image size keep ATC's "h,w;h,w" form.
  out=$(env -u ASCEND_HOME_PATH PATH="$bin:/usr/bin:/bin" "${emulator[@]}" "$tool" "$seed" \
          --input-shape x:1,1,-1,-1 --dynamic-image-size "9,7;4,4" --soc-version Ascend310B4 \
          -o "$tmp/h.kom" --om "$tmp/h.om" 2>&1) || fail "second conversion: $out"
  for want in "--soc_version=Ascend310B4" "--dynamic_image_size=9,7;4,4"; do
    grep -qxF -- "$want" "$args" || fail "atc did not get $want (got: $(tr '\n' ' ' <"$args"))"
  done
  # Without a chip (the host profile, KES_BOARD=host) --om is a usage error naming the options.
  out=$(env -u ASCEND_HOME_PATH KES_BACKEND=cpu KES_BOARD=host PATH="$bin:/usr/bin:/bin" "${emulator[@]}" "$tool" "$seed" \
          --input-shape x:1,1,4,4 -o "$tmp/i.kom" --om "$tmp/i.om" 2>&1)
  [ $? -eq 2 ] || fail "--om without a chip: $out"
  grep -q -- "--soc-version" <<<"$out" || fail "no hint: $out"
  echo "ok"
  exit 0
fi
if [ "$case_name" = atc-writes-nothing ]; then
  bin=$(mktemp -d "$tmp/fakeatc.XXXXXX")
  printf '#!/bin/sh\nexit 0\n' >"$bin/atc"
  chmod +x "$bin/atc"
  rm -f "$tmp/b.om"
  out=$(env -u ASCEND_HOME_PATH PATH="$bin:/usr/bin:/bin" "${emulator[@]}" "$tool" "$seed" --input-shape x:1,1,4,4 \
          -o "$tmp/b.kom" --om "$tmp/b.om" --board 310B 2>&1)
  code=$?
  echo "$out"
  [ $code -eq 1 ] || fail "exit code $code, expected 1"
  grep -q "atc exited 0 but wrote no $tmp/b.om" <<<"$out" || fail "no message naming the missing $tmp/b.om"
  grep -q "atc wrote" <<<"$out" && fail "kes-convert says atc wrote a file that is not there"
  # An .om an earlier run left there is no proof either.
  echo "an older model" >"$tmp/b.om"
  out=$(env -u ASCEND_HOME_PATH PATH="$bin:/usr/bin:/bin" "${emulator[@]}" "$tool" "$seed" --input-shape x:1,1,4,4 \
          -o "$tmp/b.kom" --om "$tmp/b.om" --board 310B 2>&1)
  code=$?
  echo "$out"
  [ $code -eq 1 ] || fail "exit code $code with an earlier b.om, expected 1"
  grep -q "wrote no $tmp/b.om (the file there is an earlier one, unchanged)" <<<"$out" || fail "the earlier .om passed"
  echo "ok"
  exit 0
fi
echo "unknown case $case_name"
exit 2
