// SPDX-License-Identifier: MIT
/*
 * Test runner: runs every registered test (or those named on the command
 * line) in a child process with a time limit, prints one line per test and
 * a final "N passed, N failed" line; exits non-zero on any failure.
 */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static struct test *tests;
int test_failures;
const char *test_backend = "drm";

void test_register(struct test *t)
{
	struct test **pp = &tests;

	while (*pp && ((*pp)->order < t->order ||
		       ((*pp)->order == t->order && strcmp((*pp)->name, t->name) < 0)))
		pp = &(*pp)->next;
	t->next = *pp;
	*pp = t;
}

static int run_child(struct test *t)
{
	spyre_device *dev = NULL;
	int ret;

	alarm(120);
	if (t->kernel_queues)
		setenv("SPYRE_DRM_QUEUES", "kernel", 1);
	ret = spyre_device_open(0, &dev);
	if (ret) {
		fprintf(stderr, "  cannot open the device: %s\n", spyre_last_error());
		return 1;
	}
	t->fn(dev);
	ret = spyre_device_close(dev);
	if (ret && ret != -EBUSY) {
		fprintf(stderr, "  spyre_device_close: %s\n", spyre_last_error());
		test_failures++;
	}
	if (ret == -EBUSY && !test_failures) {
		fprintf(stderr, "  the test leaked objects: %s\n", spyre_last_error());
		test_failures++;
	}
	return test_failures ? 1 : 0;
}

static bool wanted(const char *name, int argc, char **argv)
{
	int i;

	if (argc < 2)
		return true;
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	const char *b = getenv("SPYRE_BACKEND");
	int passed = 0, failed = 0;
	struct test *t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (b && *b) {
		test_backend = !strcmp(b, "sim") ? "sim" : "drm";
	} else {
		int cards = 0;

		spyre_device_count(SPYRE_BACKEND_DRM, &cards);
		test_backend = cards > 0 ? "drm" : "sim";
	}
	printf("libspyre tests on the %s backend\n", test_backend);
	for (t = tests; t; t = t->next) {
		struct timespec t0, t1;
		int status;
		pid_t pid;

		if (!wanted(t->name, argc, argv))
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		fflush(NULL);
		pid = fork();
		if (pid == 0)
			exit(run_child(t));	/* exit: LeakSanitizer checks the child */
		waitpid(pid, &status, 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			passed++;
			printf("ok   %-28s %6.2f s\n", t->name,
			       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
		} else {
			failed++;
			if (WIFSIGNALED(status))
				printf("FAIL %-28s (signal %d%s)\n", t->name, WTERMSIG(status),
				       WTERMSIG(status) == SIGALRM ? ": timed out" : "");
			else
				printf("FAIL %-28s\n", t->name);
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
