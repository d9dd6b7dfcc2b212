// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Device-level tests of the Spyre card inside QEMU, without a guest kernel:
 * QEMU runs with the qtest accelerator and this program plays the guest
 * through the raw qtest protocol (PCI config cycles, MMIO, guest RAM, the
 * virtual clock). MSI-X messages are pointed at guest RAM so delivery can
 * be observed as a memory write.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spyre_desc.h"
#include "qtest.h"

/* --- framework ------------------------------------------------------------ */
static int failed_checks, passed, failed;
#define CHECK(c) do {							\
	if (!(c)) {							\
		failed_checks++;					\
		printf("  FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);	\
	}								\
} while (0)
#define CHECK_EQ(a, b) do { unsigned long long _a = (a), _b = (b); if (_a != _b) { \
	failed_checks++; printf("  FAIL %s:%d: %s == %s (0x%llx != 0x%llx)\n", \
				__FILE__, __LINE__, #a, #b, _a, _b); } } while (0)

static void run(const char *name, void (*fn)(void))
{
	failed_checks = 0;
	fn();
	printf("%s %s\n", failed_checks ? "not ok" : "ok", name);
	if (failed_checks)
		failed++;
	else
		passed++;
}

/* --- guest layout ----------------------------------------------------------- */
#define MSI	0x7000ull	/* MSI-X messages land here: 4 bytes per vector */
#define RING	0x100000ull
#define WB	0x110000ull
#define REC	0x120000ull
#define SG	0x130000ull
#define DATA	0x200000ull
#define DATA2	0x300000ull
#define MSI_DATA 0x5000u

struct card {
	struct qt *q;
	unsigned int dev;
	uint64_t bar0, bar2;
	unsigned int msix, pcie, nvec;
	uint32_t tail[8];
};

static unsigned int find_cap(struct qt *q, unsigned int dev, unsigned int id)
{
	unsigned int p = pci_cfg_read(q, dev, 0x34, 1), n = 0;

	while (p && n++ < 48) {
		if (pci_cfg_read(q, dev, p, 1) == id)
			return p;
		p = pci_cfg_read(q, dev, p + 1, 1);
	}
	return 0;
}

static uint32_t rd(struct card *c, uint32_t off)
{
	return (uint32_t)qt_read(c->q, 32, c->bar0 + off);
}

static void wr(struct card *c, uint32_t off, uint32_t v)
{
	qt_write(c->q, 32, c->bar0 + off, v);
}

/* Assign BARs, enable memory + bus mastering, point MSI-X at guest RAM. */
static void card_setup(struct card *c, struct qt *q, unsigned int dev, uint64_t bar0,
		       uint64_t bar2)
{
	unsigned int i;

	c->q = q;
	c->dev = dev;
	c->bar0 = bar0;
	c->bar2 = bar2;
	pci_cfg_write(q, dev, 0x10, 4, (uint32_t)bar0);
	pci_cfg_write(q, dev, 0x14, 4, (uint32_t)(bar0 >> 32));
	pci_cfg_write(q, dev, 0x18, 4, (uint32_t)bar2);
	pci_cfg_write(q, dev, 0x1c, 4, (uint32_t)(bar2 >> 32));
	pci_cfg_write(q, dev, 0x04, 2, 0x6);
	c->msix = find_cap(q, dev, 0x11);
	c->pcie = find_cap(q, dev, 0x10);
	c->nvec = (pci_cfg_read(q, dev, c->msix + 2, 2) & 0x7ff) + 1;
	pci_cfg_write(q, dev, c->msix + 2, 2, 0x8000);
	for (i = 0; i < c->nvec; i++) {
		uint64_t e = bar0 + SPYRE_MSIX_TABLE_OFFSET + 16 * i;

		qt_write(q, 32, e, (uint32_t)(MSI + 4 * i + 0x1000 * (dev & 7)));
		qt_write(q, 32, e + 4, 0);
		qt_write(q, 32, e + 8, MSI_DATA + i);
		qt_write(q, 32, e + 12, 0);
	}
	memset(c->tail, 0, sizeof(c->tail));
}

static uint32_t msi_seen(struct card *c, unsigned int vec)
{
	return (uint32_t)qt_read(c->q, 32, MSI + 4 * vec + 0x1000 * (c->dev & 7));
}

static uint64_t ring_mem(unsigned int n)
{
	return RING + 0x2000 * n;
}

static void ring_setup(struct card *c, unsigned int n)
{
	static const uint8_t zero[64];
	uint64_t base = ring_mem(n), wb = WB + 64 * n;

	wr(c, SPYRE_RING_REG(n, SPYRE_RING_CTRL), SPYRE_RING_CTRL_RESET);
	wr(c, SPYRE_RING_REG(n, SPYRE_RING_BASE_LO), (uint32_t)base);
	wr(c, SPYRE_RING_REG(n, SPYRE_RING_BASE_HI), 0);
	wr(c, SPYRE_RING_REG(n, SPYRE_RING_SIZE_LOG2), 6);
	wr(c, SPYRE_RING_REG(n, SPYRE_RING_WB_LO), (uint32_t)wb);
	wr(c, SPYRE_RING_REG(n, SPYRE_RING_WB_HI), 0);
	wr(c, SPYRE_RING_REG(n, SPYRE_RING_CTRL), SPYRE_RING_CTRL_ENABLE);
	qt_memwrite(c->q, wb, zero, sizeof(zero));
	c->tail[n] = 0;
}

static void push(struct card *c, unsigned int n, const void *d)
{
	qt_memwrite(c->q, ring_mem(n) + 64 * (c->tail[n] % 64), d, 64);
	c->tail[n]++;
}

static void doorbell(struct card *c, unsigned int n)
{
	wr(c, SPYRE_RING_REG(n, SPYRE_RING_TAIL), c->tail[n]);
}

static void dma_desc(void *d, unsigned int dir, uint64_t len, uint64_t dev, uint64_t sg)
{
	spyre_desc_dma_host(d, dir, len, dev, sg, 1, 0);
}

static void fence_desc(void *d, uint64_t seq, unsigned int r)
{
	spyre_desc_fence(d, SPYRE_DESC_F_IRQ);
	spyre_desc_fence_seal(d, seq, REC + 64 * r);
}

/* One job on ring @n: 4 KiB from scatter list 0 to device address @dev, a FENCE. */
static void h2d_job(struct card *c, unsigned int n, uint64_t dev, uint64_t seq, unsigned int r)
{
	uint8_t d[64];

	dma_desc(d, SPYRE_DMA_H2D, 4096, dev, SG);
	push(c, n, d);
	fence_desc(d, seq, r);
	push(c, n, d);
	doorbell(c, n);
}

static void sg_one(struct card *c, unsigned int i, uint64_t addr, uint64_t len)
{
	struct spyre_hw_sg e = { addr, len };

	qt_memwrite(c->q, SG + 16 * i, &e, 16);
}

static uint64_t wb_seq(struct card *c, unsigned int n)
{
	return qt_read(c->q, 64, WB + 64 * n);
}

/* The worker thread runs asynchronously: poll (real time) for the seqno. */
static bool wait_seq(struct card *c, unsigned int n, uint64_t seq, int ms)
{
	while (ms-- > 0) {
		if (wb_seq(c, n) == seq)
			return true;
		usleep(1000);
	}
	return wb_seq(c, n) == seq;
}

/*
 * The card raises an MSI-X vector from a bottom half in QEMU's main loop,
 * after its worker thread has written the completion: a test that has seen
 * the seqno polls for the interrupt (and for register state the worker
 * changes) rather than sleeping a fixed time, which a loaded host outlasts.
 */
static bool wait_msi(struct card *c, unsigned int vec, uint32_t data, int ms)
{
	while (ms-- > 0) {
		if (msi_seen(c, vec) == data)
			return true;
		usleep(1000);
	}
	return msi_seen(c, vec) == data;
}

static bool wait_reg(struct card *c, uint32_t reg, uint32_t mask, uint32_t want, int ms)
{
	while (ms-- > 0) {
		if ((rd(c, reg) & mask) == want)
			return true;
		usleep(1000);
	}
	return (rd(c, reg) & mask) == want;
}

static struct spyre_hw_completion record(struct card *c, unsigned int r)
{
	struct spyre_hw_completion x;

	qt_memread(c->q, REC + 64 * r, &x, sizeof(x));
	return x;
}

static uint64_t dev_time(struct card *c)
{
	uint64_t lo = rd(c, SPYRE_REG_TIME_LO);

	return lo | (uint64_t)rd(c, SPYRE_REG_TIME_HI) << 32;
}

#define BAR0_A	0xe0000000ull
#define BAR0_B	0xe0010000ull
#define BAR2_A	0x200000000ull
#define BAR2_B	0x240000000ull

/* --- tests ------------------------------------------------------------------ */
static void t_pci_identity_two_cards(void)
{
	struct qt *q = qt_start("-device spyre,addr=4,mem=64M -device spyre,addr=5,rings=2,mem=1G");
	unsigned int dev, msix, pcie;
	uint32_t v;

	for (dev = 4; dev <= 5; dev++) {
		CHECK_EQ(pci_cfg_read(q, dev, 0, 2), SPYRE_PCI_VENDOR_ID);
		CHECK_EQ(pci_cfg_read(q, dev, 2, 2), SPYRE_PCI_DEVICE_ID);
		CHECK_EQ(pci_cfg_read(q, dev, 8, 4) >> 8, SPYRE_PCI_CLASS);
		CHECK_EQ(pci_cfg_read(q, dev, 8, 1), SPYRE_PCI_REVISION);
		CHECK_EQ(pci_cfg_read(q, dev, 0x3d, 1), 0);	/* no INTx: MSI-X only */
		/* BAR0: 64-bit memory, 64 KiB */
		CHECK_EQ(pci_cfg_read(q, dev, 0x10, 4) & 0xf, 0x4);
		pci_cfg_write(q, dev, 0x10, 4, 0xffffffff);
		CHECK_EQ(pci_cfg_read(q, dev, 0x10, 4) & ~0xfu, 0xffff0000u);
		/* BAR2: 64-bit prefetchable; size = device memory */
		CHECK_EQ(pci_cfg_read(q, dev, 0x18, 4) & 0xf, 0xc);
		pci_cfg_write(q, dev, 0x18, 4, 0xffffffff);
		pci_cfg_write(q, dev, 0x1c, 4, 0xffffffff);
		v = pci_cfg_read(q, dev, 0x18, 4) & ~0xfu;
		CHECK_EQ(v, dev == 4 ? 0xfc000000u : 0xc0000000u);
		CHECK_EQ(pci_cfg_read(q, dev, 0x1c, 4), 0xffffffffu);
		pcie = find_cap(q, dev, 0x10);
		msix = find_cap(q, dev, 0x11);
		CHECK(pcie != 0);
		CHECK(msix != 0);
		CHECK(pci_cfg_read(q, dev, pcie + 4, 4) & (1u << 28));	/* FLR capable */
		/* one vector per ring (8 by default) plus the error vector */
		CHECK_EQ((pci_cfg_read(q, dev, msix + 2, 2) & 0x7ff) + 1, dev == 4 ? 9 : 3);
		CHECK_EQ(pci_cfg_read(q, dev, msix + 4, 4), SPYRE_MSIX_TABLE_OFFSET | 0);
		CHECK_EQ(pci_cfg_read(q, dev, msix + 8, 4), SPYRE_MSIX_PBA_OFFSET | 0);
	}
	qt_quit(q);
}

static void t_registers_and_device_time(void)
{
	struct qt *q = qt_start("-device spyre,addr=4,mem=64M,cores=16,rings=3");
	struct card c;
	uint64_t t0, t1;

	card_setup(&c, q, 4, BAR0_A, BAR2_A);
	CHECK_EQ(rd(&c, SPYRE_REG_ID), SPYRE_ID_MAGIC);
	CHECK_EQ(rd(&c, SPYRE_REG_VERSION), SPYRE_HW_VERSION_CURRENT);
	CHECK_EQ(rd(&c, SPYRE_REG_NUM_CORES), 16);
	CHECK_EQ(rd(&c, SPYRE_REG_NUM_RINGS), 3);
	CHECK_EQ(rd(&c, SPYRE_REG_MEM_SIZE_LO), 64u << 20);
	CHECK_EQ(rd(&c, SPYRE_REG_MEM_APERTURE_LO), 64u << 20);
	CHECK_EQ(rd(&c, SPYRE_REG_IRQ_ERR_VECTOR), 3);
	CHECK_EQ(rd(&c, SPYRE_REG_STATUS), SPYRE_STATUS_READY);
	CHECK_EQ(rd(&c, SPYRE_RING_REG(2, SPYRE_RING_IRQ_VECTOR)), 2);
	wr(&c, SPYRE_REG_SCRATCH, 0xa5a5f00d);
	CHECK_EQ(rd(&c, SPYRE_REG_SCRATCH), 0xa5a5f00d);
	/* device time is the virtual clock: exact under clock_step */
	t0 = dev_time(&c);
	qt_clock_step(q, 12345);
	t1 = dev_time(&c);
	CHECK_EQ(t1 - t0, 12345);
	qt_clock_step(q, 5000000000ull);
	CHECK_EQ(dev_time(&c) - t1, 5000000000ull);
	/* device memory through BAR2 */
	qt_write(q, 32, BAR2_A + 0x100, 0x12345678);
	CHECK_EQ(qt_read(q, 32, BAR2_A + 0x100), 0x12345678);
	qt_quit(q);
}

static void t_ring_round_trip_dma_msix(void)
{
	struct qt *q = qt_start("-device spyre,addr=4,mem=64M");
	static uint8_t pat[8192], back[8192];
	struct spyre_hw_completion r;
	struct card c;
	uint8_t d[64];
	uint64_t t_db;
	unsigned int i;

	card_setup(&c, q, 4, BAR0_A, BAR2_A);
	for (i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i * 7 + 3);
	qt_memwrite(q, DATA, pat, sizeof(pat));
	sg_one(&c, 0, DATA, sizeof(pat));
	sg_one(&c, 1, DATA2, sizeof(pat));
	ring_setup(&c, 1);
	dma_desc(d, SPYRE_DMA_H2D, 8192, 0x1000, SG);
	push(&c, 1, d);
	dma_desc(d, SPYRE_DMA_D2H, 8192, 0x1000, SG + 16);
	push(&c, 1, d);
	fence_desc(d, 42, 0);
	push(&c, 1, d);
	qt_clock_step(q, 777);
	t_db = dev_time(&c);
	doorbell(&c, 1);
	CHECK(wait_seq(&c, 1, 42, 5000));
	qt_memread(q, DATA2, back, sizeof(back));
	CHECK(!memcmp(back, pat, sizeof(pat)));
	qt_memread(q, BAR2_A + 0x1000, back, 64);	/* device memory via BAR2 */
	CHECK(!memcmp(back, pat, 64));
	r = record(&c, 0);
	CHECK_EQ(r.seqno, 42);
	CHECK_EQ(r.status, SPYRE_CMD_OK);
	CHECK_EQ(r.start_ns, t_db);
	CHECK_EQ(r.end_ns, t_db + 2 * (1000 + 164));	/* 8 KiB at 50 GB/s = 164 ns */
	CHECK_EQ(qt_read(q, 32, WB + 64 + 8), 3);	/* write-back head */
	CHECK_EQ(rd(&c, SPYRE_RING_REG(1, SPYRE_RING_HEAD)), 3);
	CHECK(wait_msi(&c, 1, MSI_DATA + 1, 5000));	/* the ring's vector */
	CHECK_EQ(msi_seen(&c, 0), 0);
	qt_quit(q);
}

static void t_pacing_follows_clock_step(void)
{
	struct qt *q = qt_start("-device spyre,addr=4,mem=64M,pacing=on");
	struct card c;
	uint8_t d[64];
	uint64_t t_db;

	card_setup(&c, q, 4, BAR0_A, BAR2_A);
	sg_one(&c, 0, DATA, 1 << 20);
	ring_setup(&c, 0);
	dma_desc(d, SPYRE_DMA_H2D, 1 << 20, 0, SG);
	push(&c, 0, d);
	fence_desc(d, 5, 0);
	push(&c, 0, d);
	t_db = dev_time(&c);
	doorbell(&c, 0);
	CHECK(!wait_seq(&c, 0, 5, 300));		/* virtual time stands still */
	qt_clock_step(q, 1000 + 20972 - 1);
	CHECK(!wait_seq(&c, 0, 5, 200));
	CHECK_EQ(msi_seen(&c, 0), 0);
	qt_clock_step(q, 1);
	CHECK(wait_seq(&c, 0, 5, 5000));
	CHECK_EQ(record(&c, 0).end_ns, t_db + 1000 + 20972);
	CHECK(wait_msi(&c, 0, MSI_DATA, 5000));
	qt_quit(q);
}

static void t_bad_dma_is_an_error_record(void)
{
	struct qt *q = qt_start("-device spyre,addr=4,mem=64M");
	struct card c;
	uint8_t d[64];

	card_setup(&c, q, 4, BAR0_A, BAR2_A);
	ring_setup(&c, 0);
	sg_one(&c, 0, 0xfd00000000ull, 4096);		/* nothing there */
	sg_one(&c, 1, BAR0_A, 4096);			/* our own registers: refused */
	sg_one(&c, 2, DATA, 4096);
	dma_desc(d, SPYRE_DMA_H2D, 4096, 0, SG);
	push(&c, 0, d);
	fence_desc(d, 1, 0);
	push(&c, 0, d);
	dma_desc(d, SPYRE_DMA_D2H, 4096, 0, SG + 16);
	push(&c, 0, d);
	fence_desc(d, 2, 1);
	push(&c, 0, d);
	dma_desc(d, SPYRE_DMA_H2D, 4096, 64u << 20, SG + 32);	/* past device memory */
	push(&c, 0, d);
	fence_desc(d, 3, 2);
	push(&c, 0, d);
	doorbell(&c, 0);
	CHECK(wait_seq(&c, 0, 3, 5000));
	CHECK_EQ(record(&c, 0).status, SPYRE_CMD_ERR_DMA);
	CHECK_EQ(record(&c, 1).status, SPYRE_CMD_ERR_DMA);
	CHECK_EQ(record(&c, 2).status, SPYRE_CMD_ERR_BOUNDS);
	CHECK_EQ(record(&c, 2).error_index, 4);
	CHECK_EQ(rd(&c, SPYRE_REG_ID), SPYRE_ID_MAGIC);
	/* without bus mastering, even the ring fetch fails: a ring error */
	ring_setup(&c, 2);
	pci_cfg_write(q, 4, 0x04, 2, 0x2);
	push(&c, 2, d);
	doorbell(&c, 2);
	CHECK(wait_reg(&c, SPYRE_RING_REG(2, SPYRE_RING_ERROR), ~0u, SPYRE_RING_ERR_FETCH, 5000));
	CHECK(rd(&c, SPYRE_REG_ERR_STATUS) & SPYRE_ERR_STATUS_RING);
	pci_cfg_write(q, 4, 0x04, 2, 0x6);
	CHECK(qt_alive(q));
	qt_quit(q);
}

static void t_error_vector_and_hang_recovery(void)
{
	struct qt *q = qt_start("-device spyre,addr=4,mem=64M");
	struct card c;
	uint8_t d[64];

	card_setup(&c, q, 4, BAR0_A, BAR2_A);
	ring_setup(&c, 1);
	wr(&c, SPYRE_REG_FAULT, SPYRE_FAULT_HANG | 1 << SPYRE_FAULT_RING_SHIFT);
	memset(d, 0, 64);
	push(&c, 1, d);
	fence_desc(d, 9, 0);
	push(&c, 1, d);
	doorbell(&c, 1);
	CHECK(!wait_seq(&c, 1, 9, 300));
	CHECK(!(rd(&c, SPYRE_RING_REG(1, SPYRE_RING_STATUS)) & SPYRE_RING_STATUS_IDLE));
	ring_setup(&c, 1);				/* RING_CTRL_RESET + re-enable */
	push(&c, 1, d);
	doorbell(&c, 1);
	CHECK(wait_seq(&c, 1, 9, 5000));
	/* an uncorrectable memory error raises the error vector (num_rings) */
	wr(&c, SPYRE_REG_FAULT, SPYRE_FAULT_MEM_UE | 1 << SPYRE_FAULT_RING_SHIFT);
	memset(d, 0, 64);
	push(&c, 1, d);					/* a NOP hits the error */
	doorbell(&c, 1);
	CHECK(wait_reg(&c, SPYRE_REG_STATUS, SPYRE_STATUS_FATAL, SPYRE_STATUS_FATAL, 5000));
	CHECK(wait_msi(&c, c.nvec - 1, MSI_DATA + c.nvec - 1, 5000));
	wr(&c, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	CHECK_EQ(rd(&c, SPYRE_REG_STATUS), SPYRE_STATUS_READY);
	qt_quit(q);
}

static void t_reset_register_and_flr(void)
{
	struct qt *q = qt_start("-device spyre,addr=4,mem=64M");
	struct card c;

	card_setup(&c, q, 4, BAR0_A, BAR2_A);
	wr(&c, SPYRE_REG_SCRATCH, 5);
	ring_setup(&c, 0);
	wr(&c, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	CHECK_EQ(rd(&c, SPYRE_REG_SCRATCH), 0);
	CHECK_EQ(rd(&c, SPYRE_RING_REG(0, SPYRE_RING_STATUS)), SPYRE_RING_STATUS_IDLE);
	CHECK_EQ(rd(&c, SPYRE_REG_STATUS), SPYRE_STATUS_READY);
	wr(&c, SPYRE_REG_SCRATCH, 7);
	ring_setup(&c, 0);
	qt_clock_step(q, 1000000);
	/* function level reset through the PCIe device control register */
	pci_cfg_write(q, 4, c.pcie + 8, 2, pci_cfg_read(q, 4, c.pcie + 8, 2) | 0x8000);
	card_setup(&c, q, 4, BAR0_A, BAR2_A);		/* FLR cleared the BARs */
	CHECK_EQ(rd(&c, SPYRE_REG_SCRATCH), 0);
	CHECK_EQ(rd(&c, SPYRE_RING_REG(0, SPYRE_RING_STATUS)), SPYRE_RING_STATUS_IDLE);
	CHECK(dev_time(&c) < 1000000);			/* device time restarted */
	qt_quit(q);
}

static void t_garbage_register_writes_keep_qemu_alive(void)
{
	struct qt *q = qt_start("-device spyre,addr=4,mem=64M");
	struct card c;
	uint32_t off, s = 1;

	card_setup(&c, q, 4, BAR0_A, BAR2_A);
	for (off = 0; off < 0x8000; off += 4) {
		s = s * 1103515245u + 12345u;
		if (off == SPYRE_REG_FAULT)
			continue;
		wr(&c, off, s);
	}
	for (off = 0; off < 0x8000; off += 0x40)
		rd(&c, off);
	qt_clock_step(q, 1000000);
	CHECK(qt_alive(q));
	wr(&c, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	CHECK_EQ(rd(&c, SPYRE_REG_ID), SPYRE_ID_MAGIC);
	CHECK_EQ(rd(&c, SPYRE_REG_STATUS), SPYRE_STATUS_READY);
	qt_quit(q);
}

/* Resets racing with big transfers on every ring: quiesce, no crash, no hang. */
static void t_resets_race_running_work(void)
{
	struct qt *q = qt_start("-device spyre,addr=4,mem=256M");
	struct card c;
	uint8_t d[64];
	unsigned int round, n;

	card_setup(&c, q, 4, BAR0_A, BAR2_A);
	sg_one(&c, 0, DATA, 64u << 20);			/* guest RAM 2 MiB .. 66 MiB */
	for (round = 0; round < 12; round++) {
		for (n = 0; n < 4; n++) {
			ring_setup(&c, n);
			dma_desc(d, n % 2 ? SPYRE_DMA_D2H : SPYRE_DMA_H2D, 64u << 20,
				 (uint64_t)n << 26, SG);
			push(&c, n, d);
			d[0] = SPYRE_OP_DMA;
			((struct spyre_hw_dma *)d)->dir = SPYRE_DMA_D2D;
			((struct spyre_hw_dma *)d)->dev_src = 0;
			((struct spyre_hw_dma *)d)->sg_addr = 0;
			((struct spyre_hw_dma *)d)->sg_count = 0;
			push(&c, n, d);
			fence_desc(d, round + 1, n);
			push(&c, n, d);
			doorbell(&c, n);
		}
		usleep(1000 * (round % 4));
		if (round % 3 == 2)
			wr(&c, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
		else
			wr(&c, SPYRE_RING_REG(round % 4, SPYRE_RING_CTRL), SPYRE_RING_CTRL_RESET);
	}
	CHECK(qt_alive(q));
	wr(&c, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	CHECK_EQ(rd(&c, SPYRE_REG_STATUS), SPYRE_STATUS_READY);
	/* and it still works */
	ring_setup(&c, 0);
	sg_one(&c, 0, DATA, 4096);
	h2d_job(&c, 0, 0, 77, 0);
	CHECK(wait_seq(&c, 0, 77, 5000));
	CHECK_EQ(record(&c, 0).status, SPYRE_CMD_OK);
	qt_quit(q);
}

/* True once QEMU's log (its stderr: -d and the trace log backend) has @s. */
static bool log_has(struct qt *q, const char *s, int ms)
{
	static char buf[1 << 20];
	size_t n;
	FILE *f;

	for (; ms >= 0; ms -= 10) {
		f = fopen(q->log, "r");
		n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = 0;
		if (strstr(buf, s))
			return true;
		usleep(10000);
	}
	return false;
}

/* Trace points (-trace spyre_*) and guest errors (-d guest_errors) reach the log. */
static void t_trace_points_and_guest_errors(void)
{
	struct qt *q = qt_start("-device spyre,addr=4,mem=64M -d guest_errors "
				"-trace spyre_doorbell -trace spyre_desc -trace spyre_dma "
				"-trace spyre_fence -trace spyre_irq_notify");
	struct card c;

	card_setup(&c, q, 4, BAR0_A, BAR2_A);
	sg_one(&c, 0, DATA, 4096);
	ring_setup(&c, 2);
	h2d_job(&c, 2, 0, 9, 0);
	CHECK(wait_seq(&c, 2, 9, 5000));
	CHECK(log_has(q, "spyre_doorbell ring 2 tail 2", 2000));
	CHECK(log_has(q, "spyre_desc ring 2 index 0 opcode 1", 2000));	/* the DMA */
	CHECK(log_has(q, "spyre_dma addr 0x200000 len 4096 write 0", 2000));
	CHECK(log_has(q, "spyre_fence ring 2 seqno 9 status 0", 2000));
	CHECK(log_has(q, "spyre_irq_notify vector 2", 2000));
	/* what the guest does wrong is logged, not only put in ERR_STATUS */
	wr(&c, SPYRE_REG_ID, 1);
	CHECK(rd(&c, SPYRE_REG_ERR_STATUS) & SPYRE_ERR_STATUS_BAD_ACCESS);
	CHECK(log_has(q, "spyre: bad register access at 0x0", 2000));
	h2d_job(&c, 2, 64u << 20, 10, 1);	/* past device memory */
	CHECK(wait_seq(&c, 2, 10, 5000));
	CHECK_EQ(record(&c, 1).status, SPYRE_CMD_ERR_BOUNDS);
	CHECK(log_has(q, "spyre: ring 2: command at index 2 failed: outside device memory", 2000));
	qt_quit(q);
}

/* Write a page-table entry into device memory through BAR2, as a driver does. */
static void pte_write(struct card *c, uint64_t table, unsigned int idx, uint64_t e)
{
	qt_write(c->q, 64, c->bar2 + table + 8ull * idx, e);
}

/*
 * The card MMU (1.10): a ring on context 1 copies a host page mapped as a
 * SYS page into a device page, its record written through the context;
 * then a DMA to an unmapped address faults: record, fault registers, error
 * vector, stopped context, a guest-error log line, QEMU alive.
 */
static void t_mmu_translates_and_faults(void)
{
	struct qt *q = qt_start("-device spyre,addr=4,mem=64M -d guest_errors");
	const uint64_t root = 0x100000, l2 = 0x101000, l1 = 0x102000, l0 = 0x103000;
	const uint64_t va_dev = 0x40000000, va_host = 0x40001000, va_rec = 0x40002000;
	struct spyre_hw_completion r;
	struct card c;
	uint8_t d[64], buf[4096], got[4096];
	unsigned int i;

	card_setup(&c, q, 4, BAR0_A, BAR2_A);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	qt_memwrite(q, DATA, buf, sizeof(buf));
	/* VA 1 GiB: root[0] -> l2, l2[1] -> l1, l1[0] -> l0, l0[0..2] pages */
	pte_write(&c, root, 0, l2 | SPYRE_PTE_VALID);
	pte_write(&c, l2, 1, l1 | SPYRE_PTE_VALID);
	pte_write(&c, l1, 0, l0 | SPYRE_PTE_VALID);
	pte_write(&c, l0, 0, 0x200000 | SPYRE_PTE_VALID | SPYRE_PTE_WRITE);
	pte_write(&c, l0, 1, DATA | SPYRE_PTE_VALID | SPYRE_PTE_SYS);
	pte_write(&c, l0, 2, REC | SPYRE_PTE_VALID | SPYRE_PTE_SYS | SPYRE_PTE_WRITE);
	wr(&c, SPYRE_REG_MMU_CTX_SELECT, 1);
	wr(&c, SPYRE_REG_MMU_CTX_ROOT_LO, (uint32_t)root | SPYRE_MMU_ROOT_VALID);
	wr(&c, SPYRE_REG_MMU_CTX_ROOT_HI, 0);
	CHECK_EQ(rd(&c, SPYRE_REG_MMU_CTX_STATUS), SPYRE_MMU_CTX_ROOT_SET);
	CHECK_EQ(rd(&c, SPYRE_REG_MMU_NUM_CTX), SPYRE_MMU_NUM_CTX);
	wr(&c, SPYRE_RING_REG(0, SPYRE_RING_CTX), 1);
	ring_setup(&c, 0);
	CHECK_EQ(rd(&c, SPYRE_RING_REG(0, SPYRE_RING_CTX)), 1);
	spyre_desc_dma_host((union spyre_hw_desc *)d, SPYRE_DMA_H2D, 4096, va_dev, va_host, 0, 0);
	push(&c, 0, d);
	spyre_desc_fence((union spyre_hw_desc *)d, SPYRE_DESC_F_IRQ);
	spyre_desc_fence_seal((union spyre_hw_desc *)d, 1, va_rec);
	push(&c, 0, d);
	doorbell(&c, 0);
	CHECK(wait_seq(&c, 0, 1, 5000));
	r = record(&c, 0);
	CHECK_EQ(r.seqno, 1);
	CHECK_EQ(r.status, SPYRE_CMD_OK);
	qt_memread(q, BAR2_A + 0x200000, got, sizeof(got));
	CHECK(!memcmp(got, buf, sizeof(buf)));
	/* one walk: its line fill (1.16) brought the other two pages' entries */
	CHECK_EQ(rd(&c, SPYRE_REG_MMU_TLB_MISSES), 1);

	/* a DMA to an unmapped page */
	spyre_desc_dma_fill((union spyre_hw_desc *)d, 64, va_dev + 0x3000, 0);
	push(&c, 0, d);
	spyre_desc_fence((union spyre_hw_desc *)d, 0);
	spyre_desc_fence_seal((union spyre_hw_desc *)d, 2, va_rec + 64);
	push(&c, 0, d);
	doorbell(&c, 0);
	CHECK(wait_seq(&c, 0, 2, 5000));
	r = record(&c, 1);
	CHECK_EQ(r.status, SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(r.fault_space, SPYRE_FAULT_SPACE_VA_WRITE);
	CHECK_EQ(r.fault_addr, va_dev + 0x3000);
	CHECK(wait_msi(&c, c.nvec - 1, MSI_DATA + c.nvec - 1, 5000));
	CHECK_EQ(rd(&c, SPYRE_REG_MMU_FAULT_INFO),
		 SPYRE_MMU_FAULT_VALID | 1 << 8 | SPYRE_MMU_FAULT_NOT_PRESENT << 4 |
		 SPYRE_MMU_ACCESS_WRITE);
	CHECK_EQ(rd(&c, SPYRE_REG_MMU_FAULT_ADDR_LO), (uint32_t)(va_dev + 0x3000));
	CHECK(rd(&c, SPYRE_REG_ERR_STATUS) & SPYRE_ERR_STATUS_MMU);
	CHECK(rd(&c, SPYRE_RING_REG(0, SPYRE_RING_STATUS)) & SPYRE_RING_STATUS_CTX_FAULT);
	CHECK(log_has(q, "spyre: ring 0: translation fault in MMU context 1", 2000));
	wr(&c, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_RESUME);
	CHECK_EQ(rd(&c, SPYRE_REG_MMU_CTX_STATUS), SPYRE_MMU_CTX_ROOT_SET);
	CHECK(qt_alive(q));
	qt_quit(q);
}

/*
 * A user-mode queue (1.10): ring 1 lives in context 2's address space (its
 * descriptors in guest RAM mapped SYS, its write-back in device memory)
 * and is rung through its own doorbell page in BAR4, whose other offsets
 * and other pages do nothing.
 */
static void t_mmu_user_queue_doorbell_page(void)
{
	struct qt *q = qt_start("-device spyre,addr=4,mem=64M");
	const uint64_t root = 0x100000, l2 = 0x101000, l1 = 0x102000, l0 = 0x103000;
	const uint64_t va_ring = 0x40000000, va_wb = 0x40001000, va_dev = 0x40002000;
	const uint64_t va_rec = 0x40003000, bar4 = 0xe0100000ull;
	uint64_t seq = 0;
	struct card c;
	uint8_t d[64];

	card_setup(&c, q, 4, BAR0_A, BAR2_A);
	pci_cfg_write(q, 4, 0x20, 4, (uint32_t)bar4);
	pci_cfg_write(q, 4, 0x24, 4, 0);
	pte_write(&c, root, 0, l2 | SPYRE_PTE_VALID);
	pte_write(&c, l2, 1, l1 | SPYRE_PTE_VALID);
	pte_write(&c, l1, 0, l0 | SPYRE_PTE_VALID);
	pte_write(&c, l0, 0, ring_mem(1) | SPYRE_PTE_VALID | SPYRE_PTE_SYS);
	pte_write(&c, l0, 1, 0x200000 | SPYRE_PTE_VALID | SPYRE_PTE_WRITE);
	pte_write(&c, l0, 2, 0x201000 | SPYRE_PTE_VALID | SPYRE_PTE_WRITE);
	pte_write(&c, l0, 3, REC | SPYRE_PTE_VALID | SPYRE_PTE_SYS | SPYRE_PTE_WRITE);
	pte_write(&c, l0, 4, DATA2 | SPYRE_PTE_VALID | SPYRE_PTE_SYS);	/* a counter */
	wr(&c, SPYRE_REG_MMU_CTX_SELECT, 2);
	wr(&c, SPYRE_REG_MMU_CTX_ROOT_LO, (uint32_t)root | SPYRE_MMU_ROOT_VALID);
	wr(&c, SPYRE_REG_MMU_CTX_ROOT_HI, 0);
	wr(&c, SPYRE_RING_REG(1, SPYRE_RING_CTX), 2 | SPYRE_RING_CTX_VA);
	wr(&c, SPYRE_RING_REG(1, SPYRE_RING_BASE_LO), (uint32_t)va_ring);
	wr(&c, SPYRE_RING_REG(1, SPYRE_RING_BASE_HI), 0);
	wr(&c, SPYRE_RING_REG(1, SPYRE_RING_SIZE_LOG2), 6);
	wr(&c, SPYRE_RING_REG(1, SPYRE_RING_WB_LO), (uint32_t)va_wb);
	wr(&c, SPYRE_RING_REG(1, SPYRE_RING_WB_HI), 0);
	wr(&c, SPYRE_RING_REG(1, SPYRE_RING_CTRL), SPYRE_RING_CTRL_ENABLE);
	CHECK_EQ(rd(&c, SPYRE_RING_REG(1, SPYRE_RING_STATUS)),
		 SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_IDLE);
	spyre_desc_dma_fill((union spyre_hw_desc *)d, 64, va_dev, 0x77777777);
	push(&c, 1, d);
	spyre_desc_fence((union spyre_hw_desc *)d, SPYRE_DESC_F_IRQ);
	spyre_desc_fence_seal((union spyre_hw_desc *)d, 5, va_rec);
	push(&c, 1, d);
	/* another offset in the page does nothing */
	qt_write(q, 32, bar4 + SPYRE_DOORBELL_STRIDE + 4, c.tail[1]);
	CHECK_EQ(rd(&c, SPYRE_RING_REG(1, SPYRE_RING_TAIL)), 0);
	CHECK_EQ(rd(&c, SPYRE_REG_ERR_STATUS), 0);
	/* page 0 is ring 0's tail: disabled, so a bad access as through BAR0 */
	qt_write(q, 32, bar4, 1);
	CHECK_EQ(rd(&c, SPYRE_RING_REG(0, SPYRE_RING_TAIL)), 0);
	CHECK_EQ(rd(&c, SPYRE_REG_ERR_STATUS), SPYRE_ERR_STATUS_BAD_ACCESS);
	CHECK_EQ(rd(&c, SPYRE_REG_ERR_INFO),
		 SPYRE_ERR_INFO(SPYRE_ERR_INFO_SRC_ACCESS, 0, SPYRE_RING_REG(0, SPYRE_RING_TAIL)));
	qt_write(q, 32, bar4 + SPYRE_DOORBELL_STRIDE, c.tail[1]);	/* ring 1's doorbell */
	CHECK(wait_msi(&c, 1, MSI_DATA + 1, 5000));
	for (int ms = 0; ms < 5000 && seq != 5; ms++, usleep(1000))
		seq = qt_read(q, 64, BAR2_A + 0x200000);	/* the write-back, in device memory */
	CHECK_EQ(seq, 5);
	CHECK_EQ(record(&c, 0).status, SPYRE_CMD_OK);
	CHECK_EQ(qt_read(q, 32, BAR2_A + 0x201000 + 60), 0x77777777);
	CHECK_EQ(qt_read(q, 32, bar4 + SPYRE_DOORBELL_STRIDE), 2);	/* the head */
	CHECK_EQ(qt_read(q, 32, bar4 + SPYRE_DOORBELL_STRIDE + 8), 0);

	/* WAIT_MEM on a counter in guest RAM: released by the doorbell, same tail */
	memset(d, 0, sizeof(d));
	((union spyre_hw_desc *)d)->wait_mem.opcode = SPYRE_OP_WAIT_MEM;
	((union spyre_hw_desc *)d)->wait_mem.addr = spyre_cpu_to_le64(0x40004000);
	((union spyre_hw_desc *)d)->wait_mem.value = spyre_cpu_to_le64(3);
	qt_write(q, 64, DATA2, 0);
	push(&c, 1, d);
	spyre_desc_fence((union spyre_hw_desc *)d, 0);
	spyre_desc_fence_seal((union spyre_hw_desc *)d, 6, va_rec + 64);
	push(&c, 1, d);
	qt_write(q, 32, bar4 + SPYRE_DOORBELL_STRIDE, c.tail[1]);
	usleep(100000);
	CHECK_EQ(qt_read(q, 64, BAR2_A + 0x200000), 5);	/* waiting */
	qt_write(q, 64, DATA2, 3);
	qt_write(q, 32, bar4 + SPYRE_DOORBELL_STRIDE, c.tail[1]);
	for (int ms = 0; ms < 5000 && seq != 6; ms++, usleep(1000))
		seq = qt_read(q, 64, BAR2_A + 0x200000);
	CHECK_EQ(seq, 6);
	CHECK_EQ(record(&c, 1).status, SPYRE_CMD_OK);
	CHECK(qt_alive(q));
	qt_quit(q);
}

/*
 * Peer DMA (1.13) in QEMU: card A writes into card B's BAR2 through the
 * PCI address space (D2P) and reads it back (P2D); A's own BAR2 and B's
 * BAR0 (MMIO) are no targets: a DMA error in the record, nothing written.
 */
static void t_peer_dma_through_the_pci_address_space(void)
{
	struct qt *q = qt_start("-device spyre,addr=4,mem=64M -device spyre,addr=5,mem=64M");
	static uint8_t pat[8192], back[8192];
	struct spyre_hw_completion r;
	struct card a, b;
	uint8_t d[64];
	unsigned int i;

	card_setup(&a, q, 4, BAR0_A, BAR2_A);
	card_setup(&b, q, 5, BAR0_B, BAR2_B);
	for (i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i * 13 + 5);
	qt_memwrite(q, BAR2_A + 0x3000, pat, sizeof(pat));	/* A's memory, via its BAR2 */
	ring_setup(&a, 0);
	spyre_desc_dma_peer((void *)d, SPYRE_DMA_D2P, sizeof(pat), 0x3000, BAR2_B + 0x10001);
	push(&a, 0, d);
	spyre_desc_dma_peer((void *)d, SPYRE_DMA_P2D, sizeof(pat), 0x20000, BAR2_B + 0x10001);
	push(&a, 0, d);
	fence_desc(d, 1, 0);
	push(&a, 0, d);
	/* A's own memory as the bus target */
	spyre_desc_dma_peer((void *)d, SPYRE_DMA_D2P, 64, 0x3000, BAR2_A + 0x40000);
	push(&a, 0, d);
	fence_desc(d, 2, 1);
	push(&a, 0, d);
	/* B's registers */
	spyre_desc_dma_peer((void *)d, SPYRE_DMA_D2P, 4, 0x3000, BAR0_B + SPYRE_REG_SCRATCH);
	push(&a, 0, d);
	fence_desc(d, 3, 2);
	push(&a, 0, d);
	doorbell(&a, 0);
	CHECK(wait_seq(&a, 0, 3, 5000));
	r = record(&a, 0);
	CHECK_EQ(r.status, SPYRE_CMD_OK);
	/* 8 KiB at 50 GB/s = 164 ns + 1000 ns setup, twice */
	CHECK_EQ(r.end_ns - r.start_ns, 2 * (1000 + 164));
	qt_memread(q, BAR2_B + 0x10001, back, sizeof(back));	/* B's memory, via its BAR2 */
	CHECK(!memcmp(back, pat, sizeof(pat)));
	qt_memread(q, BAR2_A + 0x20000, back, sizeof(back));
	CHECK(!memcmp(back, pat, sizeof(pat)));
	CHECK_EQ(record(&a, 1).status, SPYRE_CMD_ERR_DMA);
	CHECK_EQ(qt_read(q, 32, BAR2_A + 0x40000), 0);
	CHECK_EQ(record(&a, 2).status, SPYRE_CMD_ERR_DMA);
	CHECK_EQ(rd(&b, SPYRE_REG_SCRATCH), 0);
	CHECK_EQ(rd(&b, SPYRE_REG_ERR_STATUS), 0);	/* B saw nothing */
	qt_quit(q);
}

/*
 * The worker thread of each card (named "spyre" with debug-threads=on)
 * runs under SCHED_BATCH with worker-batch=on, under the host's default
 * policy otherwise (spyre-card.rst). Two cards, one of each: exactly one
 * batch worker and one normal one.
 */
static void t_worker_thread_host_policy(void)
{
	struct qt *q = qt_start("-name spyre-qtest,debug-threads=on "
				"-device spyre,addr=4,mem=64M,worker-batch=on "
				"-device spyre,addr=5,mem=64M");
	int batch = 0, other = 0;
	struct dirent *e;
	char path[128];
	DIR *d;

	/* both cards are realized once they answer config cycles */
	CHECK_EQ(pci_cfg_read(q, 4, 0, 2), SPYRE_PCI_VENDOR_ID);
	CHECK_EQ(pci_cfg_read(q, 5, 0, 2), SPYRE_PCI_VENDOR_ID);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)q->pid);
	d = opendir(path);
	CHECK(d);
	while (d && (e = readdir(d))) {
		char comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)q->pid, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "spyre", 5)) {
			int pol = sched_getscheduler(atoi(e->d_name));

			batch += pol == SCHED_BATCH;
			other += pol == SCHED_OTHER;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	CHECK_EQ(batch, 1);
	CHECK_EQ(other, 1);
	qt_quit(q);
}

int main(void)
{
	if (!getenv("QEMU") || access(getenv("QEMU"), X_OK)) {
		printf("QEMU binary not found: set QEMU\n0 passed, 1 failed\n");
		return 1;
	}
	run("pci_identity_two_cards", t_pci_identity_two_cards);
	run("registers_and_device_time", t_registers_and_device_time);
	run("ring_round_trip_dma_msix", t_ring_round_trip_dma_msix);
	run("pacing_follows_clock_step", t_pacing_follows_clock_step);
	run("bad_dma_is_an_error_record", t_bad_dma_is_an_error_record);
	run("error_vector_and_hang_recovery", t_error_vector_and_hang_recovery);
	run("reset_register_and_flr", t_reset_register_and_flr);
	run("garbage_register_writes_keep_qemu_alive", t_garbage_register_writes_keep_qemu_alive);
	run("resets_race_running_work", t_resets_race_running_work);
	run("trace_points_and_guest_errors", t_trace_points_and_guest_errors);
	run("mmu_translates_and_faults", t_mmu_translates_and_faults);
	run("mmu_user_queue_doorbell_page", t_mmu_user_queue_doorbell_page);
	run("peer_dma_through_the_pci_address_space", t_peer_dma_through_the_pci_address_space);
	run("worker_thread_host_policy", t_worker_thread_host_policy);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
