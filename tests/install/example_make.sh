#!/usr/bin/env bash
# example_make.sh PREFIX SOURCE_DIR SANITIZE_FLAGS - examples/make (protoc and
# pkg-config, no CMake) against the installed tree, from a clean directory;
# and pkg-config --static giving everything the text tools need.
set -euo pipefail
P=$1 SRC=$2 SAN=${3:-}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export PKG_CONFIG_PATH=$P/lib/pkgconfig
cd "$W"
make -f "$SRC/examples/make/Makefile" CFLAGS="-O2 $SAN" LDFLAGS="$SAN" >make.log 2>&1 || { cat make.log; exit 1; }
./example out.pftrace >/dev/null
"$P/bin/tracec" decode out.pftrace | grep -F '[my_app.MyEvent.custom_counter]: -42'
make -f "$SRC/examples/make/Makefile" CFLAGS="-O2 $SAN" LDFLAGS="$SAN" | grep -q "up to date" \
  || { echo "a second make rebuilt something"; exit 1; }

echo "static: $(pkg-config --static --libs tracec_decode)"
cat >t.c <<'PROG'
#include <string.h>
#include "tracec/textproto.h"
int main(void) {
    tracec_error err;
    tracec_pool *pool = tracec_pool_new();
    if (tracec_pool_add_builtin_schema(pool, &err) != TRACEC_STATUS_SUCCESS) return 1;
    const char *text = "packet { timestamp: 7 }";
    tracec_text_options o = TRACEC_TEXT_OPTIONS_INIT;
    tracec_bytes bin = TRACEC_BYTES_INIT;
    if (tracec_text_encode(pool, "perfetto.protos.Trace", text, strlen(text), &o, &bin, &err)) return 2;
    int ok = bin.size == 4;
    tracec_bytes_free(&bin);
    tracec_pool_free(pool);
    return ok ? 0 : 3;
}
PROG
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror $SAN $(pkg-config --cflags tracec_decode) t.c \
  $(pkg-config --static --libs tracec_decode) -o t
./t && echo "pkg-config --static tracec_decode links and runs"
