#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Build libspyre and run its tests on the drm backend inside the test VM
# (the same tests check-sim runs in-process), then the pipeline example and
# spyre-smi there. Prints a final line "N passed, N failed": the tests'
# own counts plus one each for the example (on the default queues and on
# SPYRE_DRM_QUEUES=kernel) and spyre-smi --json, and one failure if the VM
# itself failed (oops: exit 251, timeout, ...).
#
#   scripts/tests/libspyre-vm.sh [TEST-NAME...]
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${SPYRE_BUILD:-$top/build}
out=$build/libspyre

# --- inside the VM -----------------------------------------------------------
if [ "${1:-}" = --guest ]; then
	shift
	mountpoint -q /sys/kernel/debug 2>/dev/null || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	echo "# libspyre-vm: tests"
	SPYRE_BACKEND=drm "$out/tests/spyre-tests" "$@" 2>&1
	echo "# libspyre-vm: tests exit $?"
	if [ $# -eq 0 ]; then
		# The last test removed the card: reload the module to get it back
		# is not possible for a removed PCI function, so rescan the bus.
		echo 1 >/sys/bus/pci/rescan 2>/dev/null
		sleep 1
		SPYRE_BACKEND=drm "$out/examples/pipeline" 2>&1
		echo "# libspyre-vm: pipeline exit $?"
		# the other submission path (the suite runs on the default one)
		SPYRE_BACKEND=drm SPYRE_DRM_QUEUES=kernel "$out/examples/pipeline" 2>&1
		echo "# libspyre-vm: pipeline kernel queues exit $?"
		# spyre-smi while another process holds the card (8 MiB device,
		# 4 MiB host, one DMA queue)
		mkfifo /tmp/hold.in
		"$out/tests/spyre-hold" </tmp/hold.in >/tmp/hold.out 2>&1 &
		exec 9>/tmp/hold.in
		for _ in $(seq 50); do grep -q ready /tmp/hold.out && break; sleep 0.2; done
		"$out/spyre-smi" --json >/tmp/smi.json 2>&1
		rc=$?
		cat /tmp/smi.json
		echo "# libspyre-vm: smi exit $rc"
		"$out/spyre-smi" 2>&1
		exec 9>&-
		wait
	fi
	exit 0
fi

# --- on the host -------------------------------------------------------------
if ! make -s -C "$top/libspyre" BUILD="$build" "$out/tests/spyre-tests" "$out/examples/pipeline" \
	"$out/spyre-smi" "$out/tests/spyre-hold" >"$build/libspyre-vm.build.log" 2>&1; then
	cat "$build/libspyre-vm.build.log" >&2
	echo "libspyre-vm: building libspyre failed" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$top/scripts/spyre-vm" run --timeout 500 --card-opt pacing=on --card-opt poison=on \
	--card-opt hazard-check=on -- \
	"$top/scripts/tests/libspyre-vm.sh" --guest "$@" 2>&1 | tee "$log"
vm_rc=${PIPESTATUS[0]}

pass=0 fail=0
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
if [ -n "$line" ]; then
	pass=${line%% passed*}
	fail=${line#*passed, }
	fail=${fail%% failed*}
else
	echo "FAIL: the tests printed no result line (crashed?)"
	fail=$((fail + 1))
fi
if [ $# -eq 0 ]; then
	if grep -q '^# libspyre-vm: pipeline exit 0$' "$log"; then
		pass=$((pass + 1))
	else
		echo "FAIL: examples/pipeline (wrong results or no overlap)"
		fail=$((fail + 1))
	fi
	if grep -q '^# libspyre-vm: pipeline kernel queues exit 0$' "$log"; then
		pass=$((pass + 1))
	else
		echo "FAIL: examples/pipeline on SPYRE_DRM_QUEUES=kernel"
		fail=$((fail + 1))
	fi
	# valid JSON, and the holder process shows with its 8 MiB of device memory
	if grep -q '^# libspyre-vm: smi exit 0$' "$log" &&
		sed -n '/^{"cards"/p' "$log" | python3 -c '
import json, sys
c = json.load(sys.stdin)["cards"][0]
p = [x for x in c["processes"] if x["comm"] == "spyre-hold"]
assert p and p[0]["total-device"] >= 8 << 20 and p[0]["total-host"] >= 4 << 20, c
assert c["memory_used"] >= 8 << 20 and c["queues"] + c["user_queues"] >= 1, c
assert p[0]["engine-dma"] > 0, c  # its copy, on a kernel or a user queue
' 2>&1; then
		pass=$((pass + 1))
	else
		echo "FAIL: spyre-smi --json (invalid, or the holder process/its memory missing)"
		fail=$((fail + 1))
	fi
fi
if [ "$vm_rc" != 0 ]; then
	echo "FAIL: spyre-vm exited $vm_rc (its logs: spyre-vm names the run above)"
	fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
