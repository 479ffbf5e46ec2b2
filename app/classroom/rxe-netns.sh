#!/usr/bin/env bash
# What Linux 6.1 allows for per-learner rxe: run inside the lab VM
#   scripts/rxe-vm/run.sh app/classroom/rxe-netns.sh
# Puts rdma's namespace mode in `exclusive`, moves rxe1 (and its veth1) into a learner's
# network namespace, and records what each namespace sees and whether RC traffic flows.
set -u
step() { echo; echo "### $*"; }
step "kernel"; uname -r
step "rdma system (before)"; rdma system show
step "set netns exclusive"; rdma system set netns exclusive && echo ok; rdma system show
ip netns add learner-a
step "move rxe1 into learner-a"; rdma dev set rxe1 netns learner-a && echo ok
ip link set veth1 netns learner-a
ip netns exec learner-a ip addr add 10.77.0.2/24 dev veth1
ip netns exec learner-a ip link set veth1 up
ip netns exec learner-a ip link set lo up
step "init ns: ibv_devices"; ibv_devices
step "learner-a: ibv_devices"; ip netns exec learner-a ibv_devices
step "init ns: rdma dev / rdma link"; rdma dev; rdma link
step "learner-a: rdma dev / rdma link"; ip netns exec learner-a rdma dev; ip netns exec learner-a rdma link
step "learner-a: GIDs of rxe1"; ip netns exec learner-a ibv_devinfo -d rxe1 -v | grep -i "gid\|state" | head
step "learner-a: rxe1 to itself (ibv_rc_pingpong, GID 1)"
ip netns exec learner-a timeout 20 ibv_rc_pingpong -d rxe1 -g 1 -n 5 >/tmp/srv.log 2>&1 &
sleep 2
ip netns exec learner-a timeout 15 ibv_rc_pingpong -d rxe1 -g 1 -n 5 127.0.0.1 >/tmp/cli.log 2>&1; echo "client rc=$?"
wait; echo "--- server"; cat /tmp/srv.log; echo "--- client"; cat /tmp/cli.log
step "learner-a: rdma res show qp"; ip netns exec learner-a rdma res show qp
step "init ns: rdma res show qp"; rdma res show qp

# rxe1 went away with veth1: make the learner's own rxe on its veth, from inside the namespace.
step "learner-a: rdma link add rxa type rxe netdev veth1"
ip netns exec learner-a rdma link add rxa type rxe netdev veth1 && echo ok
step "init ns: ibv_devices"; ibv_devices
step "learner-a: ibv_devices"; ip netns exec learner-a ibv_devices
step "learner-a: rdma link"; ip netns exec learner-a rdma link
step "learner-a: rxa to itself (ibv_rc_pingpong, GID 1 = ::ffff:10.77.0.2)"
ip netns exec learner-a timeout 25 ibv_rc_pingpong -d rxa -g 1 -n 5 >/tmp/srv.log 2>&1 &
sleep 2
ip netns exec learner-a timeout 20 ibv_rc_pingpong -d rxa -g 1 -n 5 127.0.0.1 >/tmp/cli.log 2>&1; echo "client rc=$?"
wait; echo "--- server"; cat /tmp/srv.log; echo "--- client"; cat /tmp/cli.log
step "learner-a: rdma res show qp"; ip netns exec learner-a rdma res show qp
step "init ns: rdma res show qp"; rdma res show qp
step "learner-a: UDP sockets (RoCE listens on 4791)"; ip netns exec learner-a ss -uan | head
step "init ns: UDP sockets"; ss -uan | head
