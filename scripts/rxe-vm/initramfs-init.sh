#!/bin/sh
# /init of the rxe lab VM's initramfs (busybox only). Reaches the host's root over virtio-9p,
# then hands over to scripts/rxe-vm/guest-boot.sh in the repo. Parameters arrive as
# environment variables from the kernel command line: vlrepo, vljob, vl9pcache.
# shellcheck disable=SC2154 # vlrepo comes from the kernel command line
/bin/busybox --install -s /bin
export PATH=/bin

fail() {
  echo "[rxe-vm] FATAL: $*"
  poweroff -f
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "[rxe-vm] +$(cut -d' ' -f1 /proc/uptime)s kernel booted, loading virtio/9p modules"
while read -r m; do
  insmod "/modules/$m.ko" || fail "insmod $m failed"
done </modules/order
mount -t 9p -o "trans=virtio,version=9p2000.L,msize=512000,cache=${vl9pcache:-loose}" hostroot /mnt/host ||
  fail "cannot mount the host root over virtio-9p"
[ -f "/mnt/host$vlrepo/scripts/rxe-vm/guest-boot.sh" ] || fail "no $vlrepo/scripts/rxe-vm/guest-boot.sh on the host"
exec /bin/sh "/mnt/host$vlrepo/scripts/rxe-vm/guest-boot.sh"
