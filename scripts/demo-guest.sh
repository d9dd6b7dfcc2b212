#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The guest half of `make demo` (runs inside the VM; see scripts/demo). The
# device timeline traces go to $SPYRE_VM_RUN/demo (the writable run
# directory: the host tree is read-only here); the host draws them.
set -euo pipefail
build=${SPYRE_BUILD:-$(pwd)/build}
traces=${SPYRE_VM_RUN:-/tmp}/demo
mkdir -p "$traces"
say() { printf '\n== %s\n' "$*"; }

say "1. The card on the PCI bus (vendor 1234, device 5350):"
for d in /sys/bus/pci/devices/*; do
	if [ "$(cat "$d/vendor")" = 0x1234 ] && [ "$(cat "$d/device")" = 0x5350 ]; then
		echo "   $(basename "$d"): class $(cat "$d/class"), driver $(basename "$(readlink "$d/driver" 2>/dev/null || echo none)")"
	fi
done

say "2. The DRM accel driver exposes it as:"
ls -l /dev/accel/ 2>/dev/null | sed 's/^/   /' || echo "   (no /dev/accel: the driver did not bind)"

if [ -x "$build/libspyre/spyre-smi" ]; then
	say "3. spyre-smi, the status tool built on libspyre:"
	"$build/libspyre/spyre-smi" | sed 's/^/   /'
fi
if [ -x "$build/libspyre/examples/pipeline" ]; then
	say "4. A pipeline streaming chunks host -> card -> compute -> host on three"
	echo "   streams linked by events; the device timeline shows transfers"
	echo "   overlapping compute:"
	SPYRE_TRACE=$traces/pipeline.json "$build/libspyre/examples/pipeline" | sed 's/^/   /'
fi
if [ -x "$build/venv/bin/python" ]; then
	say "5. PyTorch on the card: a small GPT-2 (transformers, random weights) runs"
	echo "   eagerly and compiled (torch.compile(backend=\"spyre\"): one recipe per"
	echo "   forward), checked against the CPU with the CPU fallback forbidden;"
	echo "   one eager and one compiled forward are traced on the device timeline:"
	SPYRE_BACKEND=drm HOME=/tmp PYTHONDONTWRITEBYTECODE=1 \
		"$build/venv/bin/python" torch_plugin/examples/gpt_demo.py --trace "$traces"
fi
say "Done: the card, the driver, the runtime and PyTorch worked end to end."
