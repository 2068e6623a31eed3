#!/usr/bin/env bash
# Installs every Debian package dpc needs to build and test. Idempotent:
# silent when everything is present, one `apt-get update` otherwise.
set -euo pipefail

packages=(
  # Build.
  build-essential cmake ninja-build
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libgtest-dev zlib1g-dev
  # Importer and runtime.
  libonnx-dev libprotobuf-dev protobuf-compiler
  libgloo-dev libopenblas-dev nlohmann-json3-dev coinor-libcbc-dev
  libdnnl-dev
  # Python side: exporters, references and pytest. libopenblas0-openmp
  # makes Debian's torch multiply matrices at full speed.
  python3-torch python3-torchvision python3-onnx libopenblas0-openmp
  python3-pytest python3-numpy
  # Memcheck over dpc-opt (test_memory_errors.py).
  valgrind
  # Real ONNX node tests; npm for third-party models and onnxruntime-node.
  libonnx-testdata nodejs npm
)
# `install-deps.sh sanitizers`: clang, libFuzzer and the sanitizer runtimes
# too, for `make fuzz` and `make test-sanitize`.
if [[ "${1:-}" == sanitizers ]]; then
  packages+=(clang-22 libclang-rt-22-dev)
fi

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

# Node.js may come from outside Debian's packages (with its own npm).
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for package in "${missing[@]}"; do
    [[ "$package" == nodejs || "$package" == npm ]] || filtered+=("$package")
  done
  missing=("${filtered[@]}")
fi

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${missing[@]}" >/dev/null
