#!/usr/bin/env bash
# The bandwidth-vs-size curve of real rxe, for the curve-shape comparison of `npm run bench:rxe`
# and for fitting the simulator's `rxe` wire profile (sim/wire.ts): perftest's ib_write_bw
# between rxe0 and rxe1 (link-local GIDs, -F -u 20 as bench-rxe.sh) at each size of CURVE_SIZES,
# each moving about CURVE_BYTES (at least 100, at most 2000 iterations), then one ib_send_lat
# -s 8 run. Prints one JSON line: { sizes: [{ bytes, iters, mb_per_s }], send_lat_us }.
# Outside the lab VM it boots one (scripts/rxe-vm/run.sh); bench-rxe.sh calls it inside its own boot.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
if [[ -z "${VERBSLAB_IN_RXE_VM:-}" ]]; then
  exec "$repo/scripts/rxe-vm/run.sh" -- bash "$repo/scripts/bench-rxe-curve.sh" "$@"
fi
sizes="${CURVE_SIZES:-256 1024 4096 16384 65536 262144 1048576}"
total="${CURVE_BYTES:-16777216}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# One perftest pair (server on rxe1, client on rxe0), retried until the server listens.
perf_once() {
  local tool="$1" out="$2"
  shift 2
  "$tool" -d rxe1 -x 0 -F -u 20 "$@" >"$tmp/$out.server" 2>&1 &
  local server=$!
  local ok=""
  for _ in $(seq 1 30); do
    sleep 1
    if "$tool" -d rxe0 -x 0 -F -u 20 "$@" 127.0.0.1 >"$tmp/$out.client" 2>&1; then ok=1; break; fi
    grep -qi "couldn't connect\|Unable to open\|connection refused" "$tmp/$out.client" || break
  done
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  [[ -n "$ok" ]]
}
perf() {
  for attempt in 1 2 3; do
    if perf_once "$@"; then return 0; fi
    echo "[bench-rxe-curve] $1 $2 attempt $attempt failed" >&2
  done
  cat "$tmp/$2.client" >&2
  exit 1
}

rows=()
for s in $sizes; do
  n=$((total / s))
  ((n < 100)) && n=100
  ((n > 2000)) && n=2000
  echo "[bench-rxe-curve] ib_write_bw -s $s -n $n" >&2
  perf ib_write_bw "bw$s" -s "$s" -n "$n"
  # #bytes #iterations BW_peak BW_average MsgRate (MB/sec)
  bw="$(awk -v s="$s" '$1 == s && NF >= 5 { print $4 }' "$tmp/bw$s.client" | tail -1)"
  [[ -n "$bw" ]] || { cat "$tmp/bw$s.client" >&2; exit 1; }
  rows+=("{\"bytes\":$s,\"iters\":$n,\"mb_per_s\":$bw}")
done
echo "[bench-rxe-curve] ib_send_lat -s 8 -n 1000" >&2
perf ib_send_lat lat -s 8 -n 1000
# #bytes #iterations t_min t_max t_typical t_avg ...
lat="$(awk '$1 == 8 && NF >= 6 { print $5 }' "$tmp/lat.client" | tail -1)"
(IFS=,; echo "{\"sizes\":[${rows[*]}],\"send_lat_us\":${lat:-null}}")
