#!/usr/bin/env bash
# Installs the Debian packages ptdsim builds with, only when one is missing.
set -euo pipefail
pkgs=(cmake g++ make libyaml-cpp-dev libfmt-dev libeigen3-dev libboost-graph-dev catch2
      libcli11-dev nlohmann-json3-dev libbenchmark-dev libopenmpi-dev libtbb-dev python3 python3-yaml
      chromium)  # python3-yaml: convert.py's byte-for-byte test; chromium: the HTML pages' rendering test
missing=()
pkgs+=(clang libclang-rt-14-dev)  # clang and its runtime: the libFuzzer targets (tests/fuzz)
pkgs+=(python3-dev pybind11-dev python3-pybind11 python3-pytest)  # the Python module and its tests (docs/python.md)
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi
