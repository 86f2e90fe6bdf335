#!/usr/bin/env bash
# Installs the tools the soft-RoCE (rxe) guest lab needs, fetches the guest kernel and
# builds the guest initramfs. Run as root.
#
# The guest kernel is Debian's (it has rdma_rxe as a module) but it is never installed on
# the host: the versioned image package that linux-image-amd64 depends on is downloaded
# with `apt-get download` and unpacked with `dpkg -x` into $WORK/kernel/<ver>/ (boot/ and
# lib/modules/<ver>/; depmod -b builds its modules.dep). The host's own kernel, /boot and
# /lib/modules are left alone.
#
# Idempotent: a second run installs and downloads nothing (it reuses the unpacked kernel,
# offline too) and rebuilds the initramfs only when the kernel or this script changed.
#
#   RXE_LAB_WORK  build dir outside git (default /var/tmp/rdma-bus-lab)
set -euo pipefail

WORK=${RXE_LAB_WORK:-/var/tmp/rdma-bus-lab}
# Not rdma-core: its udev rules and services are for the host's own devices (the host has none), and it depends on
# udev, which on a host without it pulls in a systemd upgrade. The guests need only the verbs libraries, the rxe
# provider and the tools below; `rdma link` is iproute2's.
PACKAGES=(qemu-system-x86 busybox-static ibverbs-providers ibverbs-utils
  rdmacm-utils perftest libibverbs-dev librdmacm-dev iproute2 cpio kmod gzip xz-utils)
# The metapackage whose dependency names the current versioned Debian kernel image.
IMAGE_META=linux-image-amd64
# Loaded in the initramfs, before the 9p root exists; modprobe orders their dependencies.
INITRAMFS_MODULES=(virtio_pci virtio_net 9pnet_virtio 9p)

say() { printf 'rxe-lab setup: %s\n' "$*"; }
die() { printf 'rxe-lab setup: ERROR: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (it installs Debian packages): sudo $0"
command -v apt-get >/dev/null || die "apt-get not found: this lab needs a Debian host"
# The path goes into QEMU's -fsdev options and the guests' modprobe options unquoted.
[[ $WORK =~ ^/[A-Za-z0-9/._-]+$ ]] || die "RXE_LAB_WORK must be an absolute path of [A-Za-z0-9/._-], got '$WORK'"

TMPS=()
trap 'rm -rf "${TMPS[@]}"' EXIT

export DEBIAN_FRONTEND=noninteractive
UPDATED=0
apt_update() {
  say "apt-get update"
  UPDATED=1
  apt-get update -q
}
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing: ${missing[*]}"
  # Refresh the package lists when they are absent, or when the install cannot find a package.
  if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e '^lock$' -e '^partial$' -e '^auxfiles$' || true)" ]; then
    apt_update
  fi
  if ! apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    say "install failed; apt-get update and retry"
    apt_update
    apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
else
  say "packages already installed"
fi

# The versioned image package (linux-image-<ver>) that the metapackage's candidate depends on.
image_package() {
  { apt-cache show --no-all-versions "$IMAGE_META" 2>/dev/null || true; } | awk -F': ' '
    $1 == "Depends" && pkg == "" {
      n = split($2, deps, /, */)
      for (i = 1; i <= n && pkg == ""; i++) if (deps[i] ~ /^linux-image-[0-9]/) { split(deps[i], w, " "); pkg = w[1] }
    }
    END { if (pkg != "") print pkg }'
}
# A kernel tree is complete once this file exists (written last, after depmod and the checks).
COMPLETE=.rxe-lab-complete
# Downloads image package $1 and unpacks it into $WORK/kernel/<ver>; returns 1 if the download fails.
fetch_kernel() {
  local pkg=$1 ver=${1#linux-image-} dl deb part
  dl=$(mktemp -d "$WORK/kernel/download.XXXXXX")
  TMPS+=("$dl")
  chmod 0755 "$dl"
  chown _apt "$dl" 2>/dev/null || true   # apt's download sandbox user may then write there
  say "downloading $pkg (not installing it)"
  (cd "$dl" && apt-get download -q "$pkg") || return 1
  deb=$(ls "$dl"/*.deb) || die "apt-get download left no .deb in $dl"
  part=$WORK/kernel/$ver.part
  TMPS+=("$part")
  rm -rf "$part"
  say "unpacking $(basename "$deb") into $WORK/kernel/$ver"
  dpkg -x "$deb" "$part" || die "dpkg -x $deb failed"
  [ -f "$part/boot/vmlinuz-$ver" ] && [ -d "$part/lib/modules/$ver" ] \
    || die "$pkg has no boot/vmlinuz-$ver or lib/modules/$ver"
  # dpkg -x runs no maintainer script: build modules.dep & co. here.
  depmod -b "$part" "$ver" || die "depmod -b $part $ver failed"
  modprobe -d "$part" -S "$ver" --show-depends rdma_rxe >/dev/null || die "$pkg has no rdma_rxe module"
  dpkg-deb -f "$deb" Package Version > "$part/$COMPLETE"
  rm -rf "$WORK/kernel/$ver"
  mv "$part" "$WORK/kernel/$ver"
  rm -rf "$dl"
}
# Sets KVER once image package $1 is unpacked (now or by an earlier run); returns 1 if not.
use_kernel() {
  local ver=${1#linux-image-}
  if [ -f "$WORK/kernel/$ver/$COMPLETE" ]; then
    say "guest kernel $1 already unpacked"
  else
    fetch_kernel "$1" || return 1
  fi
  KVER=$ver
}
mkdir -p "$WORK/kernel"
KVER=
PKG=$(image_package)
if [ -z "$PKG" ] && [ "$UPDATED" = 0 ]; then
  apt_update || say "apt-get update failed"
  PKG=$(image_package)
fi
if [ -n "$PKG" ] && ! use_kernel "$PKG" && [ "$UPDATED" = 0 ]; then
  # The lists may name a package the mirror no longer has; refreshed lists name its successor.
  say "download failed; apt-get update and retry"
  apt_update || say "apt-get update failed"
  PKG=$(image_package)
  [ -z "$PKG" ] || use_kernel "$PKG" || true
fi
if [ -z "$KVER" ]; then
  # Offline, or no package lists: the newest kernel an earlier run unpacked.
  KVER=$(for f in "$WORK"/kernel/*/"$COMPLETE"; do
    [ -f "$f" ] || continue
    basename "$(dirname "$f")"
  done | sort -V | tail -1)
  [ -n "$KVER" ] || die "cannot resolve or download the image package of $IMAGE_META, and no kernel is unpacked in $WORK/kernel"
  say "WARNING: cannot resolve or download the current image package of $IMAGE_META; using the unpacked $KVER"
fi
KROOT=$WORK/kernel/$KVER
KERNEL=$KROOT/boot/vmlinuz-$KVER
say "guest kernel $KERNEL"

INITRD=$WORK/initramfs-$KVER.cpio.gz
stamp="$KVER $(sha256sum "$0" | cut -d' ' -f1)"
if [ -f "$INITRD" ] && [ -f "$WORK/lab.env" ] && grep -qxF "RXE_LAB_STAMP='$stamp'" "$WORK/lab.env"; then
  say "initramfs up to date: $INITRD"
else
  say "building initramfs $INITRD"
  tmp=$(mktemp -d "$WORK/initramfs.XXXXXX")
  TMPS+=("$tmp")
  mkdir -p "$tmp"/{bin,dev,proc,sys,newroot,lib/modules}
  cp /bin/busybox "$tmp/bin/busybox"
  for applet in sh mount umount mkdir insmod switch_root cat sleep poweroff echo; do
    ln -s busybox "$tmp/bin/$applet"
  done
  : > "$tmp/modules.order"
  for m in "${INITRAMFS_MODULES[@]}"; do
    modprobe -d "$KROOT" -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
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
  if grep -q '^CONFIG_PVH=y' "$KROOT/boot/config-$KVER" 2>/dev/null; then
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
RXE_LAB_KERNEL_ROOT='$KROOT'
RXE_LAB_INITRD='$INITRD'
RXE_LAB_STAMP='$stamp'
EOF
fi

modprobe -d "$KROOT" -S "$KVER" --show-depends rdma_rxe >/dev/null || die "rdma_rxe not resolvable for $KVER"
say "done: work dir $WORK (guest kernel $KVER)"
