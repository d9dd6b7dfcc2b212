#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/plugin-distributed.py on the drm backend, in one boot of two VMs
# with two cards each (scripts/spyre-vms): first two ranks on the two
# cards of VM 0 (one machine: gloo over the guest's loopback), then one
# rank in each VM under torchrun --nnodes 2 (two machines: gloo over the
# VMs' virtual network). Prints both tables and their @bench records.
#
#   bench/plugin-distributed-vms.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${SPYRE_BUILD:-$top/build}

if [ "${1:-}" = --guest ]; then
	export SPYRE_BACKEND=drm PYTHONDONTWRITEBYTECODE=1 HOME=/tmp OMP_NUM_THREADS=1
	py=$build/venv/bin/python
	if [ "$SPYRE_VM_NODE" = 0 ]; then
		echo "## one VM, two cards"
		"$py" "$top/bench/plugin-distributed.py" 2>&1 | grep -v -e Warning -e USDT
	fi
	echo "## two VMs, one card each"
	"$py" -m torch.distributed.run --nnodes "$SPYRE_VM_NODES" --nproc-per-node 1 \
		--node-rank "$SPYRE_VM_NODE" --master-addr "$SPYRE_VM_MASTER" --master-port 29500 \
		"$top/bench/plugin-distributed.py" 2>&1 | grep -v -e Warning -e USDT -e socket.cpp
	exit 0
fi
exec "$top/scripts/spyre-vms" run --nodes 2 --cards 2 --timeout 2400 -- \
	"$top/bench/plugin-distributed-vms.sh" --guest
