// SPDX-License-Identifier: MIT
/*
 * spyre-smi: the state of the Spyre cards for humans (and scripts, with
 * --json): each card's identity, memory used/total, rings, queues (kernel
 * queues and user-mode queues, from the driver's debugfs), resets
 * and errors, and per-process usage read from /proc/PID/fdinfo (the DRM
 * usage keys drm-engine-*, drm-total-*, drm-resident-*), matched to the
 * card by drm-pdev.
 *
 *   spyre-smi [--json] [--backend drm|sim]
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spyre/spyre.h"
#include "spyre_hw.h"

#define MAX_PROCS 256
#define MAX_KEYS 16

struct usage {
	int pid;
	char comm[32];
	int clients;
	char key[MAX_KEYS][48];		/* drm-engine-compute, drm-total-device, ... */
	unsigned long long val[MAX_KEYS];	/* ns or bytes */
	int nkeys;
};

/* "123 ns", "4 KiB", "5 MiB", "7" -> number (bytes or ns). */
static unsigned long long parse_value(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	while (*end == ' ' || *end == '\t')
		end++;
	if (!strncmp(end, "KiB", 3))
		v <<= 10;
	else if (!strncmp(end, "MiB", 3))
		v <<= 20;
	else if (!strncmp(end, "GiB", 3))
		v <<= 30;
	return v;
}

static void add_key(struct usage *u, const char *key, unsigned long long v)
{
	int i;

	for (i = 0; i < u->nkeys; i++)
		if (!strcmp(u->key[i], key)) {
			u->val[i] += v;
			return;
		}
	if (u->nkeys == MAX_KEYS)
		return;
	snprintf(u->key[u->nkeys], sizeof(u->key[0]), "%.47s", key);
	u->val[u->nkeys++] = v;
}

/* One fdinfo file: counts it if it is a spyre client of card @pdev. */
static void read_fdinfo(const char *path, const char *pdev, struct usage *u, long long *seen,
			int *nseen)
{
	char line[256], driver[32] = "", dev[64] = "";
	char keys[MAX_KEYS][48];
	unsigned long long vals[MAX_KEYS];
	long long client = -1;
	int n = 0, i;
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *v;

		if (!colon || strncmp(line, "drm-", 4))
			continue;
		*colon = 0;
		v = colon + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		v[strcspn(v, "\n")] = 0;
		if (!strcmp(line, "drm-driver"))
			snprintf(driver, sizeof(driver), "%s", v);
		else if (!strcmp(line, "drm-pdev"))
			snprintf(dev, sizeof(dev), "%s", v);
		else if (!strcmp(line, "drm-client-id"))
			client = atoll(v);
		else if (n < MAX_KEYS && (!strncmp(line, "drm-engine-", 11) ||
					  !strncmp(line, "drm-total-", 10) ||
					  !strncmp(line, "drm-resident-", 13))) {
			snprintf(keys[n], sizeof(keys[0]), "%.47s", line + 4);
			vals[n++] = parse_value(v);
		}
	}
	fclose(f);
	if (strcmp(driver, "spyre") || (pdev[0] && strcmp(dev, pdev)))
		return;
	/* A client shared by several fds (dup, fork) counts once. */
	for (i = 0; i < *nseen; i++)
		if (seen[i] == client)
			return;
	if (*nseen < 4096)
		seen[(*nseen)++] = client;
	u->clients++;
	for (i = 0; i < n; i++)
		add_key(u, keys[i], vals[i]);
}

static int scan_procs(const char *pdev, struct usage *out, int max)
{
	static long long seen[4096];
	int nseen = 0, n = 0;
	DIR *proc = opendir("/proc");
	struct dirent *p;

	if (!proc || !pdev[0])	/* no PCI device (sim): nobody else can use it */
		return proc ? (closedir(proc), 0) : 0;
	while ((p = readdir(proc)) && n < max) {
		char path[600];
		struct usage u;
		DIR *fdi;
		struct dirent *fd;
		FILE *f;

		if (!isdigit((unsigned char)p->d_name[0]))
			continue;
		memset(&u, 0, sizeof(u));
		u.pid = atoi(p->d_name);
		snprintf(path, sizeof(path), "/proc/%s/fdinfo", p->d_name);
		fdi = opendir(path);
		if (!fdi)
			continue;
		while ((fd = readdir(fdi))) {
			if (fd->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", p->d_name, fd->d_name);
			read_fdinfo(path, pdev, &u, seen, &nseen);
		}
		closedir(fdi);
		if (!u.clients)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", p->d_name);
		f = fopen(path, "r");
		if (f) {
			if (fgets(u.comm, sizeof(u.comm), f))
				u.comm[strcspn(u.comm, "\n")] = 0;
			fclose(f);
		}
		out[n++] = u;
	}
	closedir(proc);
	return n;
}

/* The driver's debugfs view of queues and rings (root only); NULL if absent. */
static char *read_debugfs(const char *slot, const char *file)
{
	char path[256], *buf;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/%s", slot, file);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	buf = calloc(1, 65536);
	n = buf ? fread(buf, 1, 65535, f) : 0;
	fclose(f);
	if (buf)
		buf[n] = 0;
	return buf;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if (*s == '\n')
			printf("\\n");
		else if ((unsigned char)*s >= 0x20)
			putchar(*s);
	}
	putchar('"');
}

static int count_lines(const char *s, const char *prefix)
{
	int n = 0;

	while (s && (s = strstr(s, prefix))) {
		n++;
		s += strlen(prefix);
	}
	return n;
}

/* Sum of the numbers after every "@key " in @s (e.g. "failed " per ring). */
static long long sum_after(const char *s, const char *key)
{
	long long sum = 0;

	while (s && (s = strstr(s, key))) {
		s += strlen(key);
		sum += atoll(s);
	}
	return sum;
}

static void mib(unsigned long long b, char *out, size_t len)
{
	snprintf(out, len, "%.1f MiB", b / 1048576.0);
}

int main(int argc, char **argv)
{
	enum spyre_backend backend = SPYRE_BACKEND_DRM;	/* real cards unless asked */
	static struct usage procs[MAX_PROCS];
	int json = 0, count = 0, i, j, k, ret;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
			i++;
			backend = !strcmp(argv[i], "sim") ? SPYRE_BACKEND_SIM : SPYRE_BACKEND_DRM;
		} else {
			fprintf(stderr, "usage: spyre-smi [--json] [--backend drm|sim]\n");
			return 2;
		}
	}
	ret = spyre_device_count(backend, &count);
	if (ret) {
		fprintf(stderr, "spyre-smi: %s\n", spyre_last_error());
		return 1;
	}
	if (!count && !json) {
		printf("no Spyre card found: /sys/class/accel has no spyre devices; is the module "
		       "loaded?\n");
		return 1;
	}
	if (json)
		printf("{\"cards\": [");
	for (i = 0; i < count; i++) {
		struct spyre_device_props p;
		spyre_device *dev;
		char used[32], total[32], *queues, *rings;
		int nprocs;

		if (spyre_device_open_backend(backend, i, &dev) ||
		    spyre_device_get_props(dev, &p)) {
			fprintf(stderr, "spyre-smi: card %d: %s\n", i, spyre_last_error());
			return 1;
		}
		spyre_device_close(dev);	/* our own client must not show below */
		nprocs = scan_procs(p.pci_slot, procs, MAX_PROCS);
		queues = p.pci_slot[0] ? read_debugfs(p.pci_slot, "queues") : NULL;
		rings = p.pci_slot[0] ? read_debugfs(p.pci_slot, "rings") : NULL;
		if (json) {
			printf("%s{\"index\": %d, \"name\": ", i ? ", " : "", i);
			json_str(p.name);
			printf(", \"path\": ");
			json_str(p.path);
			printf(", \"backend\": ");
			json_str(p.backend);
			printf(", \"pci_slot\": ");
			json_str(p.pci_slot);
			printf(", \"pci_id\": \"%04x:%04x\", \"hw_version\": \"%u.%u\", "
			       "\"cores\": %u, \"clock_mhz\": %u, \"scratchpad_bytes\": %llu, "
			       "\"memory_total\": %llu, \"memory_used\": %llu, "
			       "\"compute_rings\": %u, \"dma_rings\": %u, \"resets\": %llu, "
			       "\"queues\": %d, \"user_queues\": %d, \"banned_queues\": %d, "
			       "\"jobs_done\": %lld, "
			       "\"jobs_failed\": %lld, \"processes\": [",
			       p.pci_vendor, p.pci_device, SPYRE_HW_VERSION_MAJOR_OF(p.hw_version),
			       SPYRE_HW_VERSION_MINOR_OF(p.hw_version),
			       p.num_cores, p.clock_mhz, (unsigned long long)p.scratchpad_size,
			       (unsigned long long)p.mem_total,
			       (unsigned long long)(p.mem_total - p.mem_free), p.compute_rings,
			       p.dma_rings, (unsigned long long)p.reset_count,
			       queues ? count_lines(queues, "  queue ") : -1,
			       queues ? count_lines(queues, "  user queue ") : -1,
			       queues ? count_lines(queues, "BANNED") : -1,
			       rings ? sum_after(rings, " done ") : -1,
			       rings ? sum_after(rings, " failed ") : -1);
			for (j = 0; j < nprocs; j++) {
				printf("%s{\"pid\": %d, \"comm\": ", j ? ", " : "", procs[j].pid);
				json_str(procs[j].comm);
				printf(", \"clients\": %d", procs[j].clients);
				for (k = 0; k < procs[j].nkeys; k++)
					printf(", \"%s\": %llu", procs[j].key[k], procs[j].val[k]);
				printf("}");
			}
			printf("]");
			if (rings) {
				printf(", \"rings_debugfs\": ");
				json_str(rings);
			}
			printf("}");
		} else {
			mib(p.mem_total - p.mem_free, used, sizeof(used));
			mib(p.mem_total, total, sizeof(total));
			printf("card %d  %-8s %-18s %s backend  pci %s [%04x:%04x] hw %u.%u\n", i,
			       p.name, p.path, p.backend, p.pci_slot[0] ? p.pci_slot : "-",
			       p.pci_vendor, p.pci_device, SPYRE_HW_VERSION_MAJOR_OF(p.hw_version),
			       SPYRE_HW_VERSION_MINOR_OF(p.hw_version));
			printf("        %u cores @ %u MHz, %llu KiB scratchpad/core; memory %s / %s "
			       "used; rings: %u compute, %u dma; resets: %llu\n", p.num_cores,
			       p.clock_mhz, (unsigned long long)p.scratchpad_size >> 10, used, total,
			       p.compute_rings, p.dma_rings, (unsigned long long)p.reset_count);
			if (queues)
				printf("        queues: %d, user queues: %d (banned: %d)\n%s",
				       count_lines(queues, "  queue "),
				       count_lines(queues, "  user queue "),
				       count_lines(queues, "BANNED"), queues);
			else
				printf("        queues: (needs root and debugfs)\n");
			if (rings)
				printf("        jobs: %lld done, %lld failed\n%s", sum_after(rings, " done "),
				       sum_after(rings, " failed "), rings);
			printf("        %-7s %-16s %-7s %s\n", "PID", "COMMAND", "CLIENTS", "USAGE");
			for (j = 0; j < nprocs; j++) {
				printf("        %-7d %-16s %-7d", procs[j].pid, procs[j].comm,
				       procs[j].clients);
				for (k = 0; k < procs[j].nkeys; k++) {
					if (!strncmp(procs[j].key[k], "engine-", 7))
						printf(" %s %.3f ms", procs[j].key[k] + 7,
						       procs[j].val[k] / 1e6);
					else
						printf(" %s %.1f MiB", procs[j].key[k],
						       procs[j].val[k] / 1048576.0);
				}
				printf("\n");
			}
			if (!nprocs)
				printf("        (no process has the card open)\n");
		}
		free(queues);
		free(rings);
	}
	if (json)
		printf("]}\n");
	return 0;
}
