// SPDX-License-Identifier: MIT
//
// The writing side of indexing, along any dim: scatter (src, value, the
// add/multiply reduce), scatter_add, scatter_reduce, index_add, index_copy,
// index_reduce, index_fill and put; and take, its reading side.
//
// The card has no scatter. As in index_put_ (ops_index_put.cpp) the writes
// are turned into reads: the indexed dim is moved last and everything else
// becomes rows, so each op is rows of N destinations receiving K values; a
// match M[b, n, k] = (index[b, k] == n) says which values land on
// destination n, and a reduction over k gives each destination its result:
// a sum (scatter_add, index_add), a product (by halving, the card has no
// product reduction), a mean (sum and count, integers floor-divided as on
// the CPU), amax/amin (NaN wins, as on the CPU), or the value of the last k
// naming it (scatter, index_copy, put: PyTorch leaves the winner among
// duplicates undefined; the CPU takes the last, so does this). A destination
// no value names keeps its own value, bit for bit. Sums and products of
// float16/bfloat16 run in fp32 and round once (the CPU rounds after each
// step: the results agree within the dtype's tolerance).
//
// The match costs B * N * K elements; it runs in steps of at most kStep
// elements, and problems beyond kMaxWork elements take the counted CPU
// fallback (error mode: an error naming the op). Indices are checked on the
// card with one synchronisation (their minimum and maximum): out of range
// raises as the CPU does, never writes elsewhere. Bool data moves through
// fp32 (0 and 1 are exact; a sum is nonzero exactly when the CPU's or is
// true), int32/int64 exactly in their own dtype (card interface 1.9).
#include "kernels.h"
#include "op_tensor.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <limits>
#include <string>
#include <unordered_map>

namespace torch_spyre {
namespace {

constexpr int64_t kStep = int64_t(1) << 24;    // match elements per step
constexpr int64_t kMaxWork = int64_t(1) << 28; // match elements per call

enum class Red { Assign, Sum, Prod, Mean, Amax, Amin };

// ---- the row kernel ----------------------------------------------------------

// Product over the last dim by halving: log2(K) elementwise multiplies.
at::Tensor prod_last(at::Tensor x)
{
	while (x.size(-1) > 1) {
		int64_t n = x.size(-1), h = n / 2;
		at::Tensor p = x.narrow(-1, 0, h) * x.narrow(-1, h, h);
		x = n % 2 ? at::cat({ p, x.narrow(-1, 2 * h, 1) }, -1) : p;
	}
	return x.squeeze(-1);
}

// The smallest and largest value of @dt, the identities of amax and amin.
std::pair<at::Scalar, at::Scalar> extremes(at::ScalarType dt)
{
	const double inf = std::numeric_limits<double>::infinity();
	if (dt == at::kInt)
		return { std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max() };
	if (dt == at::kLong)
		return { std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max() };
	return { -inf, inf };
}

// One step: destinations @s [b, n] (b rows, or all rows), index @i [b or 1,
// K] (int64, in range), values @v [b, K], destination numbers @cols [n].
at::Tensor step(const at::Tensor &s, const at::Tensor &i, const at::Tensor &v,
		const at::Tensor &cols, Red red, bool include_self)
{
	const auto dt = s.scalar_type();
	const bool integral = dt == at::kInt || dt == at::kLong;
	const int64_t K = i.size(1);
	at::Tensor m = i.unsqueeze(1).eq(cols.view({ 1, -1, 1 })); // [b|1, n, K]
	if (red == Red::Assign) {
		at::Tensor order = at::arange(1, K + 1, i.options().dtype(at::kInt));
		at::Tensor which = at::where(m, order, 0).amax(-1); // last k + 1, 0: none
		at::Tensor last = at::where(which.gt(0), which - 1, 0).to(at::kLong);
		last = last.expand({ s.size(0), s.size(1) }).contiguous();
		return at::where(which.gt(0), v.gather(1, last), s);
	}
	at::Tensor vv = v.unsqueeze(1);
	at::Tensor count = m.to(at::kInt).sum(-1, false, at::kInt);
	at::Tensor hit = count.gt(0);
	at::Tensor r;
	switch (red) {
	case Red::Sum:
	case Red::Mean:
		// -0.0 keeps a sum of -0.0 values -0.0; integers need an integer 0
		r = at::where(m, vv, integral ? at::Scalar(int64_t(0)) : at::Scalar(-0.0))
			    .sum(-1, false, dt);
		if (include_self)
			r = r + s;
		if (red == Red::Mean) {
			// no value: the destination keeps its own, never divides by 0
			at::Tensor n = at::where(hit, include_self ? count + 1 : count, 1).to(dt);
			r = integral ? at::floor_divide(r, n) : r / n;
		}
		break;
	case Red::Prod:
		r = prod_last(at::where(m, vv, int64_t(1)));
		if (include_self)
			r = r * s;
		break;
	case Red::Amax:
		r = at::where(m, vv, extremes(dt).first).amax(-1);
		if (include_self)
			r = at::maximum(r, s);
		break;
	case Red::Amin:
		r = at::where(m, vv, extremes(dt).second).amin(-1);
		if (include_self)
			r = at::minimum(r, s);
		break;
	case Red::Assign:
		break;
	}
	return at::where(hit, r, s);
}

// Rows @S [B, N] after the values @V [B, K] land on the destinations
// @I [B or 1, K] names (int64, checked), reduced by @red.
at::Tensor scatter_rows(const at::Tensor &S, const at::Tensor &I, const at::Tensor &V, Red red,
			bool include_self)
{
	const int64_t B = S.size(0), N = S.size(1), K = I.size(1);
	const bool shared = I.size(0) == 1;
	const int64_t nb = std::min(N, std::max<int64_t>(1, kStep / K));
	const int64_t bb = std::min(B, std::max<int64_t>(1, kStep / (nb * K)));
	at::Tensor cols = at::arange(N, I.options());
	if (bb == B && nb == N)
		return step(S, I, V, cols, red, include_self);
	at::Tensor out = at::empty({ B, N }, S.options());
	for (int64_t b0 = 0; b0 < B; b0 += bb) {
		int64_t mb = std::min(bb, B - b0);
		at::Tensor i = shared ? I : I.narrow(0, b0, mb);
		at::Tensor v = V.narrow(0, b0, mb);
		for (int64_t n0 = 0; n0 < N; n0 += nb) {
			int64_t mn = std::min(nb, N - n0);
			at::Tensor s = S.narrow(0, b0, mb).narrow(1, n0, mn);
			out.narrow(0, b0, mb)
				.narrow(1, n0, mn)
				.copy_(step(s, i, v, cols.narrow(0, n0, mn), red, include_self));
		}
	}
	return out;
}

// ---- arguments ---------------------------------------------------------------

enum class Family { Scatter, Index, Fill, Put, Take };

// One call's arguments, read by name from the operator's schema.
struct Call {
	std::string name; // "scatter_add_", "index_fill.int_Scalar_out", ...
	Family family;
	OpForm form;
	at::Tensor self, index, src, out;
	std::optional<at::Scalar> value;
	int64_t dim = 0;
	std::string reduce;
	bool include_self = true, accumulate = false;
	at::Scalar alpha = 1;
};

Call read_call(const c10::OperatorHandle &handle, const torch::jit::Stack &stack)
{
	Call c;
	const auto &schema = handle.schema();
	std::string base = schema.name().substr(6); // after "aten::"
	const std::string &ov = schema.overload_name();
	c.name = ov.empty() ? base : base + "." + ov;
	bool inplace = base.back() == '_';
	if (inplace)
		base.pop_back();
	c.form = inplace ? OpForm::InPlace :
		 ov.size() >= 3 && ov.compare(ov.size() - 3, 3, "out") == 0 ? OpForm::Out :
									      OpForm::Functional;
	c.family = base == "index_fill" ? Family::Fill :
		   base == "put"	? Family::Put :
		   base == "take"	? Family::Take :
		   base.rfind("index_", 0) == 0 ? Family::Index :
						  Family::Scatter;
	const auto &args = schema.arguments();
	size_t n = args.size();
	for (size_t a = 0; a < n; a++) {
		const c10::IValue &v = torch::jit::peek(stack, a, n);
		const std::string &arg = args[a].name();
		if (arg == "self")
			c.self = v.toTensor();
		else if (arg == "index")
			c.index = v.toTensor();
		else if (arg == "src" || arg == "source")
			c.src = v.toTensor();
		else if (arg == "out")
			c.out = v.toTensor();
		else if (arg == "dim")
			c.dim = v.toInt();
		else if (arg == "reduce")
			c.reduce = v.toStringRef();
		else if (arg == "include_self")
			c.include_self = v.toBool();
		else if (arg == "accumulate")
			c.accumulate = v.toBool();
		else if (arg == "alpha")
			c.alpha = v.toScalar();
		else if (arg == "value" && v.isTensor())
			c.src = v.toTensor();
		else if (arg == "value")
			c.value = v.toScalar();
	}
	return c;
}

// The reduction @c asks for; throws for one PyTorch does not define.
Red reduction(const Call &c)
{
	if (c.family == Family::Put)
		return c.accumulate ? Red::Sum : Red::Assign;
	const std::string &op = c.name;
	if (op.rfind("scatter_add", 0) == 0 || op.rfind("index_add", 0) == 0)
		return Red::Sum;
	if (op.rfind("scatter_reduce", 0) == 0 || op.rfind("index_reduce", 0) == 0) {
		static const std::unordered_map<std::string, Red> names{
			{ "sum", Red::Sum },   { "prod", Red::Prod }, { "mean", Red::Mean },
			{ "amax", Red::Amax }, { "amin", Red::Amin },
		};
		auto it = names.find(c.reduce);
		bool index_sum = op.rfind("index_reduce", 0) == 0 && c.reduce == "sum";
		TORCH_CHECK(it != names.end() && !index_sum, op, "(): reduce argument must be ",
			    op.rfind("index", 0) == 0 ? "" : "sum, ",
			    "prod, mean, amax or amin, got ", c.reduce);
		return it->second;
	}
	if (!c.reduce.empty()) { // scatter's deprecated reduce=
		TORCH_CHECK(c.reduce == "add" || c.reduce == "multiply",
			    "reduce argument must be either add or multiply.");
		return c.reduce == "add" ? Red::Sum : Red::Prod;
	}
	return Red::Assign;
}

// The dtype the rows compute in for @dt, or nullopt when the card cannot.
std::optional<at::ScalarType> compute_dtype(const at::Tensor &self, Red red)
{
	auto dt = self.scalar_type();
	if (dt == at::kBool)
		return at::kFloat;
	if (dt == at::kHalf || dt == at::kBFloat16)
		return red == Red::Sum || red == Red::Prod || red == Red::Mean ? at::kFloat : dt;
	if (dt == at::kFloat || card_int(self))
		return dt;
	return std::nullopt;
}

// @index as int64 with negative entries wrapped (@wrap) or refused, every
// entry checked against @size on the card (one synchronisation).
at::Tensor checked_index(const char *op, const at::Tensor &index, int64_t size, int64_t dim,
			 bool wrap, bool index_error)
{
	at::Tensor ix = index.to(at::kLong);
	if (ix.numel() == 0)
		return ix;
	at::Tensor ends = at::cat({ ix.amin().view({ 1 }), ix.amax().view({ 1 }) }).cpu();
	int64_t lo = ends[0].item<int64_t>(), hi = ends[1].item<int64_t>();
	int64_t bad = lo < (wrap ? -size : 0) ? lo : hi;
	if (!(lo >= (wrap ? -size : 0) && hi < size)) {
		if (index_error)
			TORCH_CHECK_INDEX(false, op, "(): index ", bad,
					  " is out of bounds for dimension ", dim, " with size ",
					  size);
		TORCH_CHECK(false, "index ", bad, " is out of bounds for dimension ", dim,
			    " with size ", size);
	}
	return wrap && lo < 0 ? at::where(ix.lt(0), ix + size, ix) : ix;
}

// @t with @dim last, as [rows, t.size(dim)] (a 0-dim tensor as [1, 1]).
at::Tensor as_rows(const at::Tensor &t, int64_t dim)
{
	if (t.dim() == 0)
		return t.reshape({ 1, 1 });
	at::Tensor m = t.movedim(dim, -1);
	return m.reshape({ -1, m.size(-1) });
}

// Writes rows @r [rows, n] back into @dst along @dim (as_rows' inverse).
void write_rows(const at::Tensor &r, const at::Tensor &dst, int64_t dim)
{
	if (dst.dim() == 0) {
		dst.copy_(r.reshape({}));
		return;
	}
	at::Tensor m = dst.movedim(dim, -1);
	m.copy_(r.view(m.sizes()));
}

void check_same(const char *op, const at::Tensor &self, const at::Tensor &other, const char *what)
{
	TORCH_CHECK(other.device() == self.device(),
		    "Expected all tensors to be on the same device, but found at least two "
		    "devices, ",
		    self.device(), " and ", other.device(), "! (when checking argument ", what,
		    " of ", op, ")");
}

bool work_fits(int64_t rows, int64_t n, int64_t k)
{
	return k <= kStep && rows * n * k <= kMaxWork;
}

// ---- the families, each writing into @res (self's values already there) ---

// scatter, scatter_add, scatter_reduce: index has self's dims, values src's.
// Returns false when the card cannot take the problem.
bool run_scatter(Call &c, Red red, at::ScalarType cdt, const at::Tensor &res)
{
	const char *op = c.name.c_str();
	const at::Tensor &self = c.self, &index = c.index;
	TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt, op,
		    "(): Expected dtype int32/int64 for index");
	int64_t nd = std::max<int64_t>(self.dim(), 1);
	int64_t dim = c10::maybe_wrap_dim(c.dim, nd);
	if (index.numel() == 0)
		return true;
	TORCH_CHECK(std::max<int64_t>(index.dim(), 1) == nd, "Index tensor must have the same "
		    "number of dimensions as self tensor");
	at::Tensor src = c.src.defined() ? c.src : at::Tensor();
	if (src.defined()) {
		check_same(op, self, src, "src");
		TORCH_CHECK(src.scalar_type() == self.scalar_type(), op, "(): Expected self.dtype "
			    "to be equal to src.dtype");
		TORCH_CHECK(std::max<int64_t>(src.dim(), 1) == nd, "Index tensor must have the "
			    "same number of dimensions as src tensor");
	}
	at::Tensor ix = index.dim() ? index : index.reshape({ 1 });
	at::Tensor sv = self.dim() ? res : res.reshape({ 1 });
	for (int64_t d = 0; d < nd; d++) {
		int64_t s = self.dim() ? self.size(d) : 1;
		TORCH_CHECK((d == dim || ix.size(d) <= s) &&
				    (!src.defined() || ix.size(d) <= (src.dim() ? src.size(d) : 1)),
			    "Size does not match at dimension ", d, " expected index ",
			    index.sizes(), " to be no larger than self ", self.sizes(), " apart from dimension ",
			    dim, src.defined() ? " and to be no larger than src " : "",
			    src.defined() ? src.sizes() : c10::IntArrayRef());
		if (d != dim)
			sv = sv.narrow(d, 0, ix.size(d));
	}
	int64_t N = sv.size(dim), K = ix.size(dim), rows = ix.numel() / K;
	if (!work_fits(rows, N, K))
		return false;
	at::Tensor I = as_rows(checked_index(op, ix, N, dim, false, false), dim);
	at::Tensor V;
	if (src.defined()) {
		at::Tensor s = src.dim() ? src : src.reshape({ 1 });
		for (int64_t d = 0; d < nd; d++)
			s = s.narrow(d, 0, ix.size(d));
		V = as_rows(card_cast(s, cdt), dim);
	} else {
		V = at::full({ rows, K }, *c.value, res.options().dtype(cdt));
	}
	at::Tensor S = as_rows(card_cast(sv, cdt), dim);
	write_rows(scatter_rows(S, I, V, red, c.include_self), sv, dim);
	return true;
}

// index_add, index_copy, index_reduce: a 1-D index along dim, source shaped
// like self with index.numel() there.
bool run_index(Call &c, Red red, at::ScalarType cdt, const at::Tensor &res)
{
	const char *op = c.name.c_str();
	const at::Tensor &self = c.self, &index = c.index, &src = c.src;
	check_same(op, self, index, "index");
	check_same(op, self, src, "source");
	TORCH_CHECK_INDEX(index.dim() <= 1, op, "(): Index is supposed to be a vector");
	TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt, op,
		    "(): Expected dtype int32/int64 for index");
	TORCH_CHECK(src.scalar_type() == self.scalar_type(), op, "(): self (",
		    self.scalar_type(), ") and source (", src.scalar_type(),
		    ") must have the same scalar type");
	int64_t nd = std::max<int64_t>(self.dim(), 1);
	int64_t dim = c10::maybe_wrap_dim(c.dim, nd);
	int64_t K = index.numel();
	auto ss = self.dim() ? self.sizes().vec() : std::vector<int64_t>{ 1 };
	auto want = ss;
	want[size_t(dim)] = K;
	auto got = src.dim() ? src.sizes().vec() : std::vector<int64_t>{ 1 };
	TORCH_CHECK(got == want || (src.numel() == K && self.dim() <= 1), op,
		    "(): source ", src.sizes(), " does not match self ", self.sizes(),
		    " with ", K, " indices along dimension ", dim);
	if (K == 0 || self.numel() == 0)
		return true;
	at::Tensor sv = self.dim() ? res : res.reshape({ 1 });
	int64_t N = sv.size(dim), rows = sv.numel() / N;
	if (!work_fits(rows, N, K))
		return false;
	bool index_error = c.name.rfind("index_add", 0) != 0;
	at::Tensor I = checked_index(op, index, N, dim, false, index_error).reshape({ 1, K });
	at::Tensor V = as_rows(card_cast(src.reshape(want), cdt), dim);
	if (red == Red::Sum && !(c.alpha.isIntegral(true) && c.alpha.toLong() == 1))
		V = V * c.alpha;
	at::Tensor S = as_rows(card_cast(sv, cdt), dim);
	write_rows(scatter_rows(S, I, V, red, c.include_self), sv, dim);
	return true;
}

// index_fill: destinations some index names take the value (negative
// indices wrap, as on the CPU); bool data selects in fp32.
bool run_fill(Call &c, at::ScalarType cdt, const at::Tensor &res)
{
	const char *op = c.name.c_str();
	const at::Tensor &self = c.self, &index = c.index;
	check_same(op, self, index, "index");
	TORCH_CHECK_INDEX(index.dim() <= 1, op, "(): Index is supposed to be a vector");
	TORCH_CHECK(index.scalar_type() == at::kLong, op, "(): Expected dtype int64 for index.");
	at::Tensor value;
	if (c.value) {
		value = at::scalar_tensor(*c.value, self.options().device(c10::kCPU));
	} else {
		TORCH_CHECK(c.src.dim() == 0, op, " only supports a 0-dimensional value tensor, "
			    "but got tensor with ", c.src.dim(), " dimension(s).");
		value = c.src;
	}
	int64_t nd = std::max<int64_t>(self.dim(), 1);
	int64_t dim = c10::maybe_wrap_dim(c.dim, nd);
	int64_t K = index.numel(), N = self.dim() ? self.size(dim) : 1;
	if (K == 0 || self.numel() == 0)
		return true;
	if (K > kStep || N * K > kMaxWork)
		return false;
	at::Tensor ix = checked_index(op, index, N, dim, true, true).reshape({ 1, K });
	at::Tensor hit = ix.eq(at::arange(N, ix.options()).view({ -1, 1 })).any(1); // [N]
	std::vector<int64_t> bshape(size_t(nd), 1);
	bshape[size_t(dim)] = N;
	at::Tensor sv = self.dim() ? res : res.reshape({ 1 });
	at::Tensor v = value.to(res.device()).to(res.scalar_type()).to(cdt);
	sv.copy_(at::where(hit.view(bshape), v, card_cast(sv, cdt)));
	return true;
}

// put: self flattened, index and source flattened (negatives wrap).
bool run_put(Call &c, Red red, at::ScalarType cdt, const at::Tensor &res)
{
	const char *op = c.name.c_str();
	const at::Tensor &self = c.self, &index = c.index, &src = c.src;
	check_same(op, self, index, "index");
	check_same(op, self, src, "source");
	TORCH_CHECK(index.scalar_type() == at::kLong, op, "(): Expected a long tensor for index, "
		    "but got ", index.scalar_type());
	TORCH_CHECK(src.scalar_type() == self.scalar_type(), op, "(): self and source expected "
		    "to have the same dtype, but got self.dtype = ", self.scalar_type(),
		    " and source.dtype = ", src.scalar_type());
	TORCH_CHECK(index.numel() == src.numel(), op, "(): Expected source and index to have "
		    "the same number of elements, but got source.numel() = ", src.numel(),
		    ", index.numel() = ", index.numel());
	int64_t K = index.numel(), N = self.numel();
	if (K == 0)
		return true;
	TORCH_CHECK_INDEX(N > 0, op, "(): Tried to put elements into an empty tensor");
	if (!work_fits(1, N, K))
		return false;
	at::Tensor I = checked_index(op, index.reshape({ -1 }), N, 0, true, true).view({ 1, K });
	at::Tensor V = card_cast(src.reshape({ 1, K }), cdt);
	at::Tensor S = card_cast(res.reshape({ 1, N }), cdt);
	res.copy_(scatter_rows(S, I, V, red, true).view(res.sizes()));
	return true;
}

// The one kernel of every form: the functional form writes a clone of self,
// the in-place form self, out= the resized out holding self's values.
void scatter_boxed(const c10::OperatorHandle &handle, torch::jit::Stack *stack)
{
	Call c = read_call(handle, *stack);
	const char *op = c.name.c_str();
	check_same(op, c.self, c.index, "index");
	if (c.family == Family::Take) {
		at::Tensor flat = c.self.reshape({ -1 });
		TORCH_CHECK_INDEX(flat.numel() > 0 || c.index.numel() == 0,
				  "take(): tried to take from an empty tensor");
		TORCH_CHECK(c.index.scalar_type() == at::kLong, "take(): Expected a long tensor "
			    "for index, but got ", c.index.scalar_type());
		if ((card_float(c.self.scalar_type()) ||
		    c.self.scalar_type() == at::kBool || card_int(c.self))) {
			c10::DeviceGuard guard(c.self.device());
			at::Tensor ix = checked_index(op, c.index.reshape({ -1 }), flat.numel(), 0,
						      true, true);
			at::Tensor r = flat.index_select(0, ix).view(c.index.sizes());
			if (c.form == OpForm::Out) {
				prepare_out(c.out, r.sizes(), r.scalar_type(), op);
				c.out.copy_(r);
				r = c.out;
			}
			count_device_op("take");
			torch::jit::drop(*stack, handle.schema().arguments().size());
			torch::jit::push(*stack, r);
			return;
		}
		spyre_cpu_fallback(handle, stack);
		return;
	}
	Red red = reduction(c);
	auto cdt = compute_dtype(c.self, red);
	bool ok = cdt && (red != Red::Mean || c.self.scalar_type() != at::kBool) &&
		  (c.form != OpForm::Out || c.out.scalar_type() == c.self.scalar_type());
	if (!ok) {
		spyre_cpu_fallback(handle, stack);
		return;
	}
	c10::DeviceGuard guard(c.self.device());
	// the result tensor, holding self's values; kernels write it in place
	at::Tensor res = c.form == OpForm::InPlace ? c.self :
			 c.form == OpForm::Out	   ? c.out :
						     at::empty_like(c.self,
								    at::MemoryFormat::Contiguous);
	// the rows are read whole before the result is written back, so self
	// (or a src aliasing it) needs no copy of its own for the in-place form
	if (c.form == OpForm::Out)
		at::native::resize_output(c.out, c.self.sizes());
	if (!res.is_same(c.self))
		res.copy_(c.self);
	bool done = false;
	switch (c.family) {
	case Family::Scatter:
		done = run_scatter(c, red, *cdt, res);
		break;
	case Family::Index:
		done = run_index(c, red, *cdt, res);
		break;
	case Family::Fill:
		done = run_fill(c, *cdt, res);
		break;
	case Family::Put:
		done = run_put(c, red, *cdt, res);
		break;
	case Family::Take:
		break;
	}
	if (!done) {
		spyre_cpu_fallback(handle, stack);
		return;
	}
	count_device_op(op);
	torch::jit::drop(*stack, handle.schema().arguments().size());
	torch::jit::push(*stack, c.form == OpForm::Out ? c.out : res);
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	static const char *const ops[] = {
		"scatter.src",	       "scatter.value",	       "scatter.reduce",
		"scatter.value_reduce", "scatter.src_out",     "scatter.value_out",
		"scatter.reduce_out",  "scatter.value_reduce_out", "scatter_.src",
		"scatter_.value",      "scatter_.reduce",      "scatter_.value_reduce",
		"scatter_add",	       "scatter_add.out",      "scatter_add_",
		"scatter_reduce.two",  "scatter_reduce.two_out", "scatter_reduce_.two",
		"index_add",	       "index_add.out",	       "index_add_",
		"index_copy",	       "index_copy.out",       "index_copy_",
		"index_reduce",	       "index_reduce.out",     "index_reduce_",
		"index_fill.int_Scalar", "index_fill.int_Tensor", "index_fill.int_Scalar_out",
		"index_fill.int_Tensor_out", "index_fill_.int_Scalar", "index_fill_.int_Tensor",
		"put",		       "put.out",	       "put_",
		"take",		       "take.out",
	};
	for (const char *op : ops)
		m.impl(op, torch::CppFunction::makeFromBoxedFunction<&scatter_boxed>());
}

} // namespace torch_spyre
