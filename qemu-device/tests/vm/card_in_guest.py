#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later OR MIT
"""Checks the Spyre cards as a guest kernel sees them (run inside spyre-vm).

usage: card_in_guest.py CARDS RINGS MEM_BYTES [--fuzz]

Checks PCI identity, BARs, the PCIe and MSI-X capabilities from sysfs; with
the driver bound, that it got one MSI-X vector per ring plus the error
vector; with --fuzz (no driver bound), maps BAR0/BAR2 through sysfs and
writes random values to every register, then checks the card still answers.
Prints "N passed, N failed".
"""
import mmap
import os
import random
import struct
import sys

passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok {name}")
    else:
        failed += 1
        print(f"not ok {name} {detail}")


def rd(path):
    with open(path) as f:
        return f.read().strip()


def caps(cfg):
    """Capability id -> offset, from the standard list."""
    out = {}
    p = cfg[0x34]
    while p and p not in out.values() and len(out) < 48:
        out[cfg[p]] = p
        p = cfg[p + 1]
    return out


def card(dev, rings, mem, fuzz):
    base = f"/sys/bus/pci/devices/{dev}"
    check(f"{dev} class", rd(f"{base}/class") == "0x120000", rd(f"{base}/class"))
    check(f"{dev} revision", rd(f"{base}/revision") == "0x01")
    res = [line.split() for line in rd(f"{base}/resource").splitlines()]
    start0, end0, flags0 = (int(x, 16) for x in res[0])
    start2, end2, flags2 = (int(x, 16) for x in res[2])
    check(f"{dev} BAR0 64 KiB", end0 - start0 + 1 == 0x10000, hex(end0 - start0 + 1))
    check(f"{dev} BAR0 64-bit memory", flags0 & 0x200 and flags0 & 0x100000, hex(flags0))
    check(f"{dev} BAR2 size = device memory", end2 - start2 + 1 == mem, hex(end2 - start2 + 1))
    check(f"{dev} BAR2 64-bit prefetchable",
          flags2 & 0x2000 and flags2 & 0x100000, hex(flags2))
    with open(f"{base}/config", "rb") as f:
        cfg = f.read(256)
    cp = caps(cfg)
    check(f"{dev} PCIe capability", 0x10 in cp)
    if 0x10 in cp:
        devcap = struct.unpack_from("<I", cfg, cp[0x10] + 4)[0]
        check(f"{dev} FLR capable", devcap & (1 << 28))
    check(f"{dev} MSI-X capability", 0x11 in cp)
    if 0x11 in cp:
        ctl, table, pba = struct.unpack_from("<HII", cfg, cp[0x11] + 2)
        check(f"{dev} MSI-X vectors = rings + 1", (ctl & 0x7ff) + 1 == rings + 1, ctl)
        check(f"{dev} MSI-X table BAR0+0x8000", table == 0x8000, hex(table))
        check(f"{dev} MSI-X PBA BAR0+0x9000", pba == 0x9000, hex(pba))
    if os.path.exists(f"{base}/driver"):
        n = len(os.listdir(f"{base}/msi_irqs")) if os.path.isdir(f"{base}/msi_irqs") else 0
        check(f"{dev} driver got rings + 1 MSI-X vectors", n == rings + 1, n)
    if fuzz:
        fuzz_card(dev, base)


def fuzz_card(dev, base):
    with open(f"{base}/enable", "w") as f:
        f.write("1")
    fd = os.open(f"{base}/resource0", os.O_RDWR | os.O_SYNC)
    regs = mmap.mmap(fd, 0x10000)
    fd2 = os.open(f"{base}/resource2", os.O_RDWR | os.O_SYNC)
    mem = mmap.mmap(fd2, 1 << 20)

    def r32(off):
        return struct.unpack_from("<I", regs, off)[0]

    def w32(off, v):
        struct.pack_into("<I", regs, off, v & 0xffffffff)

    check(f"{dev} ID register", r32(0x000) == 0x53505952, hex(r32(0)))
    mem[0x100:0x104] = b"\x12\x34\x56\x78"
    check(f"{dev} BAR2 read back", mem[0x100:0x104] == b"\x12\x34\x56\x78")
    rnd = random.Random(1)
    for _ in range(3):
        for off in range(0, 0x8000, 4):
            if off != 0x060:    # the fault register would hang a ring on purpose
                w32(off, rnd.getrandbits(32))
    w32(0x040, 1)               # card reset
    check(f"{dev} alive after register fuzz", r32(0x000) == 0x53505952)
    check(f"{dev} ready after reset", r32(0x044) == 1, hex(r32(0x044)))
    t0 = r32(0x050)
    os.sched_yield()
    t1 = r32(0x050)
    check(f"{dev} device time runs", t1 != t0, f"{t0} {t1}")
    regs.close()
    mem.close()
    os.close(fd)
    os.close(fd2)


def main():
    cards, rings, mem = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    fuzz = "--fuzz" in sys.argv
    devs = []
    for d in sorted(os.listdir("/sys/bus/pci/devices")):
        b = f"/sys/bus/pci/devices/{d}"
        if rd(f"{b}/vendor") == "0x1234" and rd(f"{b}/device") == "0x5350":
            devs.append(d)
    check(f"{cards} cards with id 1234:5350", len(devs) == cards, devs)
    for d in devs:
        card(d, rings, mem, fuzz)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


sys.exit(main())
