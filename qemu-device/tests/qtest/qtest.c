// SPDX-License-Identifier: GPL-2.0-or-later
/* Minimal qtest protocol client (see qtest.h). */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qtest.h"

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "qtest: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

struct qt *qt_start(const char *args)
{
	struct qt *q = calloc(1, sizeof(*q));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *qemu = getenv("QEMU");
	char cmd[4096];
	int ls;

	if (!qemu)
		die("set QEMU to the qemu-system-x86_64 binary");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/spyre-qtest-%d.sock", getpid());
	unlink(sa.sun_path);
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (void *)&sa, sizeof(sa)) || listen(ls, 1))
		die("socket: %s", strerror(errno));
	snprintf(q->log, sizeof(q->log), "/tmp/spyre-qtest-%d.log", getpid());
	snprintf(cmd, sizeof(cmd),
		 "exec %s -machine q35 -accel qtest -qtest unix:%s -display none -nodefaults "
		 "-m 256M -L /usr/share/qemu -L /usr/share/seabios %s </dev/null >%s 2>&1",
		 qemu, sa.sun_path, args, q->log);
	q->pid = fork();
	if (q->pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	q->fd = accept(ls, NULL, NULL);
	close(ls);
	unlink(sa.sun_path);
	if (q->fd < 0)
		die("accept: %s", strerror(errno));
	return q;
}

bool qt_alive(struct qt *q)
{
	int st;

	return waitpid(q->pid, &st, WNOHANG) == 0;
}

void qt_quit(struct qt *q)
{
	int st;

	close(q->fd);
	kill(q->pid, SIGTERM);
	waitpid(q->pid, &st, 0);
	unlink(q->log);
	free(q);
}

/* Send a command, return the reply line (without "OK "); async lines skipped. */
static const char *cmd(struct qt *q, const char *fmt, ...)
{
	static char line[70000];
	char out[70000];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, sizeof(out) - 1, fmt, ap);
	va_end(ap);
	out[n++] = '\n';
	if (write(q->fd, out, n) != n)
		die("write to QEMU failed (did it die? log %s)", q->log);
	for (;;) {
		char *nl = memchr(q->buf, '\n', q->len);
		ssize_t r;

		if (nl) {
			size_t l = nl - q->buf;

			memcpy(line, q->buf, l);
			line[l] = 0;
			memmove(q->buf, nl + 1, q->len - l - 1);
			q->len -= l + 1;
			if (!strncmp(line, "IRQ", 3))
				continue;
			if (strncmp(line, "OK", 2))
				die("'%.*s' -> '%s'", n - 1, out, line);
			return line[2] ? line + 3 : line + 2;
		}
		r = read(q->fd, q->buf + q->len, sizeof(q->buf) - q->len);
		if (r <= 0)
			die("QEMU closed the connection (log %s)", q->log);
		q->len += r;
	}
}

uint64_t qt_read(struct qt *q, unsigned int bits, uint64_t addr)
{
	const char *c = bits == 8 ? "b" : bits == 16 ? "w" : bits == 32 ? "l" : "q";

	return strtoull(cmd(q, "read%s 0x%llx", c, (unsigned long long)addr), NULL, 0);
}

void qt_write(struct qt *q, unsigned int bits, uint64_t addr, uint64_t val)
{
	const char *c = bits == 8 ? "b" : bits == 16 ? "w" : bits == 32 ? "l" : "q";

	cmd(q, "write%s 0x%llx 0x%llx", c, (unsigned long long)addr, (unsigned long long)val);
}

uint32_t qt_inl(struct qt *q, uint16_t port)
{
	return (uint32_t)strtoul(cmd(q, "inl 0x%x", port), NULL, 0);
}

void qt_outl(struct qt *q, uint16_t port, uint32_t val)
{
	cmd(q, "outl 0x%x 0x%x", port, val);
}

void qt_memread(struct qt *q, uint64_t addr, void *buf, size_t len)
{
	const char *r = cmd(q, "read 0x%llx 0x%zx", (unsigned long long)addr, len);
	uint8_t *b = buf;
	size_t i;

	if (strncmp(r, "0x", 2))
		die("bad read reply");
	for (i = 0; i < len; i++) {
		unsigned int v;

		sscanf(r + 2 + 2 * i, "%2x", &v);
		b[i] = (uint8_t)v;
	}
}

void qt_memwrite(struct qt *q, uint64_t addr, const void *buf, size_t len)
{
	static char hex[2 * 32768 + 1];
	const uint8_t *b = buf;
	size_t i, done, n;

	for (done = 0; done < len; done += n) {
		n = len - done < 32768 ? len - done : 32768;
		for (i = 0; i < n; i++)
			sprintf(hex + 2 * i, "%02x", b[done + i]);
		cmd(q, "write 0x%llx 0x%zx 0x%s", (unsigned long long)(addr + done), n, hex);
	}
}

uint64_t qt_clock_step(struct qt *q, uint64_t ns)
{
	return strtoull(cmd(q, "clock_step %llu", (unsigned long long)ns), NULL, 0);
}

uint64_t qt_clock_get(struct qt *q)
{
	return strtoull(cmd(q, "clock_step 0"), NULL, 0);
}

static uint32_t cfg_addr(unsigned int dev, unsigned int off)
{
	return 0x80000000u | dev << 11 | (off & 0xfc);
}

uint32_t pci_cfg_read(struct qt *q, unsigned int dev, unsigned int off, unsigned int size)
{
	uint32_t v;

	qt_outl(q, 0xcf8, cfg_addr(dev, off));
	v = qt_inl(q, 0xcfc) >> (8 * (off & 3));
	return size == 4 ? v : v & ((1u << (8 * size)) - 1);
}

void pci_cfg_write(struct qt *q, unsigned int dev, unsigned int off, unsigned int size,
		   uint32_t val)
{
	uint32_t old, mask;

	qt_outl(q, 0xcf8, cfg_addr(dev, off));
	if (size == 4) {
		qt_outl(q, 0xcfc, val);
		return;
	}
	old = qt_inl(q, 0xcfc);
	mask = ((1u << (8 * size)) - 1) << (8 * (off & 3));
	qt_outl(q, 0xcf8, cfg_addr(dev, off));
	qt_outl(q, 0xcfc, (old & ~mask) | ((val << (8 * (off & 3))) & mask));
}
