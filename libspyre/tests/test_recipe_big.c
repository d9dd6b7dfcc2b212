// SPDX-License-Identifier: MIT
/*
 * Large recipes: thousands of argument slots (each LAUNCH binds at most 64
 * of them, any 64), and stream slots whose run of device steps is longer
 * than one SUBMIT may carry, cut into a few submissions in order.
 */
#include "harness.h"
#include "kernels.h"

enum { PIECE = 256, CSLOTS = 64 };

/*
 * A recipe of @nslots argument slots: slot 0 is the destination, every
 * other slot one PIECE-byte piece; each step gathers 63 of the pieces
 * (kern_collect over 64 slots) into its own region of slot 0.
 */
static int build_gather(spyre_device *dev, spyre_program *p, unsigned int nslots,
			spyre_recipe **out)
{
	struct spyre_operand cargs[CSLOTS];
	unsigned int step, k, per = CSLOTS - 1;
	spyre_recipe *r;
	int ret;

	ret = spyre_recipe_create(dev, 1, nslots, 0, &r);
	for (step = 0; !ret && step * per < nslots - 1; step++) {
		cargs[0] = spyre_op_arg(0);
		cargs[0].offset = (uint64_t)step * CSLOTS * PIECE;
		cargs[0].size = CSLOTS * PIECE;
		for (k = 1; k < CSLOTS; k++) {
			unsigned int slot = 1 + step * per + (k - 1);

			/* the last step's spare slots gather piece 1 again */
			cargs[k] = spyre_op_arg(slot < nslots ? slot : 1);
		}
		ret = spyre_recipe_compute(r, 0, p, cargs, CSLOTS, spyre_op_ws(0, 0));
	}
	if (!ret)
		ret = spyre_recipe_finalize(r);
	if (ret) {
		if (r)
			spyre_recipe_destroy(r);
		return ret;
	}
	*out = r;
	return 0;
}

/*
 * 4096 argument slots, bound to 4095 pieces of a source buffer in a
 * scrambled order and gathered by 66 LAUNCHes of 64 slots: every piece
 * lands where its slot says, in one submission.
 */
TEST(recipe_thousands_of_slots)
{
	enum { SLOTS = 4096, STEPS = (SLOTS - 1 + CSLOTS - 2) / (CSLOTS - 1) };
	uint64_t dst_bytes = (uint64_t)STEPS * CSLOTS * PIECE, src_bytes = (uint64_t)SLOTS * PIECE;
	struct spyre_buf *args = calloc(SLOTS, sizeof(*args));
	struct spyre_device_stats s0, s1;
	spyre_bo *src, *dst, *hin, *hout;
	unsigned int per = 0, k, bad = 0;
	uint8_t *in, *out;
	spyre_program *p;
	spyre_recipe *r;
	spyre_stream *s;
	size_t sz;
	void *img;

	ASSERT(args, "out of memory");
	img = kern_collect(CSLOTS, PIECE, &sz);
	OK(spyre_program_load(dev, img, sz, &p));
	free(img);
	OK(build_gather(dev, p, SLOTS, &r));
	OK(spyre_recipe_submits_per_launch(r, &per));
	CHECK(per == 1, "%u submits per launch, want 1 (66 launches fit one)", per);
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &s));
	OK(host_bo(dev, src_bytes, &hin, (void **)&in));
	OK(host_bo(dev, dst_bytes, &hout, (void **)&out));
	OK(spyre_bo_create(dev, src_bytes, SPYRE_MEM_DEVICE, &src));
	OK(spyre_bo_create(dev, dst_bytes, SPYRE_MEM_DEVICE, &dst));
	fill_pat(in, src_bytes, 11, 0);
	{
		struct spyre_buf a = spyre_bo_buf(src), b = spyre_bo_buf(hin);

		OK(spyre_memcpy_async(s, &a, &b, src_bytes));
	}
	/* slot k gets piece (k * 1237) % SLOTS of src: a permutation (1237 is odd) */
	args[0] = spyre_bo_buf(dst);
	for (k = 1; k < SLOTS; k++)
		args[k] = buf_of(src, (uint64_t)((k * 1237u) % SLOTS) * PIECE, PIECE);
	OK(spyre_device_get_stats(dev, &s0));
	OK(spyre_recipe_launch(r, &s, args, SLOTS));
	OK(spyre_device_get_stats(dev, &s1));
	CHECK(s1.submits - s0.submits == 1, "%llu SUBMITs for one launch",
	      (unsigned long long)(s1.submits - s0.submits));
	{
		struct spyre_buf a = spyre_bo_buf(hout), b = spyre_bo_buf(dst);

		OK(spyre_memcpy_async(s, &a, &b, dst_bytes));
	}
	OK(spyre_stream_synchronize(s));
	for (k = 1; k < SLOTS; k++) {
		unsigned int step = (k - 1) / (CSLOTS - 1), j = (k - 1) % (CSLOTS - 1) + 1;
		uint64_t at = ((uint64_t)step * CSLOTS + j) * PIECE;
		uint64_t from = (uint64_t)((k * 1237u) % SLOTS) * PIECE;

		if (diff_pat(out + at, PIECE, 11, from) >= 0 && bad++ < 3)
			CHECK(0, "slot %u: piece misplaced", k);
	}
	CHECK(!bad, "%u slots wrong", bad);
	/* the count is checked before anything is bound */
	FAILS_WITH(spyre_recipe_launch(r, &s, args, SLOTS - 1), -EINVAL,
		   "4095 arguments bound, the recipe has 4096 slots");
	args[4000].bo = NULL;
	FAILS_WITH(spyre_recipe_launch(r, &s, args, SLOTS), -EINVAL, "argument 4000 is unbound");
	OK(spyre_stream_synchronize(s));
	OK(spyre_recipe_destroy(r));
	OK(spyre_program_destroy(p));
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(src);
	spyre_bo_destroy(dst);
	spyre_bo_destroy(hin);
	spyre_bo_destroy(hout);
	free(args);
}

TEST(recipe_slot_limits)
{
	struct spyre_operand o[3] = { spyre_op_arg(0), spyre_op_arg(1), spyre_op_arg(70000) };
	spyre_program *p;
	spyre_recipe *r;
	size_t sz;
	void *img;

	FAILS_WITH(spyre_recipe_create(dev, 1, SPYRE_RECIPE_MAX_ARGS + 1, 0, &r), -E2BIG,
		   "at most 65536");
	OK(spyre_recipe_create(dev, 1, SPYRE_RECIPE_MAX_ARGS, 0, &r));
	img = kern_add_f32(64, &sz);
	OK(spyre_program_load(dev, img, sz, &p));
	free(img);
	/* a slot past the recipe's: named in the error */
	FAILS_WITH(spyre_recipe_compute(r, 0, p, o, 3, spyre_op_ws(0, 0)), -EINVAL,
		   "argument slot 70000, the recipe has 65536");
	o[2] = spyre_op_arg(SPYRE_RECIPE_MAX_ARGS - 1);
	OK(spyre_recipe_compute(r, 0, p, o, 3, spyre_op_ws(0, 0)));
	OK(spyre_recipe_finalize(r));
	OK(spyre_recipe_destroy(r));
	OK(spyre_program_destroy(p));
}

/*
 * 1200 LAUNCHes on one stream slot: more commands than one SUBMIT takes
 * (MAX_CMDS, 512 on the sim, less the trace's two), so the recipe is cut
 * into ceil(1200 / 510) = 3 submissions that run in order: each LAUNCH adds
 * 1 to the running value, so any reordering or loss shows.
 */
TEST(recipe_long_stream_is_cut_into_few_submits)
{
	enum { N = 1024, STEPS = 1200 };
	struct spyre_device_props props;
	struct spyre_device_stats s0, s1;
	struct spyre_operand cargs[2] = { spyre_op_arg(0), spyre_op_arg(0) };
	unsigned int per = 0, i, want, nspans = 0, traced = 0;
	struct spyre_trace_span *spans = NULL;
	spyre_bo *x, *h;
	spyre_program *p;
	spyre_recipe *r;
	spyre_stream *s;
	struct spyre_buf a;
	float *m;
	size_t sz;
	void *img;

	OK(spyre_device_get_props(dev, &props));
	img = kern_scale_f32(N, 1.0f, 1.0f, &sz);
	OK(spyre_program_load(dev, img, sz, &p));
	free(img);
	OK(spyre_recipe_create(dev, 1, 1, 0, &r));
	for (i = 0; i < STEPS; i++)
		OK(spyre_recipe_compute(r, 0, p, cargs, 2, spyre_op_ws(0, 0)));
	OK(spyre_recipe_finalize(r));
	OK(spyre_recipe_submits_per_launch(r, &per));
	want = (STEPS + (unsigned int)props.max_cmds - 3) / ((unsigned int)props.max_cmds - 2);
	CHECK(per == want && per >= 2, "%u submits per launch, want %u (max_cmds %llu)", per,
	      want, (unsigned long long)props.max_cmds);
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &s));
	OK(spyre_bo_create(dev, N * 4, SPYRE_MEM_DEVICE, &x));
	OK(host_bo(dev, N * 4, &h, (void **)&m));
	for (i = 0; i < N; i++)
		m[i] = (float)i;
	a = spyre_bo_buf(x);
	{
		struct spyre_buf b = spyre_bo_buf(h);

		OK(spyre_memcpy_async(s, &a, &b, N * 4));
	}
	OK(spyre_stream_synchronize(s));
	/* traced: the trace's TIMESTAMPs fit every part, none is left untraced */
	OK(spyre_trace_start(dev, NULL));
	OK(spyre_device_get_stats(dev, &s0));
	OK(spyre_recipe_launch(r, &s, &a, 1));
	OK(spyre_device_get_stats(dev, &s1));
	CHECK(s1.submits - s0.submits == per, "%llu SUBMITs, the recipe says %u",
	      (unsigned long long)(s1.submits - s0.submits), per);
	OK(spyre_trace_stop_spans(dev, &spans, &nspans));
	CHECK(nspans == per, "%u spans traced, %u SUBMITs", nspans, per);
	for (i = 0; i < nspans; i++) {
		traced += spans[i].cmds;
		/* in order on the compute engine */
		CHECK(!i || spans[i].start_ns >= spans[i - 1].end_ns, "part %u overlaps part %u",
		      i, i - 1);
	}
	CHECK(traced == STEPS, "%u LAUNCHes traced of %d", traced, STEPS);
	free(spans);
	{
		struct spyre_buf b = spyre_bo_buf(h);

		OK(spyre_memcpy_async(s, &b, &a, N * 4));
	}
	OK(spyre_stream_synchronize(s));
	for (i = 0; i < N; i++)
		if (m[i] != (float)i + STEPS) {
			CHECK(0, "x[%u] = %g, want %g", i, m[i], (double)i + STEPS);
			break;
		}
	OK(spyre_recipe_destroy(r));
	OK(spyre_program_destroy(p));
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(x);
	spyre_bo_destroy(h);
}

/*
 * 200 LAUNCHes of 64 slots are far fewer commands than MAX_CMDS, but each
 * takes 23 ring descriptors: 4600 is more than the ring space one SUBMIT
 * may take (MAX_CMDS x 7), so the run is cut by descriptors too (the
 * kernel, and the sim, refuse such a submission with -E2BIG otherwise).
 */
TEST(recipe_wide_launches_are_cut_by_ring_space)
{
	enum { SLOTS = 200 * (CSLOTS - 1) + 1 };
	struct spyre_device_props props;
	struct spyre_buf *args = calloc(SLOTS, sizeof(*args));
	struct spyre_device_stats s0, s1;
	unsigned int per = 0, k, want, fit;
	spyre_bo *src, *dst;
	spyre_program *p;
	spyre_recipe *r;
	spyre_stream *s;
	size_t sz;
	void *img;

	ASSERT(args, "out of memory");
	OK(spyre_device_get_props(dev, &props));
	img = kern_collect(CSLOTS, PIECE, &sz);
	OK(spyre_program_load(dev, img, sz, &p));
	free(img);
	OK(build_gather(dev, p, SLOTS, &r));
	OK(spyre_recipe_submits_per_launch(r, &per));
	fit = ((unsigned int)props.max_cmds * 7 - 2) / 23;
	want = (200 + fit - 1) / fit;
	CHECK(per == want && per >= 2, "%u submits per launch, want %u", per, want);
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &s));
	OK(spyre_bo_create(dev, (uint64_t)SLOTS * PIECE, SPYRE_MEM_DEVICE, &src));
	OK(spyre_bo_create(dev, 200ull * CSLOTS * PIECE, SPYRE_MEM_DEVICE, &dst));
	args[0] = spyre_bo_buf(dst);
	for (k = 1; k < SLOTS; k++)
		args[k] = buf_of(src, (uint64_t)k * PIECE, PIECE);
	OK(spyre_device_get_stats(dev, &s0));
	OK(spyre_recipe_launch(r, &s, args, SLOTS));
	OK(spyre_stream_synchronize(s));
	OK(spyre_device_get_stats(dev, &s1));
	CHECK(s1.submits - s0.submits == per, "%llu SUBMITs, the recipe says %u",
	      (unsigned long long)(s1.submits - s0.submits), per);
	OK(spyre_recipe_destroy(r));
	OK(spyre_program_destroy(p));
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(src);
	spyre_bo_destroy(dst);
	free(args);
}

/*
 * With profiling every LAUNCH brings a TIMESTAMP: 400 steps are 800
 * commands, cut into parts of whole steps (a step and its TIMESTAMP stay
 * together), and every step's completion time is recorded in order.
 */
TEST(recipe_profiled_long_stream_keeps_step_times)
{
	enum { N = 256, STEPS = 400 };
	struct spyre_device_props props;
	struct spyre_operand cargs[2] = { spyre_op_arg(0), spyre_op_arg(0) };
	uint64_t *ns = calloc(STEPS, sizeof(*ns));
	unsigned int per = 0, i, fit;
	spyre_program *p;
	spyre_recipe *r;
	spyre_stream *s;
	struct spyre_buf a;
	spyre_bo *x;
	size_t sz;
	void *img;

	ASSERT(ns, "out of memory");
	OK(spyre_device_get_props(dev, &props));
	img = kern_scale_f32(N, 1.0f, 1.0f, &sz);
	OK(spyre_program_load(dev, img, sz, &p));
	free(img);
	OK(spyre_recipe_create(dev, 1, 1, 0, &r));
	OK(spyre_recipe_set_profiling(r, 1));
	for (i = 0; i < STEPS; i++)
		OK(spyre_recipe_compute(r, 0, p, cargs, 2, spyre_op_ws(0, 0)));
	OK(spyre_recipe_finalize(r));
	OK(spyre_recipe_submits_per_launch(r, &per));
	fit = ((unsigned int)props.max_cmds - 2) / 2;
	CHECK(per == (STEPS + fit - 1) / fit && per >= 2, "%u submits per launch", per);
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &s));
	OK(spyre_bo_create(dev, N * 4, SPYRE_MEM_DEVICE, &x));
	a = spyre_bo_buf(x);
	OK(spyre_recipe_launch(r, &s, &a, 1));
	OK(spyre_stream_synchronize(s));
	OK(spyre_recipe_step_times(r, ns, STEPS));
	for (i = 0; i < STEPS; i++)
		if (!ns[i] || (i && ns[i] < ns[i - 1])) {
			CHECK(0, "step %u: time %llu after %llu", i, (unsigned long long)ns[i],
			      (unsigned long long)(i ? ns[i - 1] : 0));
			break;
		}
	OK(spyre_recipe_destroy(r));
	OK(spyre_program_destroy(p));
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(x);
	free(ns);
}
