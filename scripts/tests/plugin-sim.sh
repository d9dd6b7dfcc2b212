#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The PyTorch plugin's tests on the host, on libspyre's in-process sim
# backend with two sim cards. Builds the venv and the plugin if needed
# (scripts/build-plugin), runs pytest from the tests' directory against the
# installed package, and ends with "N passed, N failed[, N skipped]".
#
#   scripts/tests/plugin-sim.sh [PYTEST-ARGS...]
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${SPYRE_BUILD:-$top/build}

if ! "$top/scripts/build-plugin"; then
	echo "plugin-sim: building the plugin failed"
	echo "0 passed, 1 failed"
	exit 1
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cd "$top/torch_plugin/tests" || exit 1
# --durations: the slowest tests in every log, to keep the suite's time
# in view (the README's budget for make check)
SPYRE_BACKEND=sim SPYRE_SIM_CARDS=2 "$build/venv/bin/python" -m pytest -q -p no:cacheprovider \
	-W error::pytest.PytestUnraisableExceptionWarning --durations=30 "$@" . 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
"$top/scripts/tests/pytest-summary" "$log" "$rc"
