/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Minimal client of QEMU's qtest protocol (text commands over a socket),
 * enough to poke PCI config space, MMIO, guest RAM and the virtual clock.
 */
#ifndef SPYRE_QTEST_H
#define SPYRE_QTEST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct qt {
	int fd;
	pid_t pid;
	char buf[65536];
	size_t len;
	char log[256];
};

/* Start QEMU with @args appended (q35, qtest accel, no defaults). */
struct qt *qt_start(const char *args);
void qt_quit(struct qt *q);
bool qt_alive(struct qt *q);

uint64_t qt_read(struct qt *q, unsigned int bits, uint64_t addr);
void qt_write(struct qt *q, unsigned int bits, uint64_t addr, uint64_t val);
uint32_t qt_inl(struct qt *q, uint16_t port);
void qt_outl(struct qt *q, uint16_t port, uint32_t val);
void qt_memread(struct qt *q, uint64_t addr, void *buf, size_t len);
void qt_memwrite(struct qt *q, uint64_t addr, const void *buf, size_t len);
uint64_t qt_clock_step(struct qt *q, uint64_t ns);
uint64_t qt_clock_get(struct qt *q);

/* PCI config space of bus 0 device @dev through ports 0xcf8/0xcfc. */
uint32_t pci_cfg_read(struct qt *q, unsigned int dev, unsigned int off, unsigned int size);
void pci_cfg_write(struct qt *q, unsigned int dev, unsigned int off, unsigned int size,
		   uint32_t val);

#endif /* SPYRE_QTEST_H */
