#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The PyTorch plugin on the drm backend inside the test VM with two cards:
# one boot, one Python process (import torch alone takes ~36 s under TCG).
# Runs the plugin's pytest files minus the tests that start a second
# interpreter (autoload, environment-variable modes, no-card: those run on
# the host in plugin-sim), and the stream-race test: the cards pace device
# time against real time (so that non_blocking copies are observably
# asynchronous), and under TCG the guest needs longer between two Python
# statements than the upload takes, so the race cannot be provoked there;
# plugin-sim runs it on the model's virtual clock. Of the eager model tests
# (fallback forbidden) the MLP, the post-norm encoder layer, the small
# GPT-style decoder and the transformers GPT-2 and Llama models (forward and
# generate(); building the first model costs ~40 s under TCG) run here; the
# pre-norm variant runs in plugin-sim. Of the torch.compile tests, the
# compiled GPT-2 ones run here (one recipe per forward, and generate() with
# a compiled forward: one recipe per sequence length) and a CPU input
# uploaded by the recipe on the upload stream; a compile under TCG costs
# tens of seconds, so the rest of test_compile.py (generate() past Dynamo's
# recompile limit among them: ten more sizes) runs in plugin-sim.
# Device timelines (torch.spyre.trace) and torch.profiler's device events
# run here too: their times come from the card's TIMESTAMP commands.
# One test does start a second interpreter on purpose: GPT-2 compiled here,
# then loaded from the on-disk compile cache by another process, which
# generates no program (test_compile_cache.py, the rest in plugin-sim).
# Of test_distributed.py, on the two cards (/dev/accel/accel0 and accel1):
# every collective against gloo, a killed rank, and torchrun
# --nproc-per-node 2 of examples/tp_gpt2.py (DTensor's tensor parallelism);
# each test starts two interpreters (~95 s per test under TCG, gloo over
# the guest's loopback), so Work semantics and the DTensor case run in
# plugin-sim only.
# Ends with
# "N passed, N failed[, N skipped]".
#
#   scripts/tests/plugin-vm.sh [PYTEST-ARGS...]
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${SPYRE_BUILD:-$top/build}

# --- inside the VM -----------------------------------------------------------
if [ "${1:-}" = --guest ]; then
	shift
	# the fault-injection tests use the driver's debugfs "fault" file
	mountpoint -q /sys/kernel/debug 2>/dev/null || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	cd "$top/torch_plugin/tests" || exit 1
	export SPYRE_BACKEND=drm PYTHONDONTWRITEBYTECODE=1 HOME=/tmp
	"$build/venv/bin/python" -m pytest -q -p no:cacheprovider --basetemp=/tmp/pytest --durations=30 \
		-k "not autoload and not no_card and not from_environment and not race_is_visible and not pre_norm and (not test_compile or gpt2 or uploaded_by_the_recipe) and not recompile_limit and (not test_distributed or match_gloo or killed or torchrun)" "$@" \
		test_device.py test_copy.py test_ops.py test_streams.py test_allocator.py \
		test_fallback.py test_errors.py test_models.py test_models_eager.py test_compile.py \
		test_trace.py test_profiler.py test_compile_cache.py test_distributed.py 2>&1
	echo "# plugin-vm: pytest exit $?"
	exit 0
fi

# --- on the host -------------------------------------------------------------
if ! "$top/scripts/build-plugin"; then
	echo "plugin-vm: building the plugin failed"
	echo "0 passed, 1 failed"
	exit 1
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# 280 s on an idle 2-core host; the limit is for a hang, so it leaves room
# for a host loaded several times over (over 900 s beside load ~14).
"$top/scripts/spyre-vm" run --cards 2 --timeout 2400 --card-opt pacing=on -- \
	"$top/scripts/tests/plugin-vm.sh" --guest "$@" 2>&1 | tee "$log"
vm_rc=${PIPESTATUS[0]}
rc=$(sed -nE 's/^# plugin-vm: pytest exit ([0-9]+)$/\1/p' "$log" | tail -1)
out=$("$top/scripts/tests/pytest-summary" "$log" "${rc:-1}")
echo "$out" | head -n -1
line=$(echo "$out" | tail -1)
if [ "$vm_rc" != 0 ]; then
	echo "FAIL: spyre-vm exited $vm_rc (its logs: spyre-vm names the run above)"
	p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
	line="$p passed, $((f + 1)) failed${line#*failed}"
fi
echo "$line"
[[ "$line" == *" 0 failed"* ]]
