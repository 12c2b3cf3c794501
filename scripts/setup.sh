#!/usr/bin/env bash
# Installs the Debian packages tracec needs, and nothing when they are present:
# the toolchain and libraries, and every program the tests and scripts run
# (patch, diff, sed, awk, find, sort, python3, ...), so that the README's two
# commands pass on a bare Debian 12 (scripts/fresh-check.sh proves it).
# Usage: scripts/setup.sh [--bench]   (needs root, or sudo, for apt-get)
#   --bench  also the benchmarks' peers and tools (nanopb, valgrind's
#            instruction counts); bench/run passes it.
set -euo pipefail
bench=0
for arg in "$@"; do
  case "$arg" in
    --bench) bench=1 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "setup: unknown argument '$arg' (usage: scripts/setup.sh [--bench])" >&2; exit 2 ;;
  esac
done
pkgs=(protobuf-compiler libprotobuf-dev libprotoc-dev libprotobuf-c-dev
      protobuf-c-compiler flex bison libcriterion-dev python3-protobuf
      zlib1g-dev cmake pkg-config gcc g++ clang make ninja-build
      libclang-rt-14-dev gcc-multilib
      python3 binutils patch diffutils findutils sed grep mawk coreutils)
if [ "$bench" = 1 ]; then
  pkgs+=(nanopb libnanopb-dev valgrind)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
