#!/usr/bin/env bash
# Real rxe's packets for the pcap comparison's programs, in one boot of the lab VM:
# tcpdump on veth0 while each program runs on the native backend (scripts/pcap-capture.ts),
# then the comparison of the simulator's pcap export with those captures
# (app/session/export/pcap-rxe.test.ts), field by field, decoded by tshark.
#   scripts/pcap-rxe.sh [out-dir]   (default: app/session/export/fixtures/pcap, the committed captures)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-app/session/export/fixtures/pcap}"
programs=(app/session/export/pcap-programs/{send,write-imm,rnr-retry,read}.ts)
if [[ "${VERBSLAB_IN_RXE_VM:-}" != 1 ]]; then
  npm run -s build:native
  exec scripts/rxe-vm/run.sh bash scripts/pcap-rxe.sh "$out"
fi
node --import tsx scripts/pcap-capture.ts "$out" "${programs[@]}"
VERBSLAB_PCAP_RXE_DIR="$out" node_modules/.bin/vitest run app/session/export/pcap-rxe.test.ts
