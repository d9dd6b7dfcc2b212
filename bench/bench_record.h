/* SPDX-License-Identifier: MIT */
/*
 * One machine-readable line per benchmark figure, next to the human-readable
 * output. bench/report collects these lines from every benchmark, adds where
 * and when they ran (backend, kernel, QEMU, torch, date) and writes
 * build/bench/results.json plus one table.
 *
 *   @bench {"name": "...", "value": 1.5, "unit": "x", "ratio_of": "...", "how": "..."}
 *
 * Every figure is either a ratio of two quantities measured side by side in
 * the same run (@ratio_of says which, numerator first), a count, or
 * modelled device time (deterministic); never a bare wall-clock number.
 */
#ifndef SPYRE_BENCH_RECORD_H
#define SPYRE_BENCH_RECORD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Print @s as a JSON string body (the strings here are ASCII literals). */
static inline void bench_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		if ((unsigned char)*s >= 0x20)
			putchar(*s);
	}
	putchar('"');
}

/**
 * bench_record() - print one figure for bench/report
 * @name: stable identifier ("recipe_launch_vs_null_ioctl"), compared across runs
 * @value: the figure
 * @unit: "x" for ratios, "ns" for modelled device time, "count", ...
 * @ratio_of: what the figure is: "A / B" for ratios, else a description
 * @how: how it was measured (rounds, sizes, best-of or median)
 * @backend: "drm", "sim" or "model" (the card model linked in directly);
 *	"drm" becomes "drm-uq" when SPYRE_DRM_QUEUES=user put libspyre's
 *	submissions on user-mode queues, so both paths' figures stand side
 *	by side in the report
 */
static inline void bench_record(const char *name, double value, const char *unit,
				const char *ratio_of, const char *how, const char *backend)
{
	const char *q = getenv("SPYRE_DRM_QUEUES");

	if (!strcmp(backend, "drm") && q && !strcmp(q, "user"))
		backend = "drm-uq";
	fputs("@bench {\"name\": ", stdout);
	bench_json_str(name);
	printf(", \"value\": %.6g, \"unit\": ", value);
	bench_json_str(unit);
	fputs(", \"ratio_of\": ", stdout);
	bench_json_str(ratio_of);
	fputs(", \"how\": ", stdout);
	bench_json_str(how);
	fputs(", \"backend\": ", stdout);
	bench_json_str(backend);
	fputs("}\n", stdout);
	fflush(stdout);
}

#endif /* SPYRE_BENCH_RECORD_H */
