#!/usr/bin/env bash
# Fuzzes every reader of user files with libFuzzer (docs/fuzzing.md).
#
#   scripts/fuzz.sh [SECONDS]   # default 1800, shared by the four targets
#
# Builds the targets with clang, ASan and UBSan in build-fuzz/, seeds each
# corpus (fuzz-corpus/TARGET) from the bundled models, the ONNX node tests,
# the lit tests, the tests' cluster files and the regression inputs, runs each
# target for its share of the time, and prints per target the executions,
# coverage and crashes. Crashes, hangs and out-of-memory inputs are kept in
# fuzz-corpus/crashes/TARGET; it exits non-zero when there are any. A
# crash fixed becomes a regression input in test/Fuzz/Inputs/TARGET.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-1800}
build="$root/build-fuzz"
corpus="$root/fuzz-corpus"
targets=(onnx-import ir-train cluster-file npy-files)
python=${PYTHON:-/usr/bin/python3}

"$root/scripts/install-deps.sh" sanitizers
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_C_COMPILER=clang-22 \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit -DDPC_FUZZ=ON >/dev/null
fi
ninja -C "$build" "${targets[@]/#/dpc-fuzz-}"

# Seeds: each target's regression inputs and real files of its kind.
for target in "${targets[@]}"; do
  mkdir -p "$corpus/$target" "$corpus/crashes/$target"
  cp -n "$root/test/Fuzz/Inputs/$target"/* "$corpus/$target/"
done
if [ ! -f "$corpus/.seeded" ]; then
  # ONNX: a sample of the node tests, and the bundled models.
  find /usr/share/libonnx-testdata/data/node -name model.onnx | sort |
    awk 'NR % 8 == 0' | while read -r model; do
      cp "$model" "$corpus/onnx-import/$(basename "$(dirname "$model")").onnx"
    done
  for name in mlp transformer gpt; do
    PYTHONPATH="$root/python" "$python" -c \
      "from dpc import models; models.export('$name', '$corpus/tmp')" >/dev/null
    cp "$corpus/tmp/$name.onnx" "$corpus/onnx-import/"
    rm -rf "$corpus/tmp"
  done
  # IR: every lit test's input, one file per `// -----` split.
  find "$root/test" -name '*.mlir' | sort | while read -r test; do
    awk -v out="$corpus/ir-train/$(basename "$test" .mlir)" \
      '/^\/\/ -----/ { n++; next } { print > (out "-" n+0 ".mlir") }' "$test"
  done
  cp "$root/examples"/*.mlir "$corpus/ir-train/"
  # Cluster files: those of the tests.
  find "$root/test" "$root/bench" -name '*.json' -size -64k |
    while read -r file; do cp "$file" "$corpus/cluster-file/"; done
  # .npy and .npz files of every dtype dpc-run reads.
  PYTHONPATH="$root/python" "$python" - "$corpus/npy-files" <<'PY'
import sys, numpy as np
out = sys.argv[1]
for i, a in enumerate([np.zeros((2, 3), np.float32), np.arange(5, dtype=np.int64),
                       np.array(1.5, np.float64), np.ones((1, 0, 2), np.float16),
                       np.array([True, False])]):
    np.save("%s/seed%d.npy" % (out, i), a)
np.savez("%s/seed.npz" % out, a=np.ones(3, np.float32), b=np.arange(4))
np.savez_compressed("%s/seed-compressed.npz" % out, a=np.ones(3, np.float32))
PY
  touch "$corpus/.seeded"
fi

share=$((seconds / ${#targets[@]}))
failures=0
for target in "${targets[@]}"; do
  log="$corpus/$target.log"
  # Inputs that crashed an earlier run and no longer do were fixed.
  find "$corpus/crashes/$target" -type f | while read -r input; do
    if "$build/bin/dpc-fuzz-$target" "$input" >/dev/null 2>&1; then
      rm "$input"
    fi
  done
  # Fork mode goes on after a crash, so that one run finds them all; hangs
  # over 60 s and inputs needing over 4 GiB count as crashes.
  start=$SECONDS
  "$build/bin/dpc-fuzz-$target" "$corpus/$target" -fork=1 \
    -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$share" -timeout=60 -rss_limit_mb=4096 -max_len=65536 \
    -artifact_prefix="$corpus/crashes/$target/" >"$log" 2>&1 || true
  crashes=$(find "$corpus/crashes/$target" -type f | wc -l)
  # The last status line: executions, coverage, corpus.
  stats=$(grep -E '^#[0-9]+: cov' "$log" | tail -1 |
    sed -E 's/^#([0-9]+): cov: ([0-9]+) ft: ([0-9]+) corp: ([0-9]+).*/\1 executions, coverage \2 edges (\3 features), corpus \4/')
  echo "fuzz $target: $((SECONDS - start)) s, ${stats:-no status line}; crashes $crashes"
  failures=$((failures + crashes))
done
if ((failures > 0)); then
  echo "fuzz: $failures crashing inputs in $corpus/crashes (logs: $corpus/*.log)"
  exit 1
fi
