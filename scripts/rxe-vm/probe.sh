#!/usr/bin/env bash
# Usage: scripts/rxe-vm/probe.sh <file.c> [args...]
# Compiles a C program against libibverbs (and librdmacm when it includes <rdma/rdma_cma.h>)
# on the host, then runs it inside the rxe lab VM with rxe0/rxe1 up. Exit code = the program's.
# Extra compiler flags: PROBE_CFLAGS. The binary is kept in .vm/probes/.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

[[ $# -ge 1 && -f "$1" ]] || {
  echo "usage: scripts/rxe-vm/probe.sh <file.c> [args...]" >&2
  exit 2
}
src="$1"
shift
command -v gcc >/dev/null || {
  echo "[rxe-vm probe] gcc not found: apt-get install build-essential" >&2
  exit 125
}
[[ -e /usr/include/infiniband/verbs.h ]] || {
  echo "[rxe-vm probe] <infiniband/verbs.h> not found: apt-get install libibverbs-dev" >&2
  exit 125
}

libs=(-libverbs)
if grep -q 'rdma/rdma_cma.h\|rdma/rdma_verbs.h' "$src"; then libs+=(-lrdmacm); fi
mkdir -p "$repo/.vm/probes"
bin="$repo/.vm/probes/$(basename "${src%.c}")"
# shellcheck disable=SC2086 # PROBE_CFLAGS is a list of flags
gcc -std=gnu11 -O1 -g -Wall -Wextra ${PROBE_CFLAGS:-} -o "$bin" "$src" "${libs[@]}" -lpthread
echo "[rxe-vm probe] built $bin" >&2
exec "$here/run.sh" "$bin" "$@"
