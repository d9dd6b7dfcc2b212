/*
 * Virtual IBM-Spyre-class AI accelerator: QEMU PCIe glue.
 *
 * Maps BAR0 (registers, doorbells, MSI-X), BAR2 (device memory, sparse RAM)
 * and DMA onto the portable card model in model/. The model runs in a
 * worker thread so vCPUs never execute commands; it touches guest memory
 * only through pci_dma_rw() on guest RAM (no BQL needed, and MMIO targets
 * are refused, so a guest cannot make the card re-enter itself). The worker
 * delivers its completion interrupts itself, under the BQL, as soon as it
 * has dropped the card lock; interrupts raised elsewhere go through a
 * bottom half in the main loop.
 *
 * Trace points (trace-events, -trace 'spyre_*') cover register accesses,
 * doorbells, descriptors, DMA and interrupts; what the guest does wrong is
 * logged with -d guest_errors as well as reported in ERR_STATUS and the
 * completion records.
 *
 * Documentation/spyre-card.rst is the programming specification.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/units.h"
#include "qemu/host-utils.h"
#include "qemu/module.h"
#include "qemu/thread.h"
#include "qemu/timer.h"
#include "qemu/main-loop.h"
#include "qemu/rcu.h"
#include "qapi/error.h"
#include "hw/qdev-properties.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "migration/vmstate.h"
#include "spyre_compat.h"
#include "spyre_hw.h"
#include "model/spyre_model.h"
#include "trace.h"
#ifdef CONFIG_LINUX
#include <sched.h>
#endif

#define TYPE_SPYRE "spyre"
OBJECT_DECLARE_SIMPLE_TYPE(SpyreState, SPYRE)

#define SPYRE_MAX_MEM   (128 * GiB)
#define SPYRE_REG_SPAN  SPYRE_MSIX_TABLE_OFFSET /* model registers below */

struct SpyreState {
    PCIDevice parent_obj;

    MemoryRegion bar0;          /* container: registers + MSI-X */
    MemoryRegion regs;
    MemoryRegion mem;           /* all device memory (sparse RAM) */
    MemoryRegion mem_bar;       /* BAR2 container when it is an alias */
    MemoryRegion mem_alias;
    MemoryRegion doorbells;     /* BAR4: a doorbell page per ring (1.10) */

    /* properties */
    uint64_t mem_size;
    uint64_t aperture;
    uint32_t cores;
    uint32_t rings;
    uint32_t sems;
    uint32_t clock_mhz;
    bool pacing;
    bool poison;
    bool hazard_check;
    bool worker_batch;
    uint32_t fault_dma_every;
    uint32_t fault_hang_after;

    struct spyre_model *model;
    QemuMutex lock;             /* serialises every model call */
    QemuCond kick_cond;         /* worker: work may be available */
    QemuCond exec_cond;         /* model retook the lock after long work */
    QemuThread worker;
    bool kick;
    bool stop;
    bool executing;             /* worker runs a command unlocked */

    QEMUBH *irq_bh;
    uint64_t irq_pending[2];    /* vectors to notify, set atomically */
    QEMUTimer *pace_timer;
};

/* --- model callbacks ------------------------------------------------------ */

/*
 * Bus memory access for the model. Only plain RAM is accepted: guest RAM,
 * and another card's BAR2 (device memory, RAM in this model) for peer DMA;
 * anything else (MMIO, ROM for writes, holes, the card's own memory, bus
 * mastering disabled) is a DMA error reported in a completion record,
 * never a QEMU abort.
 */
static int spyre_host_rw(SpyreState *s, uint64_t addr, void *buf, uint64_t len,
                         bool is_write)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    AddressSpace *as = pci_get_address_space(pdev);
    uint8_t *p = buf;

    while (len) {
        hwaddr xlat, l = len;
        MemoryRegion *mr;
        MemTxResult r;

        if (addr + len < addr) {
            return -1;
        }
        WITH_RCU_READ_LOCK_GUARD() {
            mr = address_space_translate(as, addr, &xlat, &l, is_write,
                                         MEMTXATTRS_UNSPECIFIED);
            /*
             * The card's own memory is not a bus target of its DMA: a peer
             * card's BAR2 is (peer DMA, 1.13), as on PCIe peer to peer.
             */
            if (!memory_region_is_ram(mr) || !l || mr == &s->mem ||
                (is_write && memory_region_is_rom(mr))) {
                trace_spyre_dma_refused(addr, len, is_write);
                return -1;
            }
            trace_spyre_dma(addr, l, is_write);
            r = pci_dma_rw(pdev, addr, p, l,
                           is_write ? DMA_DIRECTION_FROM_DEVICE
                                    : DMA_DIRECTION_TO_DEVICE,
                           MEMTXATTRS_UNSPECIFIED);
        }
        if (r != MEMTX_OK) {
            trace_spyre_dma_refused(addr, l, is_write);
            return -1;
        }
        addr += l;
        p += l;
        len -= l;
    }
    return 0;
}

static int spyre_host_read(void *opaque, uint64_t addr, void *buf, uint64_t len)
{
    return spyre_host_rw(opaque, addr, buf, len, false);
}

static int spyre_host_write(void *opaque, uint64_t addr, const void *buf,
                            uint64_t len)
{
    return spyre_host_rw(opaque, addr, (void *)buf, len, true);
}

static bool spyre_irqs_pending(SpyreState *s)
{
    return qatomic_read(&s->irq_pending[0]) || qatomic_read(&s->irq_pending[1]);
}

/*
 * Called with s->lock held, from any thread. msix_notify() needs the BQL,
 * which cannot be taken under s->lock (vCPUs hold the BQL when they take
 * s->lock). The worker delivers its own interrupts once it has dropped
 * s->lock (spyre_worker_deliver_irqs): that spares every completion a
 * wake-up of the main loop. Other callers defer to the main loop.
 */
static void spyre_raise_irq(void *opaque, unsigned int vector)
{
    SpyreState *s = opaque;

    trace_spyre_irq_raise(vector);
    qatomic_or(&s->irq_pending[vector / 64], 1ull << (vector % 64));
    if (!qemu_thread_is_self(&s->worker)) {
        qemu_bh_schedule(s->irq_bh);
    }
}

static uint64_t spyre_now_ns(void *opaque)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static void spyre_unlock_cb(void *opaque)
{
    SpyreState *s = opaque;

    /* Completions so far must not wait for the long command that follows. */
    if (spyre_irqs_pending(s)) {
        qemu_bh_schedule(s->irq_bh);
    }
    s->executing = true;
    qemu_mutex_unlock(&s->lock);
}

static void spyre_lock_cb(void *opaque)
{
    SpyreState *s = opaque;

    qemu_mutex_lock(&s->lock);
    s->executing = false;
    qemu_cond_broadcast(&s->exec_cond);
}

static const char *const spyre_cmd_status_names[] = {
    [SPYRE_CMD_OK] = "ok",
    [SPYRE_CMD_ERR_INVALID] = "invalid descriptor",
    [SPYRE_CMD_ERR_BOUNDS] = "outside device memory or an argument slot",
    [SPYRE_CMD_ERR_DMA] = "host memory access failed",
    [SPYRE_CMD_ERR_PROGRAM] = "malformed program",
    [SPYRE_CMD_ERR_DEADLOCK] = "program deadlock",
    [SPYRE_CMD_ERR_MEM_UE] = "uncorrectable memory error",
    [SPYRE_CMD_ERR_DEP] = "awaited job failed",
    [SPYRE_CMD_ERR_ARITH] = "integer division by zero",
    [SPYRE_CMD_ERR_PAGE_FAULT] = "card virtual address did not translate",
};

static const char *const spyre_ring_error_names[] = {
    [SPYRE_RING_ERR_NONE] = "none",
    [SPYRE_RING_ERR_BAD_CONFIG] = "bad base, size or write-back address",
    [SPYRE_RING_ERR_BAD_TAIL] = "tail moved backwards or past a full ring",
    [SPYRE_RING_ERR_FETCH] = "descriptor fetch failed",
    [SPYRE_RING_ERR_WRITEBACK] = "completion write failed",
};

static const char *spyre_name(const char *const *names, size_t n, uint64_t i)
{
    return i < n && names[i] ? names[i] : "unknown";
}

/*
 * Card events (the model's lock is held): trace points, and what the guest
 * did wrong for -d guest_errors. ERR_STATUS and the completion records
 * report the same to the guest.
 */
static void spyre_event(void *opaque, enum spyre_model_event ev,
                        unsigned int ring, uint64_t a, uint64_t b)
{
    uint32_t src = b >> 24, detail = b & 0xffff;

    switch (ev) {
    case SPYRE_MODEL_EV_DESC:
        trace_spyre_desc(ring, a, b);
        break;
    case SPYRE_MODEL_EV_CMD_ERROR:
        trace_spyre_cmd_error(ring, a, b);
        if (b != SPYRE_CMD_ERR_DEP) {   /* the awaited job was logged */
            qemu_log_mask(LOG_GUEST_ERROR,
                          "spyre: ring %u: command at index %" PRIu64
                          " failed: %s\n", ring, a,
                          spyre_name(spyre_cmd_status_names,
                                     ARRAY_SIZE(spyre_cmd_status_names), b));
        }
        break;
    case SPYRE_MODEL_EV_FENCE:
        trace_spyre_fence(ring, a, b);
        break;
    case SPYRE_MODEL_EV_CARD_ERROR:
        trace_spyre_card_error(ring, a, b);
        if (src == SPYRE_ERR_INFO_SRC_ACCESS) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "spyre: bad register access at 0x%x\n", detail);
        } else if (src == SPYRE_ERR_INFO_SRC_RING) {
            qemu_log_mask(LOG_GUEST_ERROR, "spyre: ring %u stopped: %s\n",
                          ring, spyre_name(spyre_ring_error_names,
                                           ARRAY_SIZE(spyre_ring_error_names),
                                           detail));
        } else if (src == SPYRE_ERR_INFO_SRC_MMU) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "spyre: ring %u: translation fault in MMU "
                          "context %u\n", ring, detail);
        } else {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "spyre: uncorrectable memory error (injected)\n");
        }
        break;
    }
}

static const struct spyre_model_ops spyre_ops = {
    .host_read = spyre_host_read,
    .host_write = spyre_host_write,
    .raise_irq = spyre_raise_irq,
    .now_ns = spyre_now_ns,
    .unlock = spyre_unlock_cb,
    .lock = spyre_lock_cb,
    .event = spyre_event,
};

/* --- interrupts, pacing, worker ------------------------------------------- */

/* BQL held. */
static void spyre_deliver_irqs(SpyreState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    unsigned int w, v;

    for (w = 0; w < ARRAY_SIZE(s->irq_pending); w++) {
        uint64_t bits = qatomic_xchg(&s->irq_pending[w], 0);

        while (bits) {
            v = ctz64(bits);
            bits &= bits - 1;
            trace_spyre_irq_notify(w * 64 + v);
            msix_notify(pdev, w * 64 + v);
        }
    }
}

static void spyre_irq_bh(void *opaque)
{
    spyre_deliver_irqs(opaque);
}

/*
 * Worker, s->lock held and no command executing. Drops s->lock to take the
 * BQL (the lock order is BQL, then s->lock). A reset runs under the BQL and
 * clears the pending vectors, so none is delivered after one.
 */
static void spyre_worker_deliver_irqs(SpyreState *s)
{
    qemu_mutex_unlock(&s->lock);
    spyre_bql_lock();
    spyre_deliver_irqs(s);
    spyre_bql_unlock();
    qemu_mutex_lock(&s->lock);
}

/* Lock held. */
static void spyre_kick_locked(SpyreState *s)
{
    s->kick = true;
    qemu_cond_signal(&s->kick_cond);
}

static void spyre_pace_timer(void *opaque)
{
    SpyreState *s = opaque;

    qemu_mutex_lock(&s->lock);
    spyre_kick_locked(s);
    qemu_mutex_unlock(&s->lock);
}

/*
 * worker-batch=on: the worker runs under SCHED_BATCH, which keeps its fair
 * share of the host but drops wake-up preemption. Under TCG a doorbell
 * write wakes the worker, and with the host's default policy the woken
 * thread often takes the very core of the vCPU that rang, so the guest's
 * posted write returns only once the card has run the job. With the option
 * the write returns at once, but on a host whose cores are all busy the
 * card then waits for a vCPU's time slice, and round trips get slower
 * (figures in spyre-card.rst): off by default. Modelled device time does
 * not depend on it. A hint: if the host refuses it nothing else changes.
 */
static void spyre_worker_host_policy(SpyreState *s)
{
#if defined(CONFIG_LINUX) && defined(SCHED_BATCH)
    struct sched_param sp = { .sched_priority = 0 };

    if (s->worker_batch &&
        pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp)) {
        qemu_log_mask(LOG_UNIMP, "spyre: worker-batch: SCHED_BATCH refused\n");
    }
#else
    (void)s;
#endif
}

static void *spyre_worker(void *opaque)
{
    SpyreState *s = opaque;
    uint64_t wake;

    rcu_register_thread();
    spyre_worker_host_policy(s);
    qemu_mutex_lock(&s->lock);
    while (!s->stop) {
        if (!s->kick) {
            qemu_cond_wait(&s->kick_cond, &s->lock);
            continue;
        }
        s->kick = false;
        wake = spyre_model_process(s->model);
        if (wake != SPYRE_MODEL_NEVER) {
            timer_mod(s->pace_timer, wake);
        }
        if (spyre_irqs_pending(s)) {
            spyre_worker_deliver_irqs(s);
        }
    }
    qemu_mutex_unlock(&s->lock);
    rcu_unregister_thread();
    return NULL;
}

/*
 * Lock held. Make the worker abandon the command it runs unlocked (it
 * notices the abort request and retakes the lock), so a reset never races
 * with DMA into memory the guest is about to reuse.
 */
static void spyre_quiesce_locked(SpyreState *s)
{
    spyre_model_request_abort(s->model, true);
    while (s->executing) {
        qemu_cond_wait(&s->exec_cond, &s->lock);
    }
}

/* --- BAR0 registers ------------------------------------------------------- */

static uint64_t spyre_regs_read(void *opaque, hwaddr addr, unsigned size)
{
    SpyreState *s = opaque;
    uint32_t val;

    qemu_mutex_lock(&s->lock);
    val = spyre_model_read(s->model, addr);
    qemu_mutex_unlock(&s->lock);
    trace_spyre_mmio_read(addr, val);
    return val;
}

static void spyre_regs_write(void *opaque, hwaddr addr, uint64_t val,
                             unsigned size)
{
    SpyreState *s = opaque;
    hwaddr ring_off = addr - SPYRE_RING_REGS_BASE;

    trace_spyre_mmio_write(addr, val);
    if (addr >= SPYRE_RING_REGS_BASE &&
        ring_off % SPYRE_RING_REGS_STRIDE == SPYRE_RING_TAIL) {
        trace_spyre_doorbell(ring_off / SPYRE_RING_REGS_STRIDE, val);
    }
    qemu_mutex_lock(&s->lock);
    if (spyre_model_write_needs_quiesce(s->model, addr, val)) {
        spyre_quiesce_locked(s);
    }
    if (spyre_model_write(s->model, addr, val)) {
        spyre_kick_locked(s);
    }
    spyre_model_request_abort(s->model, false);
    /* a reset may have stopped the worker mid-way: let it look again */
    spyre_kick_locked(s);
    qemu_mutex_unlock(&s->lock);
}

static const MemoryRegionOps spyre_regs_ops = {
    .read = spyre_regs_read,
    .write = spyre_regs_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 4 },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};

/*
 * --- BAR4 doorbell pages (1.10) ---------------------------------------------
 * A page per ring, so that a driver can map one user-mode queue's doorbell
 * into its process and nothing else: offset 0 is the ring's tail (write)
 * and head (read). Anything else in the page reads 0 and ignores writes,
 * without touching ERR_STATUS: the page is the process's, the card's
 * error state is the driver's.
 */
static bool spyre_db_ring(SpyreState *s, hwaddr addr, uint32_t *ring)
{
    *ring = addr / SPYRE_DOORBELL_STRIDE;
    return addr % SPYRE_DOORBELL_STRIDE == 0 && *ring < s->rings;
}

static uint64_t spyre_db_read(void *opaque, hwaddr addr, unsigned size)
{
    uint32_t ring;

    if (!spyre_db_ring(opaque, addr, &ring)) {
        return 0;
    }
    return spyre_regs_read(opaque, SPYRE_RING_REG(ring, SPYRE_RING_HEAD), 4);
}

static void spyre_db_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    uint32_t ring;

    if (spyre_db_ring(opaque, addr, &ring)) {
        spyre_regs_write(opaque, SPYRE_RING_REG(ring, SPYRE_RING_TAIL), val, 4);
    }
}

static const MemoryRegionOps spyre_db_ops = {
    .read = spyre_db_read,
    .write = spyre_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 4 },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};

/* --- PCI device ----------------------------------------------------------- */

static void spyre_reset(DeviceState *dev)
{
    SpyreState *s = SPYRE(dev);

    if (!s->model) {
        return;
    }
    trace_spyre_reset();
    qemu_mutex_lock(&s->lock);
    spyre_quiesce_locked(s);
    spyre_model_reset(s->model);
    spyre_model_request_abort(s->model, false);
    qatomic_set(&s->irq_pending[0], 0);
    qatomic_set(&s->irq_pending[1], 0);
    timer_del(s->pace_timer);
    qemu_mutex_unlock(&s->lock);
}

static void spyre_write_config(PCIDevice *pdev, uint32_t addr, uint32_t val,
                               int len)
{
    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);    /* FLR resets us */
}

static bool spyre_init_memory(SpyreState *s, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint64_t bar_size;

    if (s->mem_size < MiB || s->mem_size > SPYRE_MAX_MEM ||
        s->mem_size % (4 * KiB)) {
        error_setg(errp, "spyre: mem must be 1 MiB..128 GiB, 4 KiB aligned");
        return false;
    }
    if (!s->aperture) {
        s->aperture = s->mem_size;
    }
    if (s->aperture > s->mem_size || s->aperture % (4 * KiB)) {
        error_setg(errp, "spyre: aperture must be 4 KiB aligned, <= mem");
        return false;
    }
    /* NORESERVE: a 128 GiB card costs only the pages the guest touches */
    memory_region_init_ram_flags_nomigrate(&s->mem, OBJECT(s), "spyre-mem",
                                           s->mem_size, RAM_NORESERVE, errp);
    if (*errp) {
        return false;
    }
    bar_size = pow2ceil(s->aperture);
    if (bar_size == s->mem_size) {
        pci_register_bar(pdev, SPYRE_BAR_MEM, PCI_BASE_ADDRESS_SPACE_MEMORY |
                         PCI_BASE_ADDRESS_MEM_TYPE_64 |
                         PCI_BASE_ADDRESS_MEM_PREFETCH, &s->mem);
        return true;
    }
    memory_region_init(&s->mem_bar, OBJECT(s), "spyre-mem-bar", bar_size);
    memory_region_init_alias(&s->mem_alias, OBJECT(s), "spyre-mem-aperture",
                             &s->mem, 0, s->aperture);
    memory_region_add_subregion(&s->mem_bar, 0, &s->mem_alias);
    pci_register_bar(pdev, SPYRE_BAR_MEM, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->mem_bar);
    return true;
}

/* Undo what spyre_realize() sets up for the worker. */
static void spyre_free_sync(SpyreState *s)
{
    timer_free(s->pace_timer);
    s->pace_timer = NULL;
    qemu_bh_delete(s->irq_bh);
    s->irq_bh = NULL;
    qemu_cond_destroy(&s->exec_cond);
    qemu_cond_destroy(&s->kick_cond);
    qemu_mutex_destroy(&s->lock);
}

static void spyre_realize(PCIDevice *pdev, Error **errp)
{
    ERRP_GUARD();
    SpyreState *s = SPYRE(pdev);
    struct spyre_model_config cfg;
    const char *err = NULL;
    unsigned int i;

    spyre_model_config_defaults(&cfg);
    cfg.num_cores = s->cores;
    cfg.num_rings = s->rings;
    cfg.num_sems = s->sems;
    cfg.timing.clock_mhz = s->clock_mhz;
    cfg.pacing = s->pacing;
    cfg.poison = s->poison;
    cfg.hazard_check = s->hazard_check;
    cfg.fault_dma_every = s->fault_dma_every;
    cfg.fault_hang_after = s->fault_hang_after;
    if (s->rings < 1 || s->rings > SPYRE_MODEL_MAX_RINGS) {
        error_setg(errp, "spyre: rings must be 1..%d", SPYRE_MODEL_MAX_RINGS);
        return;
    }
    if (!spyre_init_memory(s, errp)) {
        return;
    }
    cfg.mem_size = s->mem_size;
    cfg.mem_aperture = s->aperture;

    pdev->config[PCI_INTERRUPT_PIN] = 0;        /* MSI-X only */
    memory_region_init(&s->bar0, OBJECT(s), "spyre-bar0", SPYRE_REGS_SIZE);
    memory_region_init_io(&s->regs, OBJECT(s), &spyre_regs_ops, s,
                          "spyre-regs", SPYRE_REG_SPAN);
    memory_region_add_subregion(&s->bar0, 0, &s->regs);
    pci_register_bar(pdev, SPYRE_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar0);
    memory_region_init_io(&s->doorbells, OBJECT(s), &spyre_db_ops, s,
                          "spyre-doorbells",
                          pow2ceil((uint64_t)s->rings * SPYRE_DOORBELL_STRIDE));
    pci_register_bar(pdev, SPYRE_BAR_DOORBELL, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->doorbells);

    pcie_endpoint_cap_init(pdev, 0x80);
    pcie_cap_flr_init(pdev);
    if (msix_init(pdev, s->rings + 1, &s->bar0, SPYRE_BAR_REGS,
                  SPYRE_MSIX_TABLE_OFFSET, &s->bar0, SPYRE_BAR_REGS,
                  SPYRE_MSIX_PBA_OFFSET, 0, errp) < 0) {
        return;
    }
    for (i = 0; i < s->rings + 1; i++) {
        msix_vector_use(pdev, i);
    }

    qemu_mutex_init(&s->lock);
    qemu_cond_init(&s->kick_cond);
    qemu_cond_init(&s->exec_cond);
    s->irq_bh = spyre_bh_new(spyre_irq_bh, s);
    s->pace_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, spyre_pace_timer, s);
    s->model = spyre_model_new(&cfg, &spyre_ops, s,
                               memory_region_get_ram_ptr(&s->mem), &err);
    if (!s->model) {
        error_setg(errp, "spyre: %s", err);
        spyre_free_sync(s);
        msix_uninit(pdev, &s->bar0, &s->bar0);
        return;
    }
    s->stop = false;
    qemu_thread_create(&s->worker, "spyre", spyre_worker, s,
                       QEMU_THREAD_JOINABLE);
}

static void spyre_exit(PCIDevice *pdev)
{
    SpyreState *s = SPYRE(pdev);

    if (s->model) {
        qemu_mutex_lock(&s->lock);
        s->stop = true;
        spyre_model_request_abort(s->model, true);
        qemu_cond_signal(&s->kick_cond);
        qemu_mutex_unlock(&s->lock);
        /* The worker may be waiting for the BQL to deliver interrupts. */
        spyre_bql_unlock();
        qemu_thread_join(&s->worker);
        spyre_bql_lock();
        spyre_model_free(s->model);
        s->model = NULL;
        spyre_free_sync(s);
    }
    msix_uninit(pdev, &s->bar0, &s->bar0);
}

static SPYRE_PROPS_CONST Property spyre_props[] = {
    DEFINE_PROP_SIZE("mem", SpyreState, mem_size, 1 * GiB),
    DEFINE_PROP_SIZE("aperture", SpyreState, aperture, 0),
    DEFINE_PROP_UINT32("cores", SpyreState, cores, 32),
    DEFINE_PROP_UINT32("rings", SpyreState, rings, 8),
    DEFINE_PROP_UINT32("sems", SpyreState, sems, 64),
    DEFINE_PROP_UINT32("clock-mhz", SpyreState, clock_mhz, 1000),
    DEFINE_PROP_BOOL("pacing", SpyreState, pacing, false),
    DEFINE_PROP_BOOL("poison", SpyreState, poison, false),
    DEFINE_PROP_BOOL("hazard-check", SpyreState, hazard_check, false),
    DEFINE_PROP_BOOL("worker-batch", SpyreState, worker_batch, false),
    DEFINE_PROP_UINT32("fault-dma-every", SpyreState, fault_dma_every, 0),
    DEFINE_PROP_UINT32("fault-hang-after", SpyreState, fault_hang_after, 0),
    SPYRE_PROP_END
};

static const VMStateDescription spyre_vmstate = {
    .name = "spyre",
    .unmigratable = 1,
};

static void spyre_class_init(ObjectClass *klass, SPYRE_CLASS_DATA *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = spyre_realize;
    k->exit = spyre_exit;
    k->config_write = spyre_write_config;
    k->vendor_id = SPYRE_PCI_VENDOR_ID;
    k->device_id = SPYRE_PCI_DEVICE_ID;
    k->revision = SPYRE_PCI_REVISION;
    k->class_id = SPYRE_PCI_CLASS >> 8;
    dc->desc = "Spyre-class AI accelerator (virtual)";
    dc->vmsd = &spyre_vmstate;
    spyre_set_reset(dc, spyre_reset);
    device_class_set_props(dc, spyre_props);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo spyre_info = {
    .name = TYPE_SPYRE,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(SpyreState),
    .class_init = spyre_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { },
    },
};

static void spyre_register_types(void)
{
    type_register_static(&spyre_info);
}

type_init(spyre_register_types)
