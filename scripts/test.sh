#!/usr/bin/env bash
# Sets up, builds and runs every test of tracec:
#   1. the whole suite (Criterion under ctest) in a normal build;
#   2. the whole suite again under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. the buffer tests (ctest label "tsan") under ThreadSanitizer;
#   4. each libFuzzer target for a bounded time (clang only).
# Usage: scripts/test.sh            (from anywhere; installs missing packages first)
# Env:   TRACEC_FUZZ_SECONDS=N (default 20; 0 skips fuzzing), JOBS=N (default nproc)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/scripts/setup.sh"

jobs=${JOBS:-$(nproc)}
fuzz_seconds=${TRACEC_FUZZ_SECONDS:-20}
failed=()

step() { printf '\n==== %s ====\n' "$*"; }

configure_build() { # dir, extra cmake args...
  local dir=$1; shift
  mkdir -p "$dir"
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >"$dir/configure.log" 2>&1 \
    || { cat "$dir/configure.log"; return 1; }
  cmake --build "$dir" -j"$jobs" >"$dir/build.log" 2>&1 || { tail -n 60 "$dir/build.log"; return 1; }
}

step "build and test (normal)"
if configure_build "$root/build-test"; then
  ctest --test-dir "$root/build-test" -j"$jobs" --output-on-failure || failed+=("normal")
else
  failed+=("normal build")
fi

step "build and test (AddressSanitizer + UndefinedBehaviorSanitizer)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if configure_build "$root/build-asan" -DTRACEC_SANITIZE=address,undefined; then
  ctest --test-dir "$root/build-asan" -j"$jobs" --output-on-failure || failed+=("asan")
else
  failed+=("asan build")
fi

step "buffer tests (ThreadSanitizer)"
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
if configure_build "$root/build-tsan" -DTRACEC_SANITIZE=thread; then
  ctest --test-dir "$root/build-tsan" -L tsan -LE fork -j"$jobs" --output-on-failure --no-tests=ignore \
    || failed+=("tsan")
else
  failed+=("tsan build")
fi

if [ "$fuzz_seconds" != 0 ] && command -v clang >/dev/null; then
  step "fuzz targets (${fuzz_seconds}s each)"
  if CC=clang CXX=clang++ configure_build "$root/build-fuzz" -DTRACEC_BUILD_FUZZ=ON -DTRACEC_BUILD_TESTS=OFF \
       -DTRACEC_SANITIZE=address,undefined; then
    found=0
    while IFS= read -r fuzzer; do
      found=1
      name=$(basename "$fuzzer")
      corpus="$root/fuzz/${name#fuzz_}/corpus"
      work=$(mktemp -d)
      echo "-- $name (seed corpus: $corpus)"
      if ! "$fuzzer" -max_total_time="$fuzz_seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
           -print_final_stats=1 "$work" "$corpus" >"$work.log" 2>&1; then
        tail -n 40 "$work.log"; failed+=("$name")
      else
        grep -E 'stat::number_of_executed_units|Done' "$work.log" | tail -n 2 || true
      fi
      rm -rf "$work" "$work.log"
    done < <(find "$root/build-fuzz/fuzz" -maxdepth 2 -type f -name 'fuzz_*' -perm -u+x 2>/dev/null | sort)
    [ "$found" = 1 ] || echo "(no fuzz targets built)"
  else
    failed+=("fuzz build")
  fi
fi

echo
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "All test stages passed."
