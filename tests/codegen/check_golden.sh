#!/usr/bin/env bash
# codegen_golden: regenerates the golden files of examples/ and test_extensions/
# into a temporary directory and fails, printing the diff and the command that
# updates them, when the checked-in ones differ.
#   check_golden.sh SOURCE_DIR PLUGIN
set -uo pipefail
src=$1 plugin=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$src/scripts/regen-golden.sh" --plugin "$plugin" --out "$tmp" >/dev/null || exit 1
status=0
for d in examples/golden test_extensions/golden tests/plugin/golden; do
  if ! diff -ru "$src/$d" "$tmp/$d"; then
    status=1
  fi
done
if [ $status -ne 0 ]; then
  echo
  echo "FAIL: generated code drifted from the golden files (diff above: checked-in vs regenerated)."
  echo "If the change is intended, run:  scripts/regen-golden.sh   and commit the result."
  echo "0 passed, 1 failed"
  exit 1
fi
echo "golden files of examples/ and test_extensions/ match the generator"
echo "1 passed, 0 failed"
