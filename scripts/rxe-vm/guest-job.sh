#!/bin/bash
# Runs inside the lab VM, chrooted into the host root: brings up soft-RoCE, then runs the job's
# command in the caller's directory with the caller's environment. Exits with its exit code.
#
# Network layout (the simulator mirrors it; change it only together with sim/):
#   veth0 10.77.0.1/24 <-> veth1 10.77.0.2/24, MTU 1500, both in the VM's one network namespace
#   rxe0 on veth0, rxe1 on veth1.
# Linux 6.1's rxe opens its UDP socket in the initial netns only, so an rxe on a netdev in another
# namespace never receives anything (measured): both ends stay in this one namespace. rxe routes
# with the netdev as output interface, so 10.77.0.1 -> 10.77.0.2 really leaves through veth0; but
# the receiving end sees a packet (or ARP request) from one of its own addresses, which Linux drops
# as martian unless accept_local=1 -- without it, RTR over IPv4 GIDs times out. Static
# neighbour entries spare the ARP round trip.
set -euo pipefail
job="$1"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# This script creates network interfaces: never on the host, only in the lab VM.
grep -q ' vljob=' /proc/cmdline || {
  echo "guest-job.sh runs only inside the lab VM (use scripts/rxe-vm/run.sh)" >&2
  exit 2
}
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
trap 'setup_fail "line $LINENO: $BASH_COMMAND"' ERR
ip -batch - <<'EOF'
link set lo up
link add veth0 mtu 1500 type veth peer name veth1 mtu 1500
addr add 10.77.0.1/24 dev veth0
addr add 10.77.0.2/24 dev veth1
EOF
for dev in all default veth0 veth1; do
  echo 0 >"/proc/sys/net/ipv4/conf/$dev/rp_filter"
  echo 1 >"/proc/sys/net/ipv4/conf/$dev/accept_local"
done
ip -batch - <<EOF
neigh replace 10.77.0.2 lladdr $(cat /sys/class/net/veth1/address) dev veth0 nud permanent
neigh replace 10.77.0.1 lladdr $(cat /sys/class/net/veth0/address) dev veth1 nud permanent
link set veth0 up
link set veth1 up
EOF
rdma -b - <<'EOF'
link add rxe0 type rxe netdev veth0
link add rxe1 type rxe netdev veth1
EOF
trap - ERR

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
    # shellcheck disable=SC2086 # split a.b.c.d into four printf arguments
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
log "rxe up in $(since "$t0")s: rxe0/veth0 10.77.0.1, rxe1/veth1 10.77.0.2, ports ACTIVE"

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
