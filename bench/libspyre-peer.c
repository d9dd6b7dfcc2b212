// SPDX-License-Identifier: MIT
/*
 * Two cards of one machine, one process: card-to-card copies and a
 * two-card all_reduce (sum of fp32 vectors) by peer DMA against the same
 * through host memory (SPYRE_PEER_DMA=0), next to a host memcpy and a
 * loopback TCP stream measured in the same run. Per message size:
 *
 *  - copy: spyre_memcpy_peer of the whole message (blocking), wall time;
 *  - all_reduce: each card reads the other's vector (spyre_memcpy_peer
 *    into a scratch buffer), then adds it to its own on the card
 *    (spyre_op_binary ADD), both cards synchronised; bus bandwidth as
 *    NCCL counts it for 2 ranks: 2 (n - 1) / n * bytes / time = bytes /
 *    time;
 *  - the peer copy's modelled device time (timing events on the reading
 *    card's stream), against the card's documented 1000 ns + bytes /
 *    50 GB/s.
 *
 * The all_reduce is checked against the host's sum once per size. Wall
 * times are the emulator's (under TCG, QEMU's memcpy); only the ratios
 * within the run and the modelled time mean something.
 *
 *   libspyre-peer [max MiB]        (needs two cards: SPYRE_SIM_CARDS=2 on the sim)
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench_record.h"
#include "spyre/ops.h"
#include "spyre/spyre.h"

#define TRY(x) do { if ((x)) { fprintf(stderr, "%s: %s\n", #x, spyre_last_error()); \
			exit(2); } } while (0)

static const char *backend = "drm";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int reps_for(uint64_t bytes)
{
	uint64_t r = (64ull << 20) / bytes;

	return r < 3 ? 3 : r > 20 ? 20 : (int)r;
}

/* ---- host references: memcpy and a loopback TCP stream ------------------ */

static double memcpy_gbs(uint64_t bytes)
{
	char *a = malloc(bytes), *b = malloc(bytes);
	int i, reps = reps_for(bytes) * 4;
	double t0, best = 1e9;

	memset(a, 1, bytes);
	memset(b, 2, bytes);
	for (int round = 0; round < 3; round++) {
		t0 = now_s();
		for (i = 0; i < reps; i++)
			memcpy(i & 1 ? a : b, i & 1 ? b : a, bytes);
		if ((now_s() - t0) / reps < best)
			best = (now_s() - t0) / reps;
	}
	free(a);
	free(b);
	return bytes / best / 1e9;
}

struct sink {
	int fd;
	uint64_t bytes;
};

static void *sink_run(void *arg)
{
	struct sink *k = arg;
	static char buf[1 << 20];
	uint64_t got = 0;
	ssize_t n;

	while (got < k->bytes && (n = read(k->fd, buf, sizeof(buf))) > 0)
		got += n;
	return NULL;
}

/* One TCP stream over 127.0.0.1 (what gloo uses between ranks of one machine). */
static double loopback_gbs(uint64_t bytes)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int ls = socket(AF_INET, SOCK_STREAM, 0), cs = socket(AF_INET, SOCK_STREAM, 0);
	static char buf[1 << 20];
	struct sink k = { .bytes = bytes };
	pthread_t th;
	uint64_t sent = 0;
	double t0, t;
	ssize_t n;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (ls < 0 || cs < 0 || bind(ls, (void *)&a, sizeof(a)) || listen(ls, 1) ||
	    getsockname(ls, (void *)&a, &len) || connect(cs, (void *)&a, sizeof(a)))
		return 0;
	k.fd = accept(ls, NULL, NULL);
	pthread_create(&th, NULL, sink_run, &k);
	t0 = now_s();
	while (sent < bytes && (n = write(cs, buf, sizeof(buf))) > 0)
		sent += n;
	pthread_join(th, NULL);
	t = now_s() - t0;
	close(cs);
	close(k.fd);
	close(ls);
	return bytes / t / 1e9;
}

/* ---- the cards ----------------------------------------------------------- */

struct card {
	spyre_device *dev;
	spyre_stream *comp;
	spyre_ops *ops;
	spyre_bo *vec, *tmp;
};

static void all_reduce(struct card c[2], uint64_t bytes)
{
	int64_t n = bytes / 4;
	int i;

	for (i = 0; i < 2; i++) {
		struct spyre_buf dst = { c[i].tmp, 0, bytes }, src = { c[1 - i].vec, 0, bytes };

		TRY(spyre_memcpy_peer(c[i].comp, &dst, c[1 - i].comp, &src, bytes));
	}
	for (i = 0; i < 2; i++) {
		struct spyre_tensor v = spyre_tensor_make(SPYRE_FLOAT32, 1, &n,
							  (struct spyre_buf){ c[i].vec, 0, bytes });
		struct spyre_tensor t = spyre_tensor_make(SPYRE_FLOAT32, 1, &n,
							  (struct spyre_buf){ c[i].tmp, 0, bytes });

		TRY(spyre_op_binary(c[i].ops, c[i].comp, SPYRE_BIN_ADD, &v, &t, &v));
	}
	for (i = 0; i < 2; i++)
		TRY(spyre_stream_synchronize(c[i].comp));
}

/* Upload 1, 2, 3, ... on card 0 and 0.5, 1.5, ... on card 1; check the sums. */
static void check_all_reduce(struct card c[2], uint64_t bytes)
{
	uint64_t n = bytes / 4, k;
	float *h = malloc(bytes), *out = malloc(bytes);
	int i;

	for (i = 0; i < 2; i++) {
		struct spyre_buf b = { c[i].vec, 0, bytes };

		for (k = 0; k < n; k++)
			h[k] = (float)(k % 1000) + (i ? 0.5f : 1.0f);
		TRY(spyre_memcpy_from_host_async(c[i].comp, &b, h, bytes));
		TRY(spyre_stream_synchronize(c[i].comp));
	}
	all_reduce(c, bytes);
	for (i = 0; i < 2; i++) {
		struct spyre_buf b = { c[i].vec, 0, bytes };

		TRY(spyre_memcpy_to_host(c[i].comp, out, &b, bytes));
		for (k = 0; k < n; k++)
			if (out[k] != 2.0f * (float)(k % 1000) + 1.5f) {
				fprintf(stderr, "all_reduce: card %d element %llu is %g, not %g\n", i,
					(unsigned long long)k, out[k], 2.0f * (float)(k % 1000) + 1.5f);
				exit(1);
			}
	}
	free(h);
	free(out);
}

static double time_copy(struct card c[2], uint64_t bytes)
{
	struct spyre_buf dst = { c[0].tmp, 0, bytes }, src = { c[1].vec, 0, bytes };
	int i, reps = reps_for(bytes);
	double t0, best = 1e9;

	TRY(spyre_memcpy_peer(c[0].comp, &dst, c[1].comp, &src, bytes));
	for (int round = 0; round < 3; round++) {
		t0 = now_s();
		for (i = 0; i < reps; i++)
			TRY(spyre_memcpy_peer(c[0].comp, &dst, c[1].comp, &src, bytes));
		TRY(spyre_stream_synchronize(c[0].comp));
		if ((now_s() - t0) / reps < best)
			best = (now_s() - t0) / reps;
	}
	return best;
}

static double time_all_reduce(struct card c[2], uint64_t bytes)
{
	int i, reps = reps_for(bytes);
	double t0, best = 1e9;

	all_reduce(c, bytes);
	for (int round = 0; round < 3; round++) {
		t0 = now_s();
		for (i = 0; i < reps; i++)
			all_reduce(c, bytes);
		if ((now_s() - t0) / reps < best)
			best = (now_s() - t0) / reps;
	}
	return best;
}

/* Modelled device time of one peer copy, from timing events on card 0. */
static uint64_t modelled_copy_ns(struct card c[2], uint64_t bytes)
{
	struct spyre_buf dst = { c[0].tmp, 0, bytes }, src = { c[1].vec, 0, bytes };
	spyre_event *e0, *e1;
	uint64_t ns;

	TRY(spyre_event_create(c[0].dev, SPYRE_EVENT_TIMING, &e0));
	TRY(spyre_event_create(c[0].dev, SPYRE_EVENT_TIMING, &e1));
	TRY(spyre_event_record(e0, c[0].comp));
	TRY(spyre_memcpy_peer(c[0].comp, &dst, c[1].comp, &src, bytes));
	TRY(spyre_event_record(e1, c[0].comp));
	TRY(spyre_event_synchronize(e1));
	TRY(spyre_event_elapsed_ns(e0, e1, &ns));
	spyre_event_destroy(e0);
	spyre_event_destroy(e1);
	return ns;
}

int main(int argc, char **argv)
{
	uint64_t max = (argc > 1 ? strtoull(argv[1], NULL, 0) : 64) << 20;
	static const uint64_t sizes[] = { 64 << 10, 1 << 20, 16 << 20, 64 << 20 };
	struct spyre_device_props props;
	struct card c[2];
	char how[160];
	int i, count = 0, can;
	size_t s;

	TRY(spyre_device_count(SPYRE_BACKEND_DEFAULT, &count));
	if (count < 2) {
		fprintf(stderr, "libspyre-peer: needs two cards (found %d)\n", count);
		return 2;
	}
	for (i = 0; i < 2; i++) {
		TRY(spyre_device_open(i, &c[i].dev));
		TRY(spyre_stream_create(c[i].dev, SPYRE_ENGINE_COMPUTE, &c[i].comp));
		TRY(spyre_ops_create(c[i].dev, 0, &c[i].ops));
		TRY(spyre_bo_create(c[i].dev, max, SPYRE_MEM_DEVICE, &c[i].vec));
		TRY(spyre_bo_create(c[i].dev, max, SPYRE_MEM_DEVICE, &c[i].tmp));
	}
	TRY(spyre_device_get_props(c[0].dev, &props));
	backend = props.backend[0] == 's' ? "sim" : "drm";
	can = spyre_device_can_peer(c[0].dev, c[1].dev);
	printf("# %s, card interface %u.%u, peer DMA between the two cards: %s\n", props.backend,
	       props.hw_version >> 16, props.hw_version & 0xffff, can == 1 ? "yes" : "no");
	if (can != 1)
		return 2;
	printf("# loopback TCP %.2f GB/s (one 256 MiB stream)\n", loopback_gbs(256ull << 20));
	printf("%10s %10s %10s %10s %10s %10s %10s %12s\n", "bytes", "memcpy", "copy-peer",
	       "copy-host", "ar-peer", "ar-host", "peer/host", "modelled-ns");
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]) && sizes[s] <= max; s++) {
		uint64_t b = sizes[s], mod;
		double mc, cp, ch, ap, ah;
		char name[64];

		unsetenv("SPYRE_PEER_DMA");
		check_all_reduce(c, b);
		cp = time_copy(c, b);
		ap = time_all_reduce(c, b);
		mod = modelled_copy_ns(c, b);
		setenv("SPYRE_PEER_DMA", "0", 1);
		check_all_reduce(c, b);
		ch = time_copy(c, b);
		ah = time_all_reduce(c, b);
		unsetenv("SPYRE_PEER_DMA");
		mc = memcpy_gbs(b);
		printf("%10llu %8.2f GB/s %6.3f GB/s %6.3f GB/s %6.3f GB/s %6.3f GB/s %8.2fx %12llu\n",
		       (unsigned long long)b, mc, b / cp / 1e9, b / ch / 1e9, b / ap / 1e9,
		       b / ah / 1e9, ah / ap, (unsigned long long)mod);
		snprintf(how, sizeof(how), "%llu B fp32, 2 cards in one process, best of 3 rounds",
			 (unsigned long long)b);

		snprintf(name, sizeof(name), "peer_all_reduce_%lluk_vs_host", (unsigned long long)b >> 10);
		bench_record(name, ah / ap, "x", "all_reduce time through host / by peer DMA", how,
			     backend);
		snprintf(name, sizeof(name), "peer_all_reduce_%lluk_vs_memcpy",
			 (unsigned long long)b >> 10);
		bench_record(name, (b / ap) / (mc * 1e9), "x",
			     "all_reduce bus bandwidth by peer DMA / host memcpy bandwidth", how,
			     backend);
		snprintf(name, sizeof(name), "peer_copy_%lluk_modelled", (unsigned long long)b >> 10);
		bench_record(name, (double)mod, "ns", "modelled device time of one peer copy", how,
			     backend);
	}
	for (i = 0; i < 2; i++) {
		spyre_bo_destroy(c[i].vec);
		spyre_bo_destroy(c[i].tmp);
		spyre_ops_destroy(c[i].ops);
		spyre_stream_destroy(c[i].comp);
		spyre_device_close(c[i].dev);
	}
	return 0;
}
