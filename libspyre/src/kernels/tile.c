// SPDX-License-Identifier: MIT
/*
 * Tile expression evaluator (see tile.h). Values live in the scratchpad in
 * one of four layouts inside a tile of tr x tc: FULL (row stride tc), ROW
 * (one row, broadcast over rows: stride 0), COL (one value per row, packed)
 * and SCAL (one value). The card's vector unit reads a ROW as src0/src1
 * with stride 0 and a COL/SCAL as src1 with SRC1_COL; a COL/SCAL src0 of a
 * non-commutative function is first expanded (ones-row x value).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tile.h"

static bool is_bin(unsigned int f)
{
	return (f >= SPYRE_VF_ADD && f <= SPYRE_VF_MIN) ||
	       (f >= SPYRE_VF_CMP_EQ && f <= SPYRE_VF_SELECT) ||
	       (f >= SPYRE_VF_AND && f <= SPYRE_VF_REM);
}

static bool commutes(unsigned int f)
{
	return f == SPYRE_VF_ADD || f == SPYRE_VF_MUL || f == SPYRE_VF_MAX || f == SPYRE_VF_MIN ||
	       f == SPYRE_VF_CMP_EQ || f == SPYRE_VF_CMP_NE || f == SPYRE_VF_AND ||
	       f == SPYRE_VF_OR || f == SPYRE_VF_XOR;
}

/* An integer result type: the uop runs in the vector unit's integer mode. */
static bool int_dt(unsigned int dt)
{
	return dt == SPYRE_DT_INT32 || dt == SPYRE_DT_INT64;
}

/* Index of the integer ones row of @dt (0: int32, 1: int64). */
static unsigned int ones_ix(unsigned int dt)
{
	return dt == SPYRE_DT_INT64;
}

int uop_is_row(const struct uop *u)
{
	return u->kind == U_ROTH ||
	       (u->kind == U_VF && (u->func == SPYRE_VF_SUM_ROW || u->func == SPYRE_VF_MAX_ROW ||
				   u->func == SPYRE_VF_SOFTMAX_ROW ||
				   u->func == SPYRE_VF_ARGMAX_ROW ||
				   u->func == SPYRE_VF_CUMSUM_ROW));
}

static unsigned int dsize(unsigned int dt)
{
	return pb_dtype_size(dt);
}

/* The dtype fp32-mode functions read value @v in: its fp32 copy's when it has one. */
static uint8_t read_dt(const struct texpr *t, unsigned int v)
{
	return t->conv[v] ? SPYRE_DT_FP32 : t->dt[v];
}

/*
 * A converted value is read as its fp32 copy by every fp32-mode function,
 * also by those analysed before a later one asked for the copy: a binary
 * function whose operands had one dtype (x * y in fp16) then reads one as
 * fp32 and the other as fp16, and the vector unit takes both in one dtype.
 * Its other operand is converted too, until no function mixes them (a
 * value two fused expressions read is one input: lerp's a + w * (b - a)).
 */
static void same_operand_types(struct texpr *t, const struct ew_spec *s)
{
	bool changed = true;
	unsigned int i;

	while (changed) {
		changed = false;
		for (i = 0; i < s->nuops; i++) {
			const struct uop *u = &s->u[i];
			unsigned int a = (unsigned int)u->a, b = (unsigned int)u->b, k;
			unsigned int ops[2] = { a, b };

			if (u->kind != U_VF || !is_bin(u->func) || t->imode[s->nin + i] ||
			    read_dt(t, a) == read_dt(t, b))
				continue;
			for (k = 0; k < 2; k++)
				if (!t->conv[ops[k]] && t->dt[ops[k]] != SPYRE_DT_FP32) {
					t->conv[ops[k]] = true;
					changed = true;
				}
		}
	}
}

int texpr_analyse(struct texpr *t, const struct ew_spec *s, const uint8_t *in_cls,
		  uint8_t out_cls, bool acc0, char *why, size_t whylen)
{
	unsigned int nin = s->nin, i, v, last;

	memset(t, 0, sizeof(*t));
	t->nv = nin + s->nuops;
	if (!s->nuops || t->nv > K_MAX_IN + K_MAX_UOPS) {
		snprintf(why, whylen, "empty or oversized expression");
		return -EOPNOTSUPP;
	}
	for (i = 0; i < nin; i++) {
		t->cls[i] = in_cls[i];
		t->dt[i] = s->in[i].dtype;	/* acc0: the product's (fp32 or int32) */
		t->imode[i] = t->dt[i] == SPYRE_DT_INT64;
	}
	for (i = 0; i < s->nuops; i++) {
		const struct uop *u = &s->u[i];
		unsigned int a = (unsigned int)u->a, b = (unsigned int)u->b;

		v = nin + i;
		t->dt[v] = u->dt;
		t->imode[v] = int_dt(u->dt);
		if (u->dt != SPYRE_DT_FP32 && !int_dt(u->dt)) {
			snprintf(why, whylen, "malformed expression (value dtype %u)", u->dt);
			return -EOPNOTSUPP;
		}
		if (u->kind == U_CONST) {
			t->cls[v] = CL_SCAL;
			continue;
		}
		if (u->kind == U_ROTH) {
			/* fp32 result of a float value with columns (whole rows) */
			if (u->a < 0 || a >= v || !(t->cls[a] & 1) || t->imode[a] ||
			    u->dt != SPYRE_DT_FP32 || t->dt[a] == SPYRE_DT_INT64) {
				snprintf(why, whylen, "malformed expression (rotate half)");
				return -EOPNOTSUPP;
			}
			t->cls[v] = t->cls[a];
			t->whole = true;
			continue;
		}
		if (u->kind != U_VF) {
			snprintf(why, whylen, "malformed expression (uop kind %u)", u->kind);
			return -EOPNOTSUPP;
		}
		if (u->a < 0 || a >= v || (is_bin(u->func) && (u->b < 0 || b >= v))) {
			snprintf(why, whylen, "malformed expression");
			return -EOPNOTSUPP;
		}
		if (t->imode[v] && u->func != SPYRE_VF_COPY &&
		    (t->dt[a] != u->dt || (is_bin(u->func) && t->dt[b] != u->dt))) {
			snprintf(why, whylen, "malformed expression (integer operand types)");
			return -EOPNOTSUPP;
		}
		if (!t->imode[v] && u->func != SPYRE_VF_COPY && t->dt[a] == SPYRE_DT_INT64)
			t->conv[a] = true;	/* the fp32 mode has no int64 */
		if (!t->imode[v] && is_bin(u->func) && t->dt[b] == SPYRE_DT_INT64)
			t->conv[b] = true;
		if (t->imode[v] && is_bin(u->func)) {
			uint8_t ca = t->cls[a], cb = t->cls[b], res = ca | cb;

			if ((res & 1) && !(ca & 1)) {
				if (commutes(u->func) && (cb & 1)) {
					t->swap[i] = true;
				} else {
					t->expand[i] = true;
					t->edt[i] = u->dt;
					t->need_iones[ones_ix(u->dt)] = true;
				}
			}
			t->cls[v] = res;
		} else if (is_bin(u->func)) {
			uint8_t ca = t->cls[a], cb = t->cls[b], res = ca | cb;

			if (t->dt[a] != t->dt[b]) {
				if (t->dt[a] != SPYRE_DT_FP32)
					t->conv[a] = true;
				if (t->dt[b] != SPYRE_DT_FP32)
					t->conv[b] = true;
			}
			if ((res & 1) && !(ca & 1)) {
				if (commutes(u->func) && (cb & 1)) {
					t->swap[i] = true;
				} else {
					t->expand[i] = true;
					t->edt[i] = SPYRE_DT_FP32;
					t->need_ones = true;
					if (t->dt[a] != SPYRE_DT_FP32)
						t->conv[a] = true;
					if (t->dt[b] != SPYRE_DT_FP32)
						t->conv[b] = true;
				}
			}
			t->cls[v] = res;
		} else if (u->func == SPYRE_VF_SUM_ROW || u->func == SPYRE_VF_MAX_ROW ||
			   u->func == SPYRE_VF_ARGMAX_ROW) {
			t->cls[v] = t->cls[a] & ~1;
			t->whole = true;
		} else if (u->func == SPYRE_VF_SOFTMAX_ROW || u->func == SPYRE_VF_CUMSUM_ROW) {
			t->cls[v] = t->cls[a];
			t->whole = true;
		} else if (u->func == SPYRE_VF_FILL || u->func >= SPYRE_VF_COUNT) {
			snprintf(why, whylen, "vector function %u in an expression", u->func);
			return -EOPNOTSUPP;
		} else {
			t->cls[v] = t->cls[a];
		}
	}
	same_operand_types(t, s);
	last = t->nv - 1;
	t->out_dt = s->out.dtype;
	t->out_cls = out_cls;
	if ((t->cls[last] | out_cls) != out_cls) {
		snprintf(why, whylen, "expression result does not fit the output");
		return -EOPNOTSUPP;
	}
	if (acc0 && s->nuops == 1 && s->u[0].kind == U_VF && s->u[0].func == SPYRE_VF_COPY &&
	    s->u[0].a == 0 && t->dt[0] == t->out_dt && t->cls[0] == out_cls) {
		/* the product is the result: stored straight from the accumulator */
		t->passthru = true;
		t->direct = true;
	} else if (t->cls[last] == out_cls && s->u[s->nuops - 1].kind == U_VF && last >= nin &&
		   (t->out_dt != SPYRE_DT_INT64 || t->imode[last] ||
		    (s->u[s->nuops - 1].func == SPYRE_VF_COPY && t->imode[s->u[s->nuops - 1].a]))) {
		/* (an int64 result needs the integer mode: else expanded into it) */
		t->direct = true;
	} else {
		t->final_expand = true;
		if ((out_cls & 1) && !(t->cls[last] & 1) && t->imode[last]) {
			t->need_iones[ones_ix(t->dt[last])] = true;
		} else if ((out_cls & 1) && !(t->cls[last] & 1)) {
			t->need_ones = true;
			if (t->dt[last] != SPYRE_DT_FP32)
				t->conv[last] = true;
		}
	}
	return 0;
}

static uint32_t nelem(uint8_t cls, uint32_t tr, uint32_t tc)
{
	return (cls & 2 ? tr : 1) * (cls & 1 ? tc : 1);
}

uint32_t texpr_layout(struct texpr *t, const struct ew_spec *s, uint32_t base, uint32_t tr,
		      uint32_t tc, unsigned int skip)
{
	uint32_t o = align_up(base, SP_ALIGN);
	unsigned int p, v, i, last = t->nv - 1;

	t->tr = tr;
	t->tc = tc;
	if (t->need_ones) {
		t->ones = o;
		o = align_up(o + tc * 4, SP_ALIGN);
	}
	for (i = 0; i < 2; i++)
		if (t->need_iones[i]) {
			t->iones[i] = o;
			o = align_up(o + tc * (i ? 8 : 4), SP_ALIGN);
		}
	t->consts = o;
	for (i = 0; i < s->nuops; i++)
		if (s->u[i].kind == U_CONST) {
			o = (o + 7) & ~7u;	/* int64 constants are 8-byte aligned */
			t->off[0][s->nin + i] = t->off[1][s->nin + i] = o;
			o += dsize(s->u[i].dt);
		}
	o = align_up(o, SP_ALIGN);
	for (p = 0; p < 2; p++) {
		for (v = skip; v < t->nv; v++) {
			if (v >= s->nin && s->u[v - s->nin].kind == U_CONST)
				continue;
			if (t->direct && v == last)
				continue;
			t->off[p][v] = o;
			o = align_up(o + nelem(t->cls[v], tr, tc) * dsize(t->dt[v]), SP_ALIGN);
		}
		for (v = 0; v < t->nv; v++) {
			if (!t->conv[v])
				continue;
			t->coff[p][v] = o;
			o = align_up(o + nelem(t->cls[v], tr, tc) * 4, SP_ALIGN);
		}
		for (i = 0; i < s->nuops; i++) {
			if (!t->expand[i])
				continue;
			t->eoff[p][i] = o;
			o = align_up(o + nelem(t->cls[s->nin + i], tr, tc) * dsize(t->edt[i]),
				     SP_ALIGN);
		}
		t->stage[p] = o;
		o = align_up(o + nelem(t->out_cls, tr, tc) * dsize(t->out_dt), SP_ALIGN);
		if (t->direct)
			t->off[p][last] = t->stage[p];
	}
	if (t->passthru) {
		t->stage[0] = t->off[0][0];
		t->stage[1] = t->off[1][0];
	}
	t->end = o;
	return o;
}

void texpr_prologue(struct texpr *t, const struct ew_spec *s, struct pb *p, unsigned int core)
{
	struct pb_vec v;
	unsigned int i;

	memset(&v, 0, sizeof(v));
	v.func = SPYRE_VF_FILL;
	v.dtype = v.dtype_out = SPYRE_DT_FP32;
	v.rows = 1;
	if (t->need_ones) {
		v.cols = t->tc;
		v.d = t->ones;
		v.d_stride = t->tc;
		v.imm0 = 1.0f;
		pb_vec(p, core, &v);
	}
	for (i = 0; i < 2; i++) {
		struct pb_vec w = v;

		if (!t->need_iones[i])
			continue;
		w.flags = SPYRE_VEC_INT;
		w.dtype = w.dtype_out = i ? SPYRE_DT_INT64 : SPYRE_DT_INT32;
		w.cols = t->tc;
		w.d = t->iones[i];
		w.d_stride = t->tc;
		w.k = 1;
		pb_vec(p, core, &w);
	}
	for (i = 0; i < s->nuops; i++) {
		struct pb_vec w = v;

		if (s->u[i].kind != U_CONST)
			continue;
		w.cols = 1;
		w.d = t->off[0][s->nin + i];
		w.d_stride = 1;
		w.imm0 = s->u[i].imm0;
		if (int_dt(s->u[i].dt)) {
			w.flags = SPYRE_VEC_INT;
			w.dtype = w.dtype_out = s->u[i].dt;
			w.k = s->u[i].k;
		}
		pb_vec(p, core, &w);
	}
}

/* Operand view of value @v in parity @par (its fp32 copy when converted). */
struct opnd {
	uint32_t off;
	uint8_t dt, cls;
	bool imode;	/* an integer value: expanded in integer mode */
};

/* @v itself (@raw) or, when it has one, its fp32 copy. */
static struct opnd get_as(const struct texpr *t, unsigned int v, unsigned int par, bool raw)
{
	struct opnd o = { t->off[par][v], t->dt[v], t->cls[v], t->imode[v] };

	if (t->conv[v] && !raw) {
		o.off = t->coff[par][v];
		o.dt = SPYRE_DT_FP32;
		o.imode = false;
	}
	return o;
}


/* Stride (elements) of a value of class @cls read as a source. */
static uint32_t src_stride(uint8_t cls, uint32_t tc)
{
	switch (cls) {
	case CL_FULL:
		return tc;
	case CL_COL:
		return 1;
	default:
		return 0;
	}
}

static uint32_t dst_stride(uint8_t cls, uint32_t tc)
{
	return cls == CL_FULL || cls == CL_ROW ? tc : 1;
}

/* dst (class @rc) = broadcast of @a (class a.cls) to rc, as fp32/@dt_out. */
static void expand(const struct texpr *t, struct pb *p, unsigned int core, struct opnd a,
		   uint8_t rc, uint32_t dst, uint8_t dt_out, uint32_t trr, uint32_t tcc)
{
	bool im;
	struct pb_vec v;

	memset(&v, 0, sizeof(v));
	v.rows = rc & 2 ? trr : 1;
	v.cols = rc & 1 ? tcc : 1;
	v.d = dst;
	v.d_stride = dst_stride(rc, t->tc);
	v.dtype_out = dt_out;
	/* an integer value (an int32 input included) into an integer buffer */
	im = a.imode || (int_dt(a.dt) && int_dt(dt_out));
	if (im || dt_out == SPYRE_DT_INT64)
		v.flags = SPYRE_VEC_INT;
	if ((rc & 1) && !(a.cls & 1) && im) {
		/* integer ones-row x per-row value, exact */
		v.func = SPYRE_VF_MUL;
		v.flags |= SPYRE_VEC_SRC1_COL;
		v.dtype = a.dt;
		v.s0 = t->iones[ones_ix(a.dt)];
		v.s0_stride = 0;
		v.s1 = a.off;
		v.s1_stride = a.cls & 2 ? 1 : 0;
	} else if ((rc & 1) && !(a.cls & 1)) {
		/* ones-row x per-row value */
		v.func = SPYRE_VF_MUL;
		v.flags = SPYRE_VEC_SRC1_COL;
		v.dtype = SPYRE_DT_FP32;
		v.s0 = t->ones;
		v.s0_stride = 0;
		v.s1 = a.off;
		v.s1_stride = a.cls & 2 ? 1 : 0;
	} else {
		v.func = SPYRE_VF_COPY;
		v.dtype = a.dt;
		v.s0 = a.off;
		v.s0_stride = src_stride(a.cls, t->tc);
		if (a.cls == CL_SCAL || (a.cls == CL_COL && !(rc & 2)))
			v.s0_stride = 0;
	}
	pb_vec(p, core, &v);
}

/* The fp32 copy of value @v (an int64 one converted in integer mode). */
static void conv_copy(const struct texpr *t, struct pb *p, unsigned int core, unsigned int par,
		      unsigned int v, uint32_t trr, uint32_t tcc)
{
	struct pb_vec x;

	memset(&x, 0, sizeof(x));
	x.func = SPYRE_VF_COPY;
	x.flags = t->imode[v] ? SPYRE_VEC_INT : 0;
	x.dtype = t->dt[v];
	x.dtype_out = SPYRE_DT_FP32;
	x.rows = t->cls[v] & 2 ? trr : 1;
	x.cols = t->cls[v] & 1 ? tcc : 1;
	x.s0 = t->off[par][v];
	x.s0_stride = x.d_stride = dst_stride(t->cls[v], t->tc);
	x.d = t->coff[par][v];
	pb_vec(p, core, &x);
}

/*
 * Value @v = rotate half of @a over rows of @tcc (even: the kernel keeps
 * whole rows): two vector instructions on the halves, -a[h..) then a[..h).
 */
static void roth(const struct texpr *t, struct pb *p, unsigned int core, unsigned int par,
		 unsigned int v, struct opnd a, uint32_t trr, uint32_t tcc)
{
	unsigned int last = t->nv - 1;
	uint8_t dto = (t->direct && v == last) ? t->out_dt : t->dt[v];
	uint32_t h = tcc / 2;
	struct pb_vec x;

	memset(&x, 0, sizeof(x));
	x.rows = (t->cls[v] & 2) ? trr : 1;
	x.cols = h;
	x.dtype = a.dt;
	x.dtype_out = dto;
	x.s0_stride = src_stride(a.cls, t->tc);
	x.d_stride = dst_stride(t->cls[v], t->tc);
	x.func = SPYRE_VF_SCALE;
	x.imm0 = -1.0f;
	x.imm1 = -0.0f;	/* -x + -0 keeps the sign of a zero: neg(0) is -0 */
	x.s0 = a.off + h * dsize(a.dt);
	x.d = t->off[par][v];
	pb_vec(p, core, &x);
	x.func = SPYRE_VF_COPY;
	x.imm0 = 0.0f;
	x.s0 = a.off;
	x.d = t->off[par][v] + h * dsize(dto);
	pb_vec(p, core, &x);
}

void texpr_eval(struct texpr *t, const struct ew_spec *s, struct pb *p, unsigned int core,
		unsigned int par, uint32_t trr, uint32_t tcc)
{
	unsigned int nin = s->nin, i, v, last = t->nv - 1;
	struct pb_vec x;

	if (t->passthru)
		return;
	/* fp32 copies of the inputs that need them */
	for (v = 0; v < nin; v++)
		if (t->conv[v])
			conv_copy(t, p, core, par, v, trr, tcc);
	for (i = 0; i < s->nuops; i++) {
		const struct uop *u = &s->u[i];
		uint8_t rc;
		struct opnd a, b;
		bool im;

		v = nin + i;
		if (u->kind == U_CONST) {
			if (t->conv[v])
				conv_copy(t, p, core, par, v, trr, tcc);
			continue;
		}
		rc = t->cls[v];
		if (u->kind == U_ROTH) {
			roth(t, p, core, par, v, get_as(t, (unsigned int)u->a, par, false), trr,
			     tcc);
			continue;
		}
		/* integer mode: an integer result, or a COPY (cast) of an integer value */
		im = t->imode[v] || (u->func == SPYRE_VF_COPY && t->imode[u->a]);
		memset(&x, 0, sizeof(x));
		x.func = u->func;
		x.imm0 = u->imm0;
		x.imm1 = u->imm1;
		x.k = u->k;
		x.d = t->off[par][v];
		x.dtype_out = (t->direct && v == last) ? t->out_dt : t->dt[v];
		a = get_as(t, (unsigned int)u->a, par, im);
		x.rows = (rc | a.cls) & 2 ? trr : 1;
		x.cols = a.cls & 1 ? tcc : 1;
		if (is_bin(u->func)) {
			b = get_as(t, (unsigned int)u->b, par, im);
			x.cols = rc & 1 ? tcc : 1;
			if (t->swap[i]) {
				struct opnd tmp = a;

				a = b;
				b = tmp;
			}
			if (t->expand[i]) {
				expand(t, p, core, a, rc, t->eoff[par][i], t->edt[i], trr, tcc);
				a.off = t->eoff[par][i];
				a.cls = rc;
				a.dt = t->edt[i];
			}
			x.s1 = b.off;
			if ((rc & 1) && !(b.cls & 1)) {
				x.flags = SPYRE_VEC_SRC1_COL;
				x.s1_stride = b.cls & 2 ? 1 : 0;
			} else {
				x.s1_stride = src_stride(b.cls, t->tc);
				if (b.cls == CL_COL && !(rc & 2))
					x.s1_stride = 0;
			}
		}
		if (im)
			x.flags |= SPYRE_VEC_INT;
		x.dtype = a.dt;
		x.s0 = a.off;
		x.s0_stride = src_stride(a.cls, t->tc);
		if (a.cls == CL_SCAL || (a.cls == CL_COL && !(x.rows > 1)))
			x.s0_stride = 0;
		x.d_stride = dst_stride(rc, t->tc);
		pb_vec(p, core, &x);
		/* an fp32 operand of a later fp32-mode function (integer results) */
		if (t->conv[v] && !(t->direct && v == last))
			conv_copy(t, p, core, par, v, trr, tcc);
	}
	if (t->final_expand)
		expand(t, p, core, get_as(t, last, par, t->imode[last]), t->out_cls, t->stage[par],
		       t->out_dt, trr, tcc);
}

uint32_t texpr_result(const struct texpr *t, unsigned int par)
{
	return t->stage[par];
}
