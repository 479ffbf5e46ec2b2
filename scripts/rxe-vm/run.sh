#!/usr/bin/env bash
# Usage: scripts/rxe-vm/run.sh [--] <command...>
# Boots a throwaway qemu VM (software emulation, never KVM) with Debian's kernel and the real
# rdma_rxe module, sharing this machine's root filesystem read-write, brings up rxe0/rxe1 on a
# veth pair, runs <command...> in the current directory with the current environment, and exits
# with the command's exit code. 124 = VM timeout, 125 = VM/rxe setup failure or kernel panic.
#
# Environment: VERBSLAB_VM_TIMEOUT (seconds, default 1800), VERBSLAB_VM_MEM (MiB, default 2048),
# VERBSLAB_VM_KEEP_JOB=1 keeps the job directory (.vm/jobs/<id>: cmd, env, output.log, rc, console.log).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
vmdir="$repo/.vm"

say() { printf '[rxe-vm] %s\n' "$*" >&2; }
die() {
  printf '[rxe-vm] ERROR: %s\n' "$*" >&2
  exit 125
}

# Everything runs from main, so editing this file while a VM runs cannot derail bash.
main() {
  [[ "${1:-}" == "--" ]] && shift
  [[ $# -gt 0 ]] || die "usage: scripts/rxe-vm/run.sh [--] <command...>"
  [[ -z "${VERBSLAB_IN_RXE_VM:-}" ]] || die "already inside the lab VM: run the command directly"

  "$here/prepare.sh" || die "prepare.sh failed"
  # shellcheck source=/dev/null
  source "$vmdir/current.env"

  for p in "$repo" "$PWD"; do
    [[ "$p" =~ ^[A-Za-z0-9/._+-]+$ ]] || die "path '$p' has characters the kernel command line cannot carry"
  done

  # One job directory per run: it carries the command in and the exit code out.
  mkdir -p "$vmdir/jobs"
  job="$(mktemp -d "$vmdir/jobs/$(date +%Y%m%d-%H%M%S).XXXXXX")"
  exec 8>"$job/lock"
  flock -n 8 || die "another VM is already using $job"
  # shellcheck disable=SC2317 # called by the EXIT trap
  cleanup() {
    if [[ -z "${VERBSLAB_VM_KEEP_JOB:-}" ]]; then rm -rf "$job"; fi
  }
  trap cleanup EXIT

  printf '%s\0' "$@" >"$job/cmd"
  printf '%s' "$PWD" >"$job/cwd"
  cp "$vmdir/current.env" "$job/boot.env"
  # The caller's environment, minus what describes this shell rather than the job.
  # TERM=dumb: the guest's stdout is a pipe to the serial console, not a terminal.
  env -u PWD -u OLDPWD -u SHLVL -u _ -u TERM bash -c 'export -p' >"$job/env"
  echo 'export TERM=dumb' >>"$job/env"

  timeout_s="${VERBSLAB_VM_TIMEOUT:-1800}"
  mem="${VERBSLAB_VM_MEM:-2048}"
  cache="${VERBSLAB_VM_9P_CACHE:-loose}"
  # The guest clock. TCG's rdtsc reads the host's TSC, so the vCPUs' TSCs agree, but the guest
  # kernel cannot tell (no invariant-TSC bit, not Intel) and falls back to the emulated HPET:
  # no vDSO for it, every clock_gettime (performance.now) is a syscall plus an emulated MMIO
  # read, 15-180 µs. clocksource=tsc tsc=reliable keeps the TSC and its vDSO clock_gettime.
  # VERBSLAB_VM_CLOCK=hpet boots the old way (to compare).
  case "${VERBSLAB_VM_CLOCK:-tsc}" in
    tsc) clock="clocksource=tsc tsc=reliable" ;;
    hpet) clock="" ;;
    *) die "VERBSLAB_VM_CLOCK must be tsc or hpet" ;;
  esac
  say "booting $VM_KERNEL_PKG (tcg, 2 vCPU, ${mem} MiB), job $(basename "$job"), timeout ${timeout_s}s"
  start="$(date +%s.%N)"
  set +e
  # -nographic puts the serial console on stdio; stdin is /dev/null so qemu never grabs the
  # terminal. panic=-1 + -no-reboot turns a guest kernel panic into a qemu exit.
  timeout --foreground -k 10 "$timeout_s" qemu-system-x86_64 \
    -accel tcg,thread=multi -cpu max -smp 2 -m "$mem" \
    -nographic -no-reboot -nic none -fw_cfg name=etc/sercon-port,string=0 \
    -kernel "$VM_KERNEL" -initrd "$VM_INITRD" \
    -append "console=ttyS0 quiet loglevel=3 panic=-1 mitigations=off $clock rdinit=/init vlrepo=$repo vljob=$job vl9pcache=$cache" \
    -virtfs "local,path=/,mount_tag=hostroot,security_model=passthrough,multidevs=remap" \
    </dev/null 2> >(grep -v 'fw_cfg item names should be prefixed' >&2) | tee "$job/console.log"
  status=("${PIPESTATUS[@]}")
  set -e
  elapsed="$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"

  if [[ "${status[0]}" == 124 || "${status[0]}" == 137 ]]; then
    say "TIMEOUT: the VM did not finish within ${timeout_s}s (set VERBSLAB_VM_TIMEOUT); killed after ${elapsed}s"
    exit 124
  fi
  if [[ ! -s "$job/rc" ]]; then
    if grep -q 'Kernel panic' "$job/console.log"; then
      say "FAILED: guest kernel panic after ${elapsed}s (see the console output above)"
    else
      say "FAILED: the VM exited (qemu status ${status[0]}) after ${elapsed}s without reporting an exit code"
    fi
    VERBSLAB_VM_KEEP_JOB=1
    say "job directory kept: $job"
    exit 125
  fi
  rc="$(cat "$job/rc")"
  if [[ -s "$job/error" ]]; then
    say "FAILED inside the VM: $(cat "$job/error")"
  fi
  say "VM finished in ${elapsed}s; command exit code $rc"
  exit "$rc"
}

main "$@"
