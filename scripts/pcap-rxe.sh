#!/usr/bin/env bash
# Real rxe's packets for the pcap comparison's programs: in one boot of the lab VM, tcpdump on
# veth0 while each program runs on the native backend (scripts/pcap-capture.ts); then, back on
# the host, the comparison of the simulator's pcap export with those captures, field by field,
# decoded by tshark (app/session/export/pcap-rxe.test.ts). The comparison needs no rxe, and
# under emulation each of its cases took ~60 s (tshark and vitest start slowly there) and hit
# vitest's 30 s timeout, so it runs on the host.
#   scripts/pcap-rxe.sh [out-dir]   (default: app/session/export/fixtures/pcap, the committed captures)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-app/session/export/fixtures/pcap}"
programs=(app/session/export/pcap-programs/{send,write-imm,rnr-retry,read,lossy}.ts)
if [[ "${VERBSLAB_IN_RXE_VM:-}" == 1 ]]; then
  exec node --import tsx scripts/pcap-capture.ts "$out" "${programs[@]}"
fi
npm run -s build:native
scripts/rxe-vm/run.sh bash scripts/pcap-rxe.sh "$out"
VERBSLAB_PCAP_RXE_DIR="$out" node_modules/.bin/vitest run --project all app/session/export/pcap-rxe.test.ts
