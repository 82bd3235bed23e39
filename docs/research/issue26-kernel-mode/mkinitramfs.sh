#!/bin/sh
# Build a tiny initramfs: static busybox, the Debian kernel's modules for ata_piix/ahci/sd_mod/
# kyber/bfq (insmod order from `modprobe --show-depends`), and init (below).
set -eu
C=${IOSCHED_KERNEL_CACHE:-$HOME/.cache/iosched-kernel}
KVER=${KVER:-6.1.0-50-amd64}
R=$C/x/linux-image-$KVER
OUT=${1:-$C/initramfs.cpio.gz}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/bin" "$T/dev" "$T/proc" "$T/sys" "$T/lib/modules"
cp "$C/x/busybox-static/bin/busybox" "$T/bin/busybox"
for m in ata_piix ahci sd_mod kyber-iosched bfq; do
  modprobe -d "$R" -S "$KVER" --show-depends "$m"
done | awk '$1=="insmod" && !seen[$2]++ {print $2}' > "$T/order.full"
: > "$T/lib/modules/order"
while read -r p; do b=$(basename "$p"); cp "$p" "$T/lib/modules/$b"; echo "$b" >> "$T/lib/modules/order"; done < "$T/order.full"
rm "$T/order.full"
if [ "${WITH_FIO:-0}" = 1 ]; then
  # Debian's fio is dynamic (no static build in the archive): install it on the host (same
  # release as the guest userland here: bookworm) and copy it with every library ldd names.
  F=$(command -v fio) || { echo "WITH_FIO=1: apt-get install fio first" >&2; exit 1; }
  mkdir -p "$T/usr/bin"; cp "$F" "$T/usr/bin/fio"
  ldd "$F" | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | while read -r l; do
    mkdir -p "$T$(dirname "$l")"; cp -L "$l" "$T$l"; done
  [ -e "$T/lib64/ld-linux-x86-64.so.2" ] || { mkdir -p "$T/lib64"; cp -L /lib64/ld-linux-x86-64.so.2 "$T/lib64/"; }
fi
cp "$(dirname "$0")/init" "$T/init"; chmod 755 "$T/init"
(cd "$T" && find . | cpio -o -H newc --quiet | gzip -1) > "$OUT"
echo "$OUT"
