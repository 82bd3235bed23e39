#!/bin/sh
# Fetch the pieces for issue 26's kernel mode from Debian's registry only, into a cache dir.
# Nothing here is committed; run as root (apt-get install).
set -eu
C=${IOSCHED_KERNEL_CACHE:-$HOME/.cache/iosched-kernel}
KVER=${KVER:-6.1.0-50-amd64}
mkdir -p "$C/debs" "$C/x"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends qemu-system-x86 kmod cpio >/dev/null
cd "$C/debs"
[ -n "$(ls linux-image-${KVER}_*.deb 2>/dev/null)" ] || apt-get download "linux-image-$KVER" busybox-static
for d in linux-image-${KVER}_*.deb busybox-static_*.deb; do
  n=${d%%_*}; [ -d "$C/x/$n" ] && continue
  mkdir -p "$C/x/$n"; dpkg-deb -x "$d" "$C/x/$n"
done
# The package's postinst would run depmod; the unpacked tree has no modules.dep until we do.
depmod -b "$C/x/linux-image-$KVER" "$KVER"
echo "$C"
