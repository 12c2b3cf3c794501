"""Reads a CSV file strictly as UTF-8 with python's csv module and prints each
row as repr(list) on its own line (tests/decode/test_args.c).  Fails (exit 1)
if the file is not valid UTF-8, holds a NUL, or a row has other than 6 cells."""
import csv
import sys

with open(sys.argv[1], "rb") as f:
    raw = f.read()
if b"\0" in raw:
    sys.exit("NUL byte in the CSV")
text = raw.decode("utf-8")  # raises on invalid UTF-8
for row in csv.reader(text.splitlines(keepends=True), strict=True):
    if len(row) != 6:
        sys.exit("row with %d cells: %r" % (len(row), row))
    print(repr(row))
