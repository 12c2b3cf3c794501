#!/usr/bin/env bash
# Sets up, builds and runs every test of tracec, every build with
# TRACEC_WERROR=ON (warnings are errors here, not for users):
#   1. the whole suite (Criterion under ctest) in a GCC Release build of
#      static libraries, with the package tests (label package: a second
#      tracec build with TRACEC_FIXED_NESTED_LENGTHS=ON);
#   2. the whole suite again in a clang Release build of shared libraries
#      (BUILD_SHARED_LIBS=ON: the install tests run against a shared install)
#      under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. the threaded tests (ctest label "tsan") under ThreadSanitizer;
#   4. each libFuzzer target for a bounded time (clang only), JOBS at a time.
# Each stage's build starts in the background at the lowest CPU priority while
# the stage before it runs its tests (bg_build), so the stage times overlap.
# So both of the builds packagers make (GCC and clang, Release, static and
# shared) pass every test, one of them under the sanitizers.
# A test that needs Perfetto's trace processor (CMake cache variable
# TRACEC_TRACE_PROCESSOR) is a ctest skip without it; with CI=true a skipped
# test fails the run.  The environment variable TRACEC_TRACE_PROCESSOR sets its
# default path.
# Usage: scripts/test.sh            (from anywhere; installs missing packages first)
# Env:   TRACEC_FUZZ_SECONDS=N (default 10, after each seed corpus; 0 skips fuzzing), JOBS=N (default nproc), CI=true
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/scripts/setup.sh"

jobs=${JOBS:-$(nproc)}
fuzz_seconds=${TRACEC_FUZZ_SECONDS:-10}
failed=()

# cpu_now VAR: VAR = the CPU seconds (user + sys) of the finished children of
# this (sub)shell so far (`times` in it, not in a command substitution).  Called
# at the end of a subshell function, it is what that function ran.
cpu_now() {
  local f
  f=$(mktemp)
  times >"$f"
  printf -v "$1" '%s' "$(awk 'NR == 2 { s = 0
    for (i = 1; i <= NF; i++) { split($i, ms, "m"); sub("s", "", ms[2]); s += ms[1] * 60 + ms[2] }
    printf "%d", s }' "$f")"
  rm -f "$f"
}
stage_start=$SECONDS
stage_name=""
timings=()
step() {
  if [ -n "$stage_name" ]; then
    timings+=("$(printf '%5ds  %s' $((SECONDS - stage_start)) "$stage_name")")
  fi
  stage_name=$*
  stage_start=$SECONDS
  printf '\n==== %s ====\n' "$*"
}

# configure_build DIR TYPE [cmake args...]: configures and builds DIR; with
# BUILD_TARGETS set (a command printing target names, run after the
# configure), only those targets and what they need.  Prints the build's time
# and CPU (it runs in a subshell of its own).
configure_build() (
  local dir=$1 type=$2 start=$SECONDS targets=() generator=(); shift 2
  # A new build directory gets Ninja (scripts/setup.sh installs it): it spends
  # far less CPU than make's recursive Makefiles on the same compiles.  One
  # configured before keeps its generator.
  if [ ! -f "$dir/CMakeCache.txt" ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
  mkdir -p "$dir"
  cmake -S "$root" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE="$type" -DTRACEC_WERROR=ON "$@" >"$dir/configure.log" 2>&1 \
    || { cat "$dir/configure.log"; return 1; }
  if [ -n "${BUILD_TARGETS:-}" ]; then
    mapfile -t targets < <(eval "$BUILD_TARGETS")
    [ ${#targets[@]} -gt 0 ] || { echo "no targets from: $BUILD_TARGETS"; return 1; }
    targets=(--target "${targets[@]}")
  fi
  cmake --build "$dir" -j"$jobs" "${targets[@]}" >"$dir/build.log" 2>&1 || { tail -n 60 "$dir/build.log"; return 1; }
  local cpu
  cpu_now cpu
  echo "-- configured and built $(basename "$dir") in $((SECONDS - start))s (CPU user + sys: ${cpu}s)"
)

# ctest_cpu ctest-args...: ctest, then its CPU (user + sys, the tests included).
ctest_cpu() (
  local st=0 cpu
  ctest "$@" || st=$?
  cpu_now cpu
  echo "-- ctest CPU user + sys: ${cpu}s"
  exit $st
)

# The executables of the tests ctest selects with ARGS (ctest_targets DIR ARGS...), one a
# line: each test is named after its executable, or <executable>_memfd (tests/buffer's
# runs over memfd buffers), or <executable>_record (tests/te's runs over the recorder's
# session).  One that is not a target fails the build, so none is missed.
ctest_targets() {
  local dir=$1; shift
  ctest --test-dir "$dir" "$@" -N | sed -n 's/^ *Test *#[0-9]*: *//p' | sed 's/_memfd$//; s/_record$//' | sort -u
}

# run_ctest NAME ctest-args...: a failure fails NAME; a skipped test (no
# trace processor) is listed, and fails NAME when CI=true.
run_ctest() {
  local name=$1; shift
  local log
  log=$(mktemp)
  ctest_cpu "$@" 2>&1 | tee "$log" || failed+=("$name")
  if grep -q '(Skipped)' "$log"; then
    echo "-- $name: skipped tests: $(grep '(Skipped)' "$log" | sed 's/^[[:space:]]*[0-9]* - //; s/ (Skipped)//' | tr '\n' ' ')"
    if [ "${CI:-}" = true ]; then failed+=("$name (skipped tests, CI=true)"); fi
  fi
  rm -f "$log"
}

# bg_build NAME [VAR=value...] -- configure_build args...: configure_build in the
# background at the lowest CPU priority (nice 19), into a log: the next stage builds
# on the CPU the running stage's tests leave idle while they wait (on processes,
# sockets, the trace processor), never taking it from them.  bg_wait NAME prints
# the log and returns the build's status.
declare -A bg_pid bg_log
bg_build() {
  local name=$1; shift
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  bg_log[$name]=$(mktemp)
  (
    renice -n 19 -p "$BASHPID" >/dev/null 2>&1 || true
    for v in "${vars[@]}"; do export "$v"; done
    configure_build "$@"
  ) >"${bg_log[$name]}" 2>&1 &
  bg_pid[$name]=$!
}
bg_wait() {
  local name=$1 st=0
  wait "${bg_pid[$name]}" || st=$?
  cat "${bg_log[$name]}"
  rm -f "${bg_log[$name]}"
  return $st
}

# The sanitizers' options hold for the builds too (the plugin built with them generates code there).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
# Release code with line tables, so that a sanitizer's report names lines.
if command -v clang >/dev/null; then
  san_name="clang, Release, shared libraries, AddressSanitizer + UndefinedBehaviorSanitizer"
  san_cc=clang san_cxx=clang++ san_libs=ON san_g=-gline-tables-only
else
  san_name="GCC, Release, AddressSanitizer + UndefinedBehaviorSanitizer"
  san_cc=gcc san_cxx=g++ san_libs=OFF san_g=-g1
fi
# Only the test folders that have tsan-labelled suites are configured, and only the
# executables of the tests the TSan stage runs are built (the others would not run there).
tsan_select=(-L tsan -LE fork)
fuzz=0
if [ "$fuzz_seconds" != 0 ] && command -v clang >/dev/null; then fuzz=1; fi

step "build and test (GCC, Release, static libraries)"
gcc_built=0
if CC=gcc CXX=g++ configure_build "$root/build-test" Release; then gcc_built=1; fi
bg_build asan CC=$san_cc CXX=$san_cxx -- "$root/build-asan" Release -DBUILD_SHARED_LIBS=$san_libs \
  -DTRACEC_SANITIZE=address,undefined -DCMAKE_C_FLAGS=$san_g -DCMAKE_CXX_FLAGS=$san_g
if [ $gcc_built = 1 ]; then
  run_ctest "gcc" --test-dir "$root/build-test" -j"$jobs" --output-on-failure
else
  failed+=("gcc build")
fi

step "build and test ($san_name)"
asan_built=0
if bg_wait asan; then asan_built=1; fi
bg_build tsan 'BUILD_TARGETS=ctest_targets "$root/build-tsan" "${tsan_select[@]}"' -- \
  "$root/build-tsan" RelWithDebInfo -DTRACEC_SANITIZE=thread "-DTRACEC_TEST_ONLY=core;buffer;te;record"
if [ $fuzz = 1 ]; then
  # Only the fuzz targets (tracec_fuzzers) and the libraries they link are built.
  bg_build fuzz CC=clang CXX=clang++ BUILD_TARGETS='echo tracec_fuzzers' -- "$root/build-fuzz" RelWithDebInfo \
    -DTRACEC_BUILD_FUZZ=ON -DTRACEC_BUILD_TESTS=OFF -DTRACEC_BUILD_EXAMPLES=OFF -DTRACEC_SANITIZE=address,undefined
fi
if [ $asan_built = 1 ]; then
  run_ctest "asan" --test-dir "$root/build-asan" -LE package -j"$jobs" --output-on-failure
else
  failed+=("asan build")
fi

step "buffer tests (ThreadSanitizer)"
if bg_wait tsan; then
  run_ctest "tsan" --test-dir "$root/build-tsan" "${tsan_select[@]}" -j"$jobs" --output-on-failure --no-tests=ignore
else
  failed+=("tsan build")
fi

if [ $fuzz = 1 ]; then
  step "fuzz targets (${fuzz_seconds}s each)"
  if bg_wait fuzz; then
    # fuzz_one NAME BINARY: runs one target; its log is printed when it is done.
    fuzz_one() {
      local name=$1 fuzzer=$2 corpus="$root/fuzz/${1#fuzz_}/corpus" work
      work=$(mktemp -d)
      if "$fuzzer" -max_total_time="$fuzz_seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
           -print_final_stats=1 "$work" "$corpus" >"$work.log" 2>&1; then
        echo "-- $name (seed corpus: $corpus)"
        grep -E 'stat::number_of_executed_units|Done' "$work.log" | tail -n 2 || true
        rm -rf "$work" "$work.log"
      else
        echo "-- $name (seed corpus: $corpus): FAILED"
        tail -n 40 "$work.log"; rm -rf "$work" "$work.log"; return 1
      fi
    }
    found=0 pids=() names=()
    while IFS= read -r fuzzer; do
      found=1
      fuzz_one "$(basename "$fuzzer")" "$fuzzer" &
      pids+=($!) names+=("$(basename "$fuzzer")")
      if [ ${#pids[@]} -ge "$jobs" ]; then
        wait "${pids[0]}" || failed+=("${names[0]}")
        pids=("${pids[@]:1}") names=("${names[@]:1}")
      fi
    done < <(find "$root/build-fuzz/fuzz" -maxdepth 2 -type f -name 'fuzz_*' -perm -u+x 2>/dev/null | sort)
    for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed+=("${names[$i]}"); done
    [ "$found" = 1 ] || echo "(no fuzz targets built)"
  else
    failed+=("fuzz build")
  fi
fi

step "done"
echo "stage times:"
printf '%s\n' "${timings[@]}"
echo
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "All test stages passed."
