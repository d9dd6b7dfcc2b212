#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later OR MIT
#
# The cards as a Linux guest sees them, in spyre-vm: two cards without the
# driver (identity, BARs, capabilities, random writes to every register),
# then two cards with the driver bound (MSI-X vectors). Prints a final
# "N passed, N failed" line.
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
vm=$top/scripts/spyre-vm
py=$top/qemu-device/tests/vm/card_in_guest.py
p=0
f=0

run() {
	local out
	out=$("$vm" run "$@" 2>&1)
	echo "$out" | grep -E '^(ok|not ok) '
	local last
	last=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -1)
	if [ -z "$last" ]; then
		echo "not ok vm run $* (no result; see build/vm/last/)"
		f=$((f + 1))
		return
	fi
	set -- $last
	p=$((p + $1))
	f=$((f + $3))
}

run --cards 2 --no-module --card-opt mem=256M -- /usr/bin/python3 "$py" 2 8 268435456 --fuzz
run --cards 2 -- /usr/bin/python3 "$py" 2 8 1073741824
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
