# SPDX-License-Identifier: MIT
#
# The Spyre stack's top-level build. Everything it makes lives in build/.
#
#   make          build everything (installs missing apt packages first)
#   make check    every test suite, two at a time (scripts/check -j1: one by one)
#   make check-multi-vm  torchrun across two VMs (not in make check)
#   make demo     boot the VM with a card and run the demo end to end
#
# The kernel module's own build file is Kbuild (kbuild prefers it over this
# Makefile when the tree is built with M=).

TOP      := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD    := $(TOP)/build
KVER      = $(shell cat $(BUILD)/kernel/version 2>/dev/null)
KDIR      = /usr/src/linux-headers-$(KVER)
QEMU     := $(BUILD)/qemu/qemu-system-x86_64

.PHONY: all deps qemu module initramfs kernel-tools libspyre selftests plugin check \
	check-host check-vm check-multi-vm check-debug debug-kernel demo bench checkpatch clean distclean \
	zoo-latest vllm check-vllm check-vllm-vm

all: deps qemu module initramfs libspyre selftests plugin

deps:
	@$(TOP)/scripts/setup-deps

kernel-tools: deps
	@$(TOP)/scripts/fetch-kernel-tools

qemu: deps
	@$(TOP)/scripts/build-qemu

# Out-of-tree module build. Kbuild writes objects next to the sources, so
# build from a tree of symlinks under build/module to keep the checkout clean.
module: deps
	@mkdir -p $(BUILD)/module
	@find $(BUILD)/module -type l -delete
	@cp -rs $(TOP)/Kbuild $(TOP)/driver $(TOP)/hw $(TOP)/uapi $(BUILD)/module/
	$(MAKE) -C $(KDIR) M=$(BUILD)/module modules

initramfs: deps
	@$(TOP)/scripts/mkinitramfs

libspyre: deps
	$(MAKE) -s -C $(TOP)/libspyre BUILD=$(BUILD)

# The project venv (build/venv: torch 2.13.0 CPU) with the PyTorch plugin.
plugin: libspyre
	@$(TOP)/scripts/build-plugin

# The model zoo against the newest transformers on PyPI (not in make check).
zoo-latest: plugin
	@$(TOP)/scripts/zoo-latest

# vLLM 0.32.0 (pure-Python build) and the spyre platform plugin in their own
# venv, build/vllm-venv (not in make all: ~13 min; Documentation/vllm.rst).
vllm: libspyre
	@$(TOP)/scripts/setup-vllm

# vLLM on the sim card (not in make check; Documentation/vllm.rst)
check-vllm: vllm
	@cd $(TOP)/vllm_spyre_plugin && SPYRE_BACKEND=sim $(BUILD)/vllm-venv/bin/python -m pytest -q \
		tests --ignore=tests/test_vm_serve.py

# vllm serve in the VM on /dev/accel (one VM boot; slow under TCG, see
# Documentation/vllm.rst)
check-vllm-vm: vllm module
	@cd $(TOP)/vllm_spyre_plugin && SPYRE_BACKEND=sim $(BUILD)/vllm-venv/bin/python -m pytest -q -s \
		tests/test_vm_serve.py

selftests: kernel-tools
	$(MAKE) -s -C $(TOP)/selftests/drivers/accel/spyre OUTPUT=$(BUILD)/selftests \
		KHDR_INCLUDES=-I$(TOP)/uapi

# Kernel style for everything the driver compiles: driver/, uapi/ and the
# hw/ headers it includes (hw/spyre_isa.h, the program format, is not).
checkpatch: kernel-tools
	perl $(BUILD)/linux-src/scripts/checkpatch.pl --no-tree --strict --terse \
		-f $$(git -C $(TOP) ls-files 'driver/*.[ch]' 'uapi/*.h' \
			'hw/spyre_hw.h' 'hw/spyre_desc.h')
	@# kernel-doc warnings of the uAPI (Documentation/ pulls it in) and the driver
	cd $(TOP) && ! perl $(BUILD)/linux-src/scripts/kernel-doc -none -Wall \
		$$(git ls-files 'driver/*.[ch]' 'uapi/*.h') 2>&1 | grep -v '^Warning: Sphinx' | grep .
	perl $(BUILD)/linux-src/scripts/checkpatch.pl --no-tree --strict --terse \
		--ignore PREFER_KERNEL_TYPES -f $$(git -C $(TOP) ls-files \
		'selftests/*spyre_fuzz.c' 'selftests/*spyre_stress.c' \
		'selftests/*spyre_hotplug.c' 'selftests/*spyre_peer_hotplug.c' \
		'selftests/*spyre_hotplug_util.[ch]' \
		'selftests/*spyre_state.[ch]')

check: all kernel-tools
	@$(TOP)/scripts/check

# The driver under a debugging kernel (KASAN, lockdep, kmemleak...): long;
# the kernel is built once (about an hour on 2 cores) and then reused.
debug-kernel: deps
	@$(TOP)/scripts/build-debug-kernel

check-debug: deps module initramfs selftests
	@$(TOP)/scripts/check-debug

check-host: kernel-tools plugin
	@$(TOP)/scripts/check --host

check-vm: all
	@$(TOP)/scripts/check --vm

# torch.distributed across two VMs joined by a private virtual network
# (scripts/spyre-vms): not part of make check (two VMs share the cores).
check-multi-vm: all
	@$(TOP)/scripts/check multi-vm

demo: all
	@$(TOP)/scripts/demo

clean:
	rm -rf $(BUILD)/module $(BUILD)/vm $(BUILD)/check

distclean:
	rm -rf $(BUILD)

# Benchmarks: the card model and libspyre's sim backend on the host, then
# the driver and libspyre in one VM boot. bench/report prints one table of
# figures (ratios measured within one run, counts, modelled device time) and
# writes build/bench/results.json; bench/compare OLD NEW shows the change.
bench: all
	$(MAKE) -s -C $(TOP)/qemu-device/tests BUILD=$(BUILD) bench-bins
	$(MAKE) -s -C $(TOP)/bench BUILD=$(BUILD)
	$(TOP)/bench/report
