#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Build the Spyre kselftests (selftests/drivers/accel/spyre) and run them in
# the test VM with two cards. Fails on any failed test, unexpected pass
# (XPASS), missing result (a test binary crashed or timed out), kernel
# oops/WARN (spyre-vm exit 251) or BO leaked at the end (the driver's
# debugfs bo_count must be back to zero on every card). Prints a final
# line "N passed, N failed, N skipped".
#
#   scripts/tests/kselftest-vm.sh [TEST-BINARY...]   e.g. spyre_bo spyre_fence
#
# Environment: SPYRE_KSFT_VM_OPTS adds spyre-vm options (e.g. "--monitor
# --cards 1", or the debug kernel's --kernel/--module), SPYRE_KSFT_VM_TIMEOUT
# the VM's time limit (s, default 290) and SPYRE_KSFT_TIMEOUT each binary's
# (default: settings). When the kernel has kmemleak, the guest scans for
# leaks after the tests and any leak fails the suite.
#
# The 6.12 kselftest runner exits 0 even when tests fail, so this script
# runs the harness binaries itself and parses their TAP output.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${SPYRE_BUILD:-$top/build}
out=$build/selftests
src=$top/selftests/drivers/accel/spyre

# Run order: lifecycle last (it unbinds a card and reloads the module).
all_tests=(spyre_params spyre_bo spyre_queue spyre_submit spyre_fence spyre_isolation
	spyre_recovery spyre_deps spyre_vm spyre_vm_submit spyre_vm_launch spyre_uq spyre_peer spyre_fuzz spyre_stress spyre_module spyre_lifecycle)

# --- inside the VM -----------------------------------------------------------
if [ "${1:-}" = --guest ]; then
	shift
	dir=$1
	timeout_s=$2
	shift 2
	kml=/sys/kernel/debug/kmemleak
	# leaks from before the tests (boot) are not theirs
	[ -w "$kml" ] && echo clear >"$kml"
	for t in "$@"; do
		echo "# kselftest-vm: begin $t"
		# --foreground: the harness forks and signals its own process groups
		timeout --foreground -k 5 "$timeout_s" "$dir/$t" 2>&1
		echo "# kselftest-vm: end $t exit $?"
	done
	if [ -w "$kml" ]; then
		# objects freed by RCU or deferred work need a moment; scan twice
		sleep 5
		echo scan >"$kml"
		sleep 2
		echo scan >"$kml"
		leaks=$(grep -c '^unreferenced object' "$kml")
		[ "$leaks" -gt 0 ] && head -80 "$kml"
		echo "# kselftest-vm: kmemleak $leaks"
	fi
	for f in /sys/kernel/debug/accel/*/bo_count; do
		[ -r "$f" ] || continue
		echo "# kselftest-vm: bo_count $(basename "$(dirname "$f")") $(cat "$f")"
	done
	exit 0
fi

# --- on the host -------------------------------------------------------------
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=("${all_tests[@]}")

if [ ! -f "$build/linux-src/tools/testing/selftests/kselftest_harness.h" ]; then
	"$top/scripts/fetch-kernel-tools" || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
fi
if ! make -s -C "$src" OUTPUT="$out" KHDR_INCLUDES="-I$top/uapi" >"$build/selftests.build.log" 2>&1; then
	cat "$build/selftests.build.log" >&2
	echo "kselftest-vm: building the selftests failed" >&2
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
timeout_s=${SPYRE_KSFT_TIMEOUT:-$(sed -n 's/^timeout=//p' "$src/settings" 2>/dev/null)}
# shellcheck disable=SC2086 # the options are words on purpose
"$top/scripts/spyre-vm" run --cards 2 --timeout "${SPYRE_KSFT_VM_TIMEOUT:-290}" \
	${SPYRE_KSFT_VM_OPTS:-} -- \
	"$top/scripts/tests/kselftest-vm.sh" --guest "$out" "${timeout_s:-120}" "${tests[@]}" \
	2>&1 | tee "$log"
vm_rc=${PIPESTATUS[0]}
elapsed=$(($(date +%s) - start))

# Parse the TAP of each binary: results, plan, directives.
pass=0 fail=0 skip=0
problems=()
cur="" plan=0 seen=0
declare -A ran=()
while IFS= read -r line; do
	case "$line" in
	"# kselftest-vm: begin "*)
		cur=${line#\# kselftest-vm: begin }
		plan=0 seen=0 ;;
	"# kselftest-vm: end "*)
		ran[$cur]=1
		if [ "$seen" -lt "$plan" ] || [ "$plan" = 0 ]; then
			fail=$((fail + 1))
			problems+=("$cur: $seen of $plan results (crashed or timed out: ${line##* })")
		fi
		cur="" ;;
	"# kselftest-vm: kmemleak "*)
		n=${line#\# kselftest-vm: kmemleak }
		if [ "$n" != 0 ]; then
			fail=$((fail + 1))
			problems+=("kmemleak: $n unreferenced objects after the suite (serial.log of the run spyre-vm names)")
		fi ;;
	"# kselftest-vm: bo_count "*)
		set -- ${line#\# kselftest-vm: bo_count }
		if [ "$2" != 0 ]; then
			fail=$((fail + 1))
			problems+=("BO leak: card $1 still has $2 BOs after the suite")
		fi
		ran[bo_count]=1 ;;
	1..*)
		[ -n "$cur" ] && plan=${line#1..} ;;
	"not ok "*)
		[ -n "$cur" ] || continue
		seen=$((seen + 1)) fail=$((fail + 1))
		problems+=("$cur: $line") ;;
	"ok "*)
		[ -n "$cur" ] || continue
		seen=$((seen + 1))
		case "$line" in
		*"# SKIP"*) skip=$((skip + 1)) ;;
		*"# XPASS"*) fail=$((fail + 1)); problems+=("$cur: unexpected pass: $line") ;;
		*) pass=$((pass + 1)) ;;
		esac ;;
	esac
done <"$log"

for t in "${tests[@]}"; do
	if [ -z "${ran[$t]:-}" ]; then
		fail=$((fail + 1))
		problems+=("$t: never ran")
	fi
done
if [ -z "${ran[bo_count]:-}" ]; then
	fail=$((fail + 1))
	problems+=("no debugfs bo_count after the suite: the leak check could not run")
fi
case "$vm_rc" in
0) ;;
251) fail=$((fail + 1)); problems+=("kernel oops/WARN/BUG in dmesg (spyre-vm exit 251, the dmesg spyre-vm names above)") ;;
*) fail=$((fail + 1)); problems+=("spyre-vm exited $vm_rc (its logs: spyre-vm names the run above)") ;;
esac

echo "=== kselftest-vm: ${#tests[@]} binaries in ${elapsed}s"
for p in "${problems[@]}"; do
	echo "FAIL: $p"
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
