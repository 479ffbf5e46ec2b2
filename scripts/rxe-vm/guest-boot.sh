#!/bin/sh
# Runs inside the lab VM, from the initramfs (busybox sh), with the host root at /mnt/host.
# Loads the RDMA modules from the unpacked Debian kernel, mounts the pseudo filesystems inside
# the host root, then chroots into it to run guest-job.sh (host tools: bash, iproute2, node).
# The exit status travels back in <job>/rc; the host reads it after qemu exits.
# shellcheck disable=SC2154 # vljob and vlrepo come from the kernel command line
H=/mnt/host
job="$H$vljob"
ts() { cut -d' ' -f1 /proc/uptime; }
log() { echo "[rxe-vm] +$(ts)s $*"; }
finish() {
  echo "$1" >"$job/rc.tmp" && mv "$job/rc.tmp" "$job/rc"
  sync
  umount -l "$H/run" "$H/tmp" "$H/dev/shm" "$H/dev/pts" "$H/dev" "$H/sys" "$H/proc" 2>/dev/null
  umount "$H" 2>/dev/null
  poweroff -f
}
fail() {
  log "FATAL: $*"
  echo "$*" >"$job/error"
  finish 125
}

[ -d "$job" ] || fail "job directory $vljob is missing"
modroot="$(sed -n 's/^VM_MODROOT=//p' "$job/boot.env")"
[ -d "$H$modroot/lib/modules" ] || fail "unpacked kernel modules not found at $modroot"
mount --bind "$H$modroot/lib/modules" /lib/modules || fail "cannot bind the kernel modules"

# crc32_generic first: rxe computes its ICRC with the crc32 hash; without it
# 'rdma link add' fails with ENOENT. CM modules are included for librdmacm. sch_netem and
# nf_tables serve the lab link's faults (native/lab-link.ts): the kernel cannot autoload them,
# since its modprobe helper runs outside the chroot, where these modules are not.
t0="$(ts)"
for m in crc32_generic udp_tunnel ip6_udp_tunnel ib_core ib_uverbs rdma_rxe veth configfs ib_cm iw_cm rdma_cm rdma_ucm sch_netem crc32c_generic nfnetlink nf_tables; do
  modprobe "$m" || fail "modprobe $m failed"
done
log "rdma modules loaded in $(awk -v a="$t0" -v b="$(ts)" 'BEGIN { printf "%.2f", b - a }')s"

mount -t proc proc "$H/proc" || fail "mount proc"
mount -t sysfs sysfs "$H/sys" || fail "mount sysfs"
mount -t configfs configfs "$H/sys/kernel/config" 2>/dev/null
mount -t devtmpfs devtmpfs "$H/dev" || fail "mount devtmpfs"
mkdir -p "$H/dev/pts" "$H/dev/shm"
mount -t devpts devpts "$H/dev/pts"
mount -t tmpfs -o mode=1777 tmpfs "$H/dev/shm"
# A fresh /tmp (unix sockets, such as tsx's, cannot live on 9p). When the repo itself is
# under /tmp (CI may clone there), bind it back on top so the job stays visible.
case "$vlrepo" in
  /tmp/*)
    mkdir -p /mnt/repo && mount --bind "$H$vlrepo" /mnt/repo || fail "bind the repo"
    mount -t tmpfs -o mode=1777 tmpfs "$H/tmp" || fail "mount /tmp"
    mkdir -p "$H$vlrepo" && mount --bind /mnt/repo "$H$vlrepo" || fail "bind the repo under /tmp"
    ;;
  *) mount -t tmpfs -o mode=1777 tmpfs "$H/tmp" || fail "mount /tmp" ;;
esac
mount -t tmpfs -o mode=0755 tmpfs "$H/run" || fail "mount /run"

chroot "$H" /bin/bash "$vlrepo/scripts/rxe-vm/guest-job.sh" "$vljob"
finish $?
