#!/usr/bin/env bash
# Checks the lab VM's rxe setup with rdma-core's own tools; run it inside the VM:
#   scripts/rxe-vm/run.sh scripts/rxe-vm/selftest.sh [--bench]
# Reports which ibv_rc_pingpong pairings work (same device / cross-device, GID index 0 / 1),
# whether `rdma res show qp -j` and the hw_counters work, how long node takes to start, and
# with --bench ib_write_bw / ib_send_lat loopback figures. Exit code = number of failed checks.
set -uo pipefail
[[ -n "${VERBSLAB_IN_RXE_VM:-}" ]] || {
  echo "run me inside the VM: scripts/rxe-vm/run.sh $0" >&2
  exit 2
}
bench=0
[[ "${1:-}" == "--bench" ]] && bench=1
failed=0
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
check() { # check <name> <command...>
  local name="$1" t
  shift
  t="$(now)"
  if "$@" >/tmp/selftest.out 2>&1; then
    echo "PASS  $name ($(since "$t")s)"
  else
    echo "FAIL  $name ($(since "$t")s, exit $?)"
    sed 's/^/      | /' /tmp/selftest.out | tail -n 15
    failed=$((failed + 1))
  fi
}
# The servers need seconds to start under emulation; a client connecting too early just fails.
wait_listen() { # wait_listen <tcp port>
  for _ in $(seq 1 300); do
    [[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]] && return 0
    sleep 0.1
  done
  return 1
}
# pingpong <server dev> <client dev> <gid index> <port>: server and client in the root netns,
# exchanging QP info over TCP on 127.0.0.1.
# shellcheck disable=SC2317 # called through check
pingpong() {
  local sdev="$1" cdev="$2" gidx="$3" port="$4" spid rc
  timeout 20 ibv_rc_pingpong -d "$sdev" -g "$gidx" -p "$port" -n 100 >/tmp/pp-server.out 2>&1 &
  spid=$!
  wait_listen "$port"
  timeout 20 ibv_rc_pingpong -d "$cdev" -g "$gidx" -p "$port" -n 100 127.0.0.1
  rc=$?
  wait "$spid" || rc=$?
  echo "--- server:"
  cat /tmp/pp-server.out
  return "$rc"
}

echo "== devices and routes"
rdma link show
ip -br addr show
ip route get 10.77.0.2 from 10.77.0.1
ip route get 10.77.0.1 from 10.77.0.2
check "ibv_devinfo -v rxe0" ibv_devinfo -v -d rxe0
grep -E 'state|active_mtu|GID\[' /tmp/selftest.out | sed 's/^/      /'
check "uverbs device nodes read/write" test -r /dev/infiniband/uverbs0 -a -w /dev/infiniband/uverbs0 -a -w /dev/infiniband/uverbs1

echo "== ibv_rc_pingpong (100 iterations, 4096 B)"
port=18515
for pair in "rxe0 rxe0 0" "rxe0 rxe0 1" "rxe1 rxe1 1" "rxe1 rxe0 0" "rxe1 rxe0 1" "rxe0 rxe1 1"; do
  read -r s c g <<<"$pair"
  check "pingpong server $s / client $c, GID index $g" pingpong "$s" "$c" "$g" "$port"
  grep -E 'bytes in' /tmp/selftest.out | sed 's/^/      /'
  port=$((port + 1))
done

echo "== veth packet counters (cross-device traffic must show up on both veths)"
for dev in veth0 veth1; do
  echo "$dev: $(ip -s link show "$dev" | awk '/RX:/ { getline; rx = $2 } /TX:/ { getline; tx = $2 } END { print "rx", rx, "tx", tx, "packets" }')"
done

echo "== rdma res show qp -j (with a live QP from a pingpong server)"
timeout 30 ibv_rc_pingpong -d rxe0 -g 1 -p 18600 >/dev/null 2>&1 &
spid=$!
wait_listen 18600
check "rdma res show qp -j" bash -c 'rdma res show qp -j && rdma res show qp -j | grep -q "\"ifname\":\"rxe0\""'
sed 's/^/      /' /tmp/selftest.out | head -c 1500
echo
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null

echo "== hw_counters"
check "rxe0 hw_counters readable" bash -c 'grep -H . /sys/class/infiniband/rxe0/ports/1/hw_counters/* | sed "s|.*/||"'
tr '\n' ' ' </tmp/selftest.out | fold -w 110 | sed 's/^/      /'
echo

echo "== node"
t="$(now)"
node -e 'process.exit(0)'
echo "node -e startup: $(since "$t")s"

if [[ $bench == 1 ]]; then
  echo "== perftest (loopback on rxe0, GID index 1)"
  ib_write_bw -d rxe0 -x 1 -s 65536 -n 2000 -F >/tmp/bw-server.out 2>&1 &
  spid=$!
  wait_listen 18515
  check "ib_write_bw -s 65536" timeout 120 ib_write_bw -d rxe0 -x 1 -s 65536 -n 2000 -F 127.0.0.1
  grep -A1 '#bytes' /tmp/selftest.out | sed 's/^/      /'
  wait "$spid"
  ib_send_lat -d rxe0 -x 1 -s 8 -n 1000 -F >/tmp/lat-server.out 2>&1 &
  spid=$!
  wait_listen 18515
  check "ib_send_lat -s 8" timeout 120 ib_send_lat -d rxe0 -x 1 -s 8 -n 1000 -F 127.0.0.1
  grep -A1 '#bytes' /tmp/selftest.out | sed 's/^/      /'
  wait "$spid"
fi

echo "== $failed check(s) failed"
exit "$failed"
