#!/bin/bash
# Runs inside the lab VM, chrooted into the host root: brings up soft-RoCE, then runs the job's
# command in the caller's directory with the caller's environment. Exits with its exit code.
#
# Network layout (the simulator mirrors it; change it only together with sim/):
#   veth0 (root netns) 10.77.0.1/24  <->  veth1 (netns "peer") 10.77.0.2/24, MTU 1500
#   rxe0 on veth0, rxe1 on veth1 (rdma devices are shared across netns, so both are visible here)
set -euo pipefail
job="$1"
ts() { cut -d' ' -f1 /proc/uptime; }
log() { echo "[rxe-vm] +$(ts)s $*"; }
since() { awk -v a="$1" -v b="$(ts)" 'BEGIN { printf "%.2f", b - a }'; }
setup_fail() {
  log "FATAL: rxe setup failed: $*"
  echo "rxe setup failed: $*" >"$job/error"
  exit 125
}
# Serial console: no \n -> \r\n translation, so logs captured on the host stay clean.
stty -onlcr 2>/dev/null || true

t0="$(ts)"
{
  ip link set lo up
  ip link add veth0 mtu 1500 type veth peer name veth1 mtu 1500
  ip netns add peer
  ip link set veth1 netns peer
  ip -n peer link set lo up
  ip addr add 10.77.0.1/24 dev veth0
  ip -n peer addr add 10.77.0.2/24 dev veth1
  ip link set veth0 up
  ip -n peer link set veth1 up
  rdma link add rxe0 type rxe netdev veth0
  ip netns exec peer rdma link add rxe1 type rxe netdev veth1
} || setup_fail "network/rdma link commands"

# Wait until both ports are ACTIVE and both GID tables hold index 0 (fe80::) and 1 (::ffff:10.77.0.x).
want_ready() {
  local dev ip
  for dev in rxe0:10.77.0.1 rxe1:10.77.0.2; do
    ip="${dev#*:}"
    dev="${dev%%:*}"
    grep -q ACTIVE "/sys/class/infiniband/$dev/ports/1/state" 2>/dev/null || return 1
    [[ "$(cat "/sys/class/infiniband/$dev/ports/1/gids/0" 2>/dev/null)" == fe80:* ]] || return 1
    local g1
    g1="$(cat "/sys/class/infiniband/$dev/ports/1/gids/1" 2>/dev/null)" || return 1
    # ::ffff:a.b.c.d as the kernel prints it: 0000:...:ffff:0a4d:0001
    [[ "$g1" == "0000:0000:0000:0000:0000:ffff:$(printf '%02x%02x:%02x%02x' ${ip//./ })" ]] || return 1
  done
}
for _ in $(seq 1 100); do
  want_ready && break
  sleep 0.1
done
if ! want_ready; then
  for dev in rxe0 rxe1; do
    echo "$dev: $(cat /sys/class/infiniband/$dev/ports/1/state 2>&1)" \
      "gid0=$(cat /sys/class/infiniband/$dev/ports/1/gids/0 2>&1) gid1=$(cat /sys/class/infiniband/$dev/ports/1/gids/1 2>&1)"
  done
  setup_fail "ports not ACTIVE with GIDs 0 and 1 within 10 s"
fi
chmod 666 /dev/infiniband/* 2>/dev/null || true
log "rxe up in $(since "$t0")s: rxe0/veth0 10.77.0.1, rxe1/veth1 10.77.0.2 (netns peer), ports ACTIVE"

mapfile -d '' -t cmd <"$job/cmd"
cwd="$(cat "$job/cwd")"
log "command start: ${cmd[*]}"
t1="$(ts)"
set +e
(
  set +eu
  # shellcheck disable=SC1091
  source "$job/env"
  export VERBSLAB_IN_RXE_VM=1
  cd "$cwd" || exit 126
  exec "${cmd[@]}"
) 2>&1 </dev/null | tee "$job/output.log"
rc="${PIPESTATUS[0]}"
log "command end: exit $rc after $(since "$t1")s"
exit "$rc"
