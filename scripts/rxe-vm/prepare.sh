#!/usr/bin/env bash
# Prepare (idempotently) everything the rxe lab VM boots from, cached under <repo>/.vm/:
#   - Debian's current kernel image package (resolved from the linux-image-amd64 metapackage),
#     downloaded with apt-get and unpacked with dpkg-deb, modules indexed with depmod -b;
#   - a tiny busybox initramfs whose /init mounts the host root over virtio-9p and hands over
#     to scripts/rxe-vm/guest-boot.sh (so guest logic changes need no initramfs rebuild).
# Prints nothing but progress on stderr; writes <repo>/.vm/current.env for run.sh.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
vmdir="$repo/.vm"

say() { printf '[rxe-vm prepare] %s\n' "$*" >&2; }
die() {
  printf '[rxe-vm prepare] ERROR: %s\n' "$*" >&2
  exit 1
}
need() { # need <command> <apt package>
  command -v "$1" >/dev/null 2>&1 || die "'$1' not found: install it with 'apt-get install $2'"
}

need apt-get apt
need apt-cache apt
need dpkg-deb dpkg
need qemu-system-x86_64 qemu-system-x86
need busybox busybox-static
need flock util-linux
busybox_bin="$(command -v busybox)"
# The initramfs has no libc: busybox must be the static build.
if ldd "$busybox_bin" >/dev/null 2>&1; then
  die "$busybox_bin is dynamically linked: install the static one with 'apt-get install busybox-static'"
fi

mkdir -p "$vmdir"
exec 9>"$vmdir/prepare.lock"
flock 9 # two concurrent prepares would unpack over each other

# 1. Resolve the kernel package (override with VERBSLAB_VM_KERNEL_PKG=linux-image-…).
pkg="${VERBSLAB_VM_KERNEL_PKG:-}"
if [[ -z "$pkg" ]]; then
  # A cached kernel is good enough offline; only ask apt when nothing is cached yet.
  pkg="$(apt-cache depends linux-image-amd64 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')"
  if [[ -z "$pkg" ]]; then
    cached="$(find "$vmdir/kernel" -mindepth 2 -maxdepth 2 -name .done -printf '%h\n' 2>/dev/null | head -n1)"
    [[ -n "$cached" ]] || die "apt-cache knows no linux-image-amd64: run 'apt-get update' (Debian apt sources needed)"
    pkg="$(basename "$cached")"
    say "apt-cache knows no linux-image-amd64; using cached $pkg"
  fi
fi
kdir="$vmdir/kernel/$pkg"

# 2. Download and unpack it (once).
if [[ ! -e "$kdir/.done" ]]; then
  say "downloading $pkg with apt-get"
  rm -rf "$kdir"
  mkdir -p "$kdir/deb"
  # apt drops privileges to _apt for downloads; let it write here to avoid a warning.
  chmod 777 "$kdir/deb"
  (cd "$kdir/deb" && apt-get download -q "$pkg" >&2) || die "apt-get download $pkg failed (try 'apt-get update')"
  deb="$(find "$kdir/deb" -name '*.deb' | head -n1)"
  [[ -n "$deb" ]] || die "apt-get download produced no .deb for $pkg"
  say "unpacking $(basename "$deb")"
  dpkg-deb -x "$deb" "$kdir/root"
  rm -f "$deb"
  krel="$(ls "$kdir/root/lib/modules")"
  [[ -n "$krel" && -e "$kdir/root/boot/vmlinuz-$krel" ]] || die "no kernel image in $pkg"
  [[ -n "$(find "$kdir/root/lib/modules/$krel" -name 'rdma_rxe.ko*' -print -quit)" ]] || die "$pkg has no rdma_rxe module"
  say "indexing modules (depmod -b)"
  if command -v depmod >/dev/null 2>&1; then
    depmod -b "$kdir/root" "$krel"
  else
    "$busybox_bin" depmod -b "$kdir/root" "$krel"
  fi
  touch "$kdir/.done"
fi
krel="$(ls "$kdir/root/lib/modules")"
moddir="$kdir/root/lib/modules/$krel"
kernel="$kdir/root/boot/vmlinuz-$krel"

# 3. The initramfs: busybox, /init, and the modules needed to reach the 9p share.
#    Order matters (insmod does no dependency resolution); checked against modules.dep below.
boot_modules=(virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci 9pnet 9pnet_virtio netfs fscache 9p)
initrd="$vmdir/initramfs-$krel.cpio.gz"
key="$(cat "$here/initramfs-init.sh" "$busybox_bin" | sha256sum | cut -c1-16)-$krel"
if [[ ! -e "$initrd" || "$(cat "$initrd.key" 2>/dev/null)" != "$key" ]]; then
  say "building initramfs for $krel"
  stage="$(mktemp -d "$vmdir/initramfs.XXXXXX")"
  trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage"/{bin,dev,proc,sys,mnt/host,lib/modules,modules}
  cp "$busybox_bin" "$stage/bin/busybox"
  ln -s busybox "$stage/bin/sh"
  install -m 0755 "$here/initramfs-init.sh" "$stage/init"
  loaded=" "
  for m in "${boot_modules[@]}"; do
    f="$(find "$moddir/kernel" -name "$m.ko*" -print -quit)"
    [[ -n "$f" ]] || die "module $m not found in $krel"
    case "$f" in *.ko) ;; *) die "module $f is compressed; busybox insmod needs plain .ko files" ;; esac
    # Every dependency must come earlier in the list.
    rel="${f#"$moddir/"}"
    deps="$(awk -v m="$rel:" '$1 == m { $1 = ""; print }' "$moddir/modules.dep")"
    for d in $deps; do
      dn="$(basename "$d")"
      dn="${dn%.ko*}"
      [[ "$loaded" == *" $dn "* ]] || die "module $m needs $dn before it: fix boot_modules in prepare.sh"
    done
    loaded="$loaded$m "
    cp "$f" "$stage/modules/"
  done
  printf '%s\n' "${boot_modules[@]}" >"$stage/modules/order"
  # busybox's cpio can write newc archives, so the cpio package is optional.
  if command -v cpio >/dev/null 2>&1; then cpio_cmd=(cpio); else cpio_cmd=("$busybox_bin" cpio); fi
  (cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | "${cpio_cmd[@]}" -o -H newc -R 0:0 2>/dev/null | gzip -1) >"$initrd.tmp"
  mv "$initrd.tmp" "$initrd"
  printf '%s\n' "$key" >"$initrd.key"
  rm -rf "$stage"
  trap - EXIT
fi

cat >"$vmdir/current.env.tmp" <<EOF
VM_KERNEL_PKG=$pkg
VM_KREL=$krel
VM_KERNEL=$kernel
VM_INITRD=$initrd
VM_MODROOT=$kdir/root
EOF
mv "$vmdir/current.env.tmp" "$vmdir/current.env"
say "ready: $pkg ($krel)"
