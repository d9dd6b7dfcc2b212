#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# VM tests of scripts/spyre-vm: exit status, cards on the bus, crash and
# timeout reporting. Each case boots a VM.
cd "$(dirname "$0")/../.." || exit 1
. scripts/tests/lib.sh
vm=scripts/spyre-vm

t0=$(date +%s.%N)
expect_status 0 "run -- true exits 0" $vm run --no-module -- true
echo "# boot+run+poweroff of 'true': $(echo "$(date +%s.%N) - $t0" | bc | cut -c1-5)s"
expect_status 1 "run -- false exits 1" $vm run --no-module -- false
expect_status 42 "the command's status is passed through" $vm run --no-module -- sh -c 'exit 42'
expect_status 0 "command runs in the caller's directory" $vm run --no-module -- test -f scripts/spyre-vm
expect_status 0 "/tmp is writable in the guest" $vm run --no-module -- sh -c 'echo x >/tmp/f && test -s /tmp/f'
expect_status 0 "two cards are on the PCI bus" $vm run --no-module --cards 2 -- cat /proc/bus/pci/devices
n=$(grep -c $'\t12345350\t' <<<"$LAST_OUT")
if [ "$n" = 2 ]; then ok "  ...with vendor 1234 device 5350"; else not_ok "  ...with vendor 1234 device 5350 ($n found)" "$LAST_OUT"; fi
expect_status 253 "a guest kernel crash is a VM failure" $vm run --no-module -- sh -c 'echo c >/proc/sysrq-trigger'
expect_output "VM failure" "  ...reported as such"
expect_status 252 "a command that never ends is killed at --timeout" $vm run --no-module --timeout 20 -- sleep 1000
expect_output "timeout" "  ...with a timeout message"
finish
