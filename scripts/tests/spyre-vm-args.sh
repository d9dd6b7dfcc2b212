#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Host tests of scripts/spyre-vm's argument handling (no VM is booted).
cd "$(dirname "$0")/../.." || exit 1
. scripts/tests/lib.sh
vm=scripts/spyre-vm

expect_status 2 "no arguments is a usage error" $vm
expect_output "missing command" "  ...and says the command is missing"
expect_status 2 "unknown subcommand" $vm frobnicate
expect_output "unknown command 'frobnicate'" "  ...and names it"
expect_status 2 "unknown option" $vm run --frob -- true
expect_output "unknown option '--frob'" "  ...and names it"
expect_status 2 "run without '--'" $vm run true
expect_output "put the command after --" "  ...and explains where the command goes"
expect_status 2 "run with '--' but no command" $vm run --
expect_output "missing '-- CMD'" "  ...and says so"
expect_status 2 "bad --mem" $vm run --mem lots -- true
expect_output "bad --mem 'lots'" "  ...and shows the bad value"
expect_status 2 "--mem without unit" $vm run --mem 512 -- true
expect_status 2 "--cards out of range" $vm run --cards 9 -- true
expect_output "bad --cards '9'" "  ...and shows the bad value"
expect_status 2 "--timeout zero" $vm run --timeout 0 -- true
expect_status 2 "--timeout not a number" $vm run --timeout soon -- true
expect_status 2 "option value missing" $vm run --cards
expect_output "needs a value" "  ...and says a value is needed"
expect_status 2 "malformed --card-opt" $vm run --card-opt nonsense -- true
expect_status 2 "shell takes no command" $vm shell -- true
expect_status 2 "--net port out of range" $vm run --net 80 --ip 10.83.0.1/24 -- true
expect_output "bad --net '80'" "  ...and shows the bad value"
expect_status 2 "--ip not ADDR/LEN" $vm run --net 5000 --ip 10.83.0.1 -- true
expect_output "bad --ip '10.83.0.1'" "  ...and shows the bad value"
expect_status 2 "--net without --ip" $vm run --net 5000 -- true
expect_output "--net needs --ip" "  ...and says what is missing"
expect_status 2 "--ip without --net" $vm run --ip 10.83.0.1/24 -- true
expect_output "--ip needs --net" "  ...and says what is missing"
expect_status 2 "spyre-vms without --nodes" scripts/spyre-vms run -- true
expect_output "missing --nodes" "  ...and says so"
expect_status 2 "spyre-vms --nodes out of range" scripts/spyre-vms run --nodes 1 -- true
expect_output "bad --nodes '1'" "  ...and shows the bad value"
expect_status 2 "spyre-vms chooses the network itself" scripts/spyre-vms run --nodes 2 --ip 1.2.3.4/8 -- true
expect_output "chosen by spyre-vms" "  ...and says so"
expect_status 0 "--help exits 0" $vm --help
expect_output "usage: spyre-vm run" "  ...and prints usage"
finish
