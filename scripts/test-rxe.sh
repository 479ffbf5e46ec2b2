#!/usr/bin/env bash
# npm run test:rxe — the native backend against real soft-RoCE, in ONE boot of the lab VM.
# On the host: builds the native addon (npm run build:native, when that script exists).
# In the VM (scripts/rxe-vm/run.sh), one process each, one after the other:
#   1. VERBSLAB_BACKEND=native vitest run --project all --pool=threads --no-file-parallelism --no-isolate verbs/conformance native state-machines
#      (and the session tests that need real rxe: explain-backends, the C export of rdma_cm programs)
#   2. npm run lessons:check -- --backend native   (when that script exists)
# Prints a summary; the exit code is non-zero if any step failed (or the VM did).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# grep, not `npm pkg get`: every node start costs ~6 s inside the VM.
has_script() { grep -q "^    \"$1\":" package.json; }

# Everything runs from main, so editing this file while a VM runs cannot derail bash.
main() {
  if [[ "${1:-}" != "--in-vm" ]]; then
    if has_script build:native; then
      echo "[test:rxe] building the native addon on the host (npm run build:native)"
      npm run -s build:native
    else
      echo "[test:rxe] no build:native script: skipping the native build"
    fi
    # The whole suite took 36 min under emulation on 2 busy cores (14 min tests, 20 min lessons).
    export VERBSLAB_VM_TIMEOUT="${VERBSLAB_VM_TIMEOUT:-5400}"
    exec scripts/rxe-vm/run.sh bash scripts/test-rxe.sh --in-vm
  fi

  # ---- inside the VM ----
  export VERBSLAB_BACKEND=native
  names=()
  codes=()
  times=()
  step() { # step <name> <command...>
    local name="$1" t0 rc
    shift
    echo
    echo "[test:rxe] ===== $name: $*"
    t0="$(date +%s)"
    set +e
    "$@"
    rc=$?
    set -e
    names+=("$name")
    codes+=("$rc")
    times+=("$(($(date +%s) - t0))")
    echo "[test:rxe] ===== $name: exit $rc after ${times[-1]}s"
  }

  # --no-isolate: one worker runs every file. Under emulation a fresh worker per file needs
  # 30-90 s to start, and vitest gives up on a worker after 60 s (not configurable); a thread
  # starts without a new node process (measured: forks timed out in two loaded boots, threads never).
  # state-machines: the QP model's generated paths, replayed on real rxe (qp.sim.test.ts).
  # explain-backends: the reasons inferred for remote failures, from what real rxe did.
  # c-cm-rxe: exported rdma_cm C programs (lessons 17 and 18) compiled against librdmacm and run.
  step "conformance + native tests + QP model paths (native backend)" \
    node_modules/.bin/vitest run --project all --pool=threads --no-file-parallelism --no-isolate verbs/conformance native state-machines \
      app/session/explain-backends.test.ts app/session/export/c-cm-rxe.test.ts
  if has_script lessons:check; then
    step "lessons:check (native backend)" npm run -s lessons:check -- --backend native
  else
    echo "[test:rxe] no lessons:check script: skipping the lessons"
  fi

  echo
  echo "[test:rxe] summary (real rxe, $(uname -r)):"
  failed=0
  for i in "${!names[@]}"; do
    if [[ "${codes[$i]}" == 0 ]]; then verdict=PASS; else
      verdict="FAIL (exit ${codes[$i]})"
      failed=$((failed + 1))
    fi
    printf '[test:rxe]   %-48s %s  %ss\n' "${names[$i]}" "$verdict" "${times[$i]}"
  done
  exit $((failed > 0 ? 1 : 0))
}

main "$@"
