#!/usr/bin/env bash
# Proves the README's set-up on a bare Debian 12: builds a minimal bookworm
# chroot with debootstrap (--variant=minbase), clones this repository into it
# and runs the README's two commands there as root:
#   ./scripts/demo.sh && ./scripts/test.sh
# Nothing is installed in the chroot beforehand: the scripts must install
# what they need.  Slow (10-30 min); not part of CI.
#
# Usage: scripts/fresh-check.sh [DIR]      (as root; DIR default /var/tmp/tracec-fresh,
#                                           emptied first)
# Env:   FRESH_REF=<git ref>   commit to check (default HEAD of this checkout;
#                              uncommitted changes are not part of a clone)
#        MIRROR=<url>          Debian mirror (default: the first .../debian URI of
#                              apt's configured sources, else deb.debian.org)
#        JOBS, TRACEC_FUZZ_SECONDS are passed to scripts/test.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-/var/tmp/tracec-fresh}
ref=${FRESH_REF:-HEAD}

if [ "$(id -u)" -ne 0 ]; then
  echo "fresh-check: needs root (debootstrap, chroot, mount)" >&2
  exit 2
fi

say() { printf '\n==== fresh-check: %s ====\n' "$*"; }

mounted_under() { # prints the mount points at or below $1
  awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/mounts
}

cleanup_mounts() {
  local m
  for m in $(mounted_under "$dir" | sort -r); do umount "$m" || umount -l "$m" || true; done
}
trap cleanup_mounts EXIT

if [ -z "${MIRROR:-}" ]; then
  MIRROR=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    grep -hoE '(^URIs:|^deb( \[[^]]*\])?) +https?://[^ ]+' | grep -oE 'https?://[^ ]+' |
    grep -E '/debian/?$' | head -n 1 || true)
  MIRROR=${MIRROR:-http://deb.debian.org/debian}
fi
sha=$(git -C "$root" rev-parse --verify "$ref^{commit}")

if ! command -v debootstrap >/dev/null; then
  say "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

if [ -e "$dir" ]; then
  cleanup_mounts
  if [ -n "$(mounted_under "$dir")" ]; then
    echo "fresh-check: $dir still has mounts; not removing it" >&2
    exit 2
  fi
  rm -rf "$dir"
fi

say "debootstrap --variant=minbase bookworm $dir $MIRROR"
debootstrap --variant=minbase bookworm "$dir" "$MIRROR" >"$dir.debootstrap.log" 2>&1 ||
  { tail -n 40 "$dir.debootstrap.log"; exit 1; }

cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
mount -t proc proc "$dir/proc"
mount -t sysfs sysfs "$dir/sys"
mkdir -p "$dir/dev/pts" "$dir/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$dir/dev/pts"
mount -t tmpfs -o mode=1777 tmpfs "$dir/dev/shm"
for n in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
  IFS=: read -r name major minor <<<"$n"
  [ -e "$dir/dev/$name" ] || mknod -m 666 "$dir/dev/$name" c "$major" "$minor"
done

say "cloning $root at $sha into $dir/root/tracec"
git clone -q --no-hardlinks "$root" "$dir/root/tracec"
git -C "$dir/root/tracec" checkout -q --detach "$sha"

say "running the README's two commands in the chroot"
env_args=(HOME=/root TERM=dumb LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
[ -n "${JOBS:-}" ] && env_args+=("JOBS=$JOBS")
[ -n "${TRACEC_FUZZ_SECONDS:-}" ] && env_args+=("TRACEC_FUZZ_SECONDS=$TRACEC_FUZZ_SECONDS")
rc=0
chroot "$dir" /usr/bin/env -i "${env_args[@]}" /bin/bash -c \
  'cd /root/tracec && ./scripts/demo.sh && ./scripts/test.sh' || rc=$?
if [ "$rc" -eq 0 ]; then
  say "PASSED: demo.sh and test.sh on a fresh Debian 12 ($sha)"
else
  say "FAILED (exit $rc) on a fresh Debian 12 ($sha)"
fi
exit "$rc"
