#!/usr/bin/env bash
# Installs what the soft-RoCE (rxe) guest lab needs and builds its guest initramfs.
# Run as root. Idempotent: a second run installs nothing and rebuilds the initramfs
# only when the kernel or this script changed.
#
#   RXE_LAB_WORK  build dir outside git (default /var/tmp/rdma-bus-lab)
set -euo pipefail

WORK=${RXE_LAB_WORK:-/var/tmp/rdma-bus-lab}
PACKAGES=(qemu-system-x86 linux-image-amd64 busybox-static rdma-core ibverbs-providers
  ibverbs-utils rdmacm-utils perftest libibverbs-dev librdmacm-dev iproute2 cpio kmod gzip)
# Loaded in the initramfs, before the 9p root exists; modprobe orders their dependencies.
INITRAMFS_MODULES=(virtio_pci virtio_net 9pnet_virtio 9p)

say() { printf 'rxe-lab setup: %s\n' "$*"; }
die() { printf 'rxe-lab setup: ERROR: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (it installs Debian packages): sudo $0"
command -v apt-get >/dev/null || die "apt-get not found: this lab needs a Debian host"

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing: ${missing[*]}"
  # Refresh the package lists only when they are absent or the install cannot find a package.
  if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e '^lock$' -e '^partial$' || true)" ]; then
    say "apt-get update"
    apt-get update -q
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    say "install failed; apt-get update and retry"
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
else
  say "packages already installed"
fi

# The newest installed Debian kernel that ships rdma_rxe.
KVER=
for k in $(ls -1 /boot/vmlinuz-*-amd64 2>/dev/null | sed 's|/boot/vmlinuz-||' | sort -V -r); do
  if [ -n "$(find "/lib/modules/$k/kernel/drivers/infiniband/sw/rxe" -name 'rdma_rxe.ko*' 2>/dev/null)" ]; then
    KVER=$k
    break
  fi
done
[ -n "$KVER" ] || die "no /boot/vmlinuz-*-amd64 with an rdma_rxe module; is linux-image-amd64 installed?"
KERNEL=/boot/vmlinuz-$KVER
say "guest kernel $KERNEL"

mkdir -p "$WORK"
INITRD=$WORK/initramfs-$KVER.cpio.gz
stamp="$KVER $(sha256sum "$0" | cut -d' ' -f1)"
if [ -f "$INITRD" ] && [ -f "$WORK/lab.env" ] && grep -qxF "RXE_LAB_STAMP='$stamp'" "$WORK/lab.env"; then
  say "initramfs up to date: $INITRD"
else
  say "building initramfs $INITRD"
  tmp=$(mktemp -d "$WORK/initramfs.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp"/{bin,dev,proc,sys,newroot,lib/modules}
  cp /bin/busybox "$tmp/bin/busybox"
  for applet in sh mount umount mkdir insmod switch_root cat sleep poweroff echo; do
    ln -s busybox "$tmp/bin/$applet"
  done
  : > "$tmp/modules.order"
  for m in "${INITRAMFS_MODULES[@]}"; do
    modprobe -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
  done | awk '!seen[$0]++' | while read -r ko; do
    name=$(basename "$ko")
    case "$name" in
      *.ko.xz) xz -dc "$ko" > "$tmp/lib/modules/${name%.xz}"; name=${name%.xz} ;;
      *.ko.zst) zstd -qdc "$ko" > "$tmp/lib/modules/${name%.zst}"; name=${name%.zst} ;;
      *) cp "$ko" "$tmp/lib/modules/$name" ;;
    esac
    echo "$name" >> "$tmp/modules.order"
  done
  say "initramfs modules: $(tr '\n' ' ' < "$tmp/modules.order")"
  cat > "$tmp/init" <<'EOF'
#!/bin/sh
# Stage 1 (initramfs): load virtio + 9p, mount the host's / read-only, hand over to
# the lab's stage-2 init (lab/guest-init.sh, path given as lab_init= on the cmdline).
fail() { echo "rxe-lab initramfs: $*"; sleep 1; poweroff -f; }
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules.order); do insmod "/lib/modules/$m" || fail "insmod $m failed"; done
lab_init=
for arg in $(cat /proc/cmdline); do
  case "$arg" in lab_init=*) lab_init=${arg#lab_init=} ;; esac
done
[ -n "$lab_init" ] || fail "no lab_init= on the kernel command line"
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /newroot \
  || fail "cannot mount the host root over 9p"
umount /proc /sys /dev
exec switch_root /newroot /bin/sh "$lab_init"
EOF
  chmod +x "$tmp/init"
  (cd "$tmp" && find . | cpio -o -H newc --quiet -R 0:0) | gzip -1 > "$INITRD.part"
  mv "$INITRD.part" "$INITRD"
  # Under TCG, decompressing the xz bzImage and its real-mode setup cost ~8 s per boot.
  # QEMU boots the uncompressed ELF vmlinux directly through its PVH entry instead.
  BOOT_KERNEL=$KERNEL
  if grep -q '^CONFIG_PVH=y' "/boot/config-$KVER" 2>/dev/null; then
    vmlinux=$WORK/vmlinux-$KVER
    # Compressed payload magic (without NUL bytes, which bash strings cannot hold) and its tool.
    for magic_tool in 'fd377a585a:xz' '28b52ffd:zstd' '1f8b08:gzip'; do
      magic=$(printf '%b' "$(echo "${magic_tool%:*}" | sed 's/../\\x&/g')")
      off=$(LC_ALL=C grep -abo "$magic" "$KERNEL" | head -1 | cut -d: -f1 || true)
      [ -n "$off" ] || continue
      tail -c +$((off + 1)) "$KERNEL" | "${magic_tool#*:}" -dc > "$vmlinux.part" 2>/dev/null || true
      if [ "$(head -c 4 "$vmlinux.part" | od -An -c | tr -d ' ')" = '177ELF' ]; then
        mv "$vmlinux.part" "$vmlinux"
        BOOT_KERNEL=$vmlinux
        break
      fi
    done
    rm -f "$vmlinux.part"
  fi
  say "boot image: $BOOT_KERNEL"
  cat > "$WORK/lab.env" <<EOF
RXE_LAB_KVER='$KVER'
RXE_LAB_KERNEL='$BOOT_KERNEL'
RXE_LAB_INITRD='$INITRD'
RXE_LAB_STAMP='$stamp'
EOF
fi

modprobe -S "$KVER" --show-depends rdma_rxe >/dev/null || die "rdma_rxe not resolvable for $KVER"
say "done: work dir $WORK (guest kernel $KVER)"
