#!/usr/bin/env bash
# Installs qmatmul's build and test dependencies from Debian 12 packages.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config \
  libonnx-dev libprotobuf-dev protobuf-compiler \
  libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev \
  libdnnl-dev ocl-icd-opencl-dev >/dev/null
