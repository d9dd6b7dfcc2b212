// SPDX-License-Identifier: MIT
#include "graph.h"

#include "device.h"
#include "host_allocator.h"
#include "op_tensor.h"
#include "stream.h"
#include "trace.h"

#include "spyre_hw.h" // SPYRE_HW_VERSION_{MAJOR,MINOR}_OF

#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace py = pybind11;

namespace torch_spyre {
namespace {

at::ScalarType torch_dtype(spyre_dtype dt)
{
	switch (dt) {
	case SPYRE_FLOAT32:
		return at::kFloat;
	case SPYRE_FLOAT16:
		return at::kHalf;
	case SPYRE_BFLOAT16:
		return at::kBFloat16;
	case SPYRE_INT8:
		return at::kChar;
	case SPYRE_INT32:
		return at::kInt;
	case SPYRE_INT64:
		return at::kLong;
	case SPYRE_BOOL:
		return at::kBool;
	}
	TORCH_CHECK(false, "spyre: the op library returned an unknown dtype ", int(dt));
}

// The op library refusing a graph call: an op, dtype, shape or argument
// combination the card does not take (-EOPNOTSUPP), or more arguments than
// a recipe has slots (-E2BIG). Python sees torch_spyre._C.Unsupported (a
// NotImplementedError), the only error the compiler turns into a graph
// break; any other failure is a bug and reaches the user as it is.
class Refusal : public std::runtime_error {
public:
	using std::runtime_error::runtime_error;
};

// check_op for the calls that record a graph: refusals raise Refusal.
void check_graph(int rc, const char *what)
{
	if (rc == -EOPNOTSUPP || rc == -E2BIG) {
		const char *msg = spyre_last_error();
		throw Refusal(std::string("spyre: ") + what + ": " +
			      (msg && *msg ? msg : std::strerror(-rc)));
	}
	check_op(rc, what);
}

void check_dims(const std::vector<int64_t> &shape)
{
	if (shape.size() > SPYRE_MAX_DIMS)
		throw Refusal("spyre: a graph value has at most " + std::to_string(SPYRE_MAX_DIMS) +
			      " dims, got " + std::to_string(shape.size()));
}

spyre_dtype card_dtype(at::ScalarType t)
{
	auto dt = to_spyre_dtype(t);
	if (!dt.has_value())
		throw Refusal(std::string("spyre: the graph compiler has no ") +
			      c10::toString(t) + " type");
	return *dt;
}

struct ValueInfo {
	at::ScalarType dtype;
	std::vector<int64_t> shape;
	bool host = false; // an input that arrives as a CPU tensor
};

// The DMA-engine stream that compiled graphs of device @index upload their
// host inputs on (one per device, made on first use): the uploads overlap
// compute on the compute streams, and the recipe links them by an event.
c10::Stream upload_stream(c10::DeviceIndex index)
{
	static std::mutex lock;
	static std::map<c10::DeviceIndex, c10::Stream> streams;
	std::lock_guard<std::mutex> g(lock);
	auto it = streams.find(index);
	if (it == streams.end())
		it = streams.emplace(index, new_transfer_stream(index)).first;
	return it->second;
}

// A pinned copy of the CPU tensor @t for device @index (layout converted
// to contiguous on the way): the host-side half of a host input's upload.
// The caller keeps the returned DataPtr until the upload is queued and
// records the transfer stream's use of it.
c10::DataPtr stage_host_input(const at::Tensor &t, c10::DeviceIndex index, spyre_tensor *out)
{
	size_t nbytes = size_t(t.numel()) * t.element_size();
	c10::DataPtr dp = host_alloc_for(index, nbytes ? nbytes : 1);
	at::Tensor staged = at::from_blob(dp.get(), t.sizes(), t.options());
	staged.copy_(t);
	spyre_buf hb;
	TORCH_CHECK(resolve_host_ptr(dp.get(), nbytes ? nbytes : 1, index, &hb),
		    "spyre: the staging buffer of a host input is not pinned memory of spyre:",
		    int(index));
	*out = spyre_tensor{};
	out->dtype = card_dtype(t.scalar_type());
	out->ndim = unsigned(t.dim());
	int64_t stride = 1;
	for (int64_t d = t.dim() - 1; d >= 0; d--) {
		out->shape[d] = t.size(d);
		out->strides[d] = stride;
		stride *= std::max<int64_t>(t.size(d), 1);
	}
	out->buf = hb;
	out->buf.size = nbytes;
	return dp;
}

// A compiled graph: one recipe, its inputs' and outputs' signatures, and the
// constants (weights) it was built over, kept alive as long as it is.
class Compiled {
public:
	Compiled(spyre_compiled *c, c10::DeviceIndex index, std::vector<ValueInfo> inputs,
		 std::vector<ValueInfo> outputs, std::vector<at::Tensor> constants)
		: c_(c), index_(index), inputs_(std::move(inputs)), outputs_(std::move(outputs)),
		  constants_(std::move(constants))
	{
	}
	Compiled(const Compiled &) = delete;
	Compiled &operator=(const Compiled &) = delete;
	~Compiled()
	{
		spyre_compiled_destroy(c_);
	}

	// Runs the recipe on the current stream: spyre inputs are bound as they
	// are (made contiguous first), host inputs (CPU tensors) are staged in
	// pinned memory here and uploaded by the recipe on the device's upload
	// stream, which the compute stream waits for on the card.
	std::vector<at::Tensor> run(const std::vector<at::Tensor> &args)
	{
		TORCH_CHECK(args.size() == inputs_.size(), "spyre: the compiled graph takes ",
			    inputs_.size(), " inputs, got ", args.size());
		c10::Device dev(c10::DeviceType::PrivateUse1, index_);
		c10::DeviceGuard guard(dev);
		std::vector<at::Tensor> ins, outs;
		std::vector<c10::DataPtr> staged;
		std::vector<spyre_tensor> din, dout;
		for (size_t i = 0; i < args.size(); i++) {
			const at::Tensor &t = args[i];
			c10::Device want = inputs_[i].host ? c10::Device(c10::kCPU) : dev;
			TORCH_CHECK(t.device() == want && t.scalar_type() == inputs_[i].dtype &&
					    t.sizes().equals(inputs_[i].shape),
				    "spyre: input ", i, " of the compiled graph must be ",
				    inputs_[i].dtype, " ", c10::IntArrayRef(inputs_[i].shape), " on ",
				    want, ", got ", t.scalar_type(), " ", t.sizes(), " on ",
				    t.device());
			if (inputs_[i].host) {
				din.emplace_back();
				staged.push_back(stage_host_input(t, index_, &din.back()));
				continue;
			}
			ins.push_back(t.is_contiguous() ? t : t.contiguous());
			din.push_back(describe(ins.back()));
		}
		for (const auto &o : outputs_) {
			outs.push_back(at::empty(o.shape, at::TensorOptions().dtype(o.dtype).device(dev)));
			dout.push_back(describe(outs.back()));
		}
		spyre_stream *s = launch_stream(outs.empty() ? ins.at(0) : outs[0]);
		// the upload stream only for graphs that upload (a lookup under a
		// lock otherwise saved on every launch)
		std::optional<c10::Stream> up;
		if (!staged.empty())
			up = upload_stream(index_);
		TraceLabelScope label("compiled graph");
		check_op(spyre_compiled_run_with_transfer(c_, s, up ? native_stream(*up) : nullptr,
							  din.data(), unsigned(din.size()),
							  dout.data(), unsigned(dout.size())),
			 "compiled graph");
		// the staging blocks return to the pinned cache, reused once the
		// uploads queued so far on the upload stream are done
		for (const auto &p : staged)
			record_host_use(p.get(), *up);
		count_device_op("compiled_graph");
		return outs;
	}

	// The recipe as bytes for the on-disk compile cache (NotImplementedError
	// when it holds a constant tensor).
	py::bytes serialize() const
	{
		void *buf = nullptr;
		size_t len = 0;
		check_op(spyre_compiled_serialize(c_, &buf, &len), "spyre_compiled_serialize");
		py::bytes b(static_cast<const char *>(buf), len);
		free(buf);
		return b;
	}

	py::dict stats() const
	{
		spyre_compiled_stats st{};
		check_op(spyre_compiled_get_stats(c_, &st), "compiled graph stats");
		py::dict d;
		d["nodes"] = st.nodes;
		d["kernels"] = st.kernels;
		d["programs"] = st.programs;
		d["submits"] = st.submits;
		d["workspace_bytes"] = st.workspace_bytes;
		d["intermediate_bytes"] = st.intermediate_bytes;
		return d;
	}

	// (dtype, shape, host) of the inputs and of the outputs
	py::tuple signature() const
	{
		py::list in, out;
		for (const auto &i : inputs_)
			in.append(py::make_tuple(i.dtype, i.shape, i.host));
		for (const auto &o : outputs_)
			out.append(py::make_tuple(o.dtype, o.shape, o.host));
		return py::make_tuple(in, out);
	}

private:
	spyre_compiled *c_;
	c10::DeviceIndex index_;
	std::vector<ValueInfo> inputs_, outputs_;
	std::vector<at::Tensor> constants_;
};

// A graph being recorded. Every method returns the new value's id and
// raises (NotImplementedError for what the card cannot do) on failure,
// leaving the graph as it was.
class Graph {
public:
	explicit Graph(int index) : index_(c10::DeviceIndex(index))
	{
		check_device_index(index_);
		check_op(spyre_graph_create(ops_context(index_), &g_), "spyre_graph_create");
	}
	Graph(const Graph &) = delete;
	Graph &operator=(const Graph &) = delete;
	~Graph()
	{
		if (g_)
			spyre_graph_destroy(g_);
	}

	int input(at::ScalarType dt, std::vector<int64_t> shape)
	{
		check_dims(shape);
		int v;
		check_graph(spyre_graph_input(g_, card_dtype(dt), unsigned(shape.size()), shape.data(),
					   &v),
			 "graph input");
		inputs_.push_back({ dt, std::move(shape) });
		return v;
	}

	// An input that arrives as a CPU tensor: the recipe uploads it.
	int host_input(at::ScalarType dt, std::vector<int64_t> shape)
	{
		check_dims(shape);
		int v;
		check_graph(spyre_graph_host_input(g_, card_dtype(dt), unsigned(shape.size()),
						shape.data(), &v),
			 "graph host input");
		inputs_.push_back({ dt, std::move(shape), true });
		return v;
	}

	int constant(const at::Tensor &t)
	{
		TORCH_CHECK(t.device() == c10::Device(c10::DeviceType::PrivateUse1, index_),
			    "spyre: a graph constant must be on spyre:", int(index_), ", got ",
			    t.device());
		spyre_tensor d = describe(t);
		int v;
		check_graph(spyre_graph_constant(g_, &d, &v), "graph constant");
		constants_.push_back(t);
		return v;
	}

	void output(int v)
	{
		check_graph(spyre_graph_output(g_, v), "graph output");
		outputs_.push_back(info(v));
	}

	ValueInfo info(int v)
	{
		spyre_dtype dt;
		unsigned int nd;
		int64_t shape[SPYRE_MAX_DIMS];
		check_op(spyre_graph_value_info(g_, v, &dt, &nd, shape), "graph value info");
		return { torch_dtype(dt), std::vector<int64_t>(shape, shape + nd) };
	}

	std::unique_ptr<Compiled> compile(unsigned int flags)
	{
		spyre_compiled *c;
		check_op(spyre_graph_compile_flags(g_, flags, &c), "spyre_graph_compile");
		return std::make_unique<Compiled>(c, index_, inputs_, outputs_, constants_);
	}

	spyre_graph *g() const
	{
		return g_;
	}

private:
	c10::DeviceIndex index_;
	spyre_graph *g_ = nullptr;
	std::vector<ValueInfo> inputs_, outputs_;
	std::vector<at::Tensor> constants_;
};

// A compiled graph from spyre_compiled_serialize's bytes, with the signature
// recorded next to them (libspyre checks it again at every run).
std::unique_ptr<Compiled> load_compiled(int index, const py::bytes &blob,
					std::vector<ValueInfo> inputs,
					std::vector<ValueInfo> outputs)
{
	auto di = c10::DeviceIndex(index);
	check_device_index(di);
	std::string_view v(blob);
	spyre_compiled *c;
	check_op(spyre_compiled_deserialize(ops_context(di), v.data(), v.size(), &c),
		 "spyre_compiled_deserialize");
	return std::make_unique<Compiled>(c, di, std::move(inputs), std::move(outputs),
					  std::vector<at::Tensor>{});
}

// (dtype, shape, host) as Python passes a signature
using Signature = std::vector<std::tuple<at::ScalarType, std::vector<int64_t>, bool>>;

std::vector<ValueInfo> value_infos(const Signature &l)
{
	std::vector<ValueInfo> r;
	for (const auto &p : l)
		r.push_back({ std::get<0>(p), std::get<1>(p), std::get<2>(p) });
	return r;
}

// Wraps a spyre_graph_* call that yields one value.
template <typename Fn> int make(const char *what, Fn fn)
{
	int v = -1;
	check_graph(fn(&v), what);
	return v;
}

std::vector<int> as_int(const std::vector<int64_t> &xs)
{
	return std::vector<int>(xs.begin(), xs.end());
}

// libspyre's op table (spyre/op_table.h) for Python: one dict per row, read
// by the lowering (torch_spyre/op_table.py) instead of lists of its own.
py::list op_table_rows()
{
	static const char *const kinds[] = {"unary", "binary", "reduce"};
	unsigned int n = 0;
	const spyre_op_info *rows = spyre_op_table(&n);
	py::list out;
	for (unsigned int i = 0; i < n; i++) {
		const spyre_op_info &r = rows[i];
		py::list dtypes;
		for (unsigned int dt = 0; dt < 32; dt++)
			if (r.dtypes & SPYRE_DTYPE_BIT(dt))
				dtypes.append(spyre_dtype_name(spyre_dtype(dt)));
		py::dict d;
		d["kind"] = kinds[r.kind];
		d["name"] = r.name;
		d["op"] = r.op;
		d["iface"] = py::make_tuple(SPYRE_HW_VERSION_MAJOR_OF(r.iface),
					    SPYRE_HW_VERSION_MINOR_OF(r.iface));
		d["dtypes"] = dtypes;
		d["result"] = r.result == SPYRE_RESULT_BOOL ? "bool" : "same";
		d["torch"] = bool(r.flags & SPYRE_OPF_TORCH);
		d["truth"] = bool(r.flags & SPYRE_OPF_TRUTH);
		out.append(d);
	}
	return out;
}

} // namespace

void init_graph_bindings(py::module &m)
{
	py::register_local_exception<Refusal>(m, "Unsupported", PyExc_NotImplementedError);
	m.attr("_OP_TABLE") = op_table_rows();
	m.attr("_GRAPH_NO_FUSION") = int(SPYRE_COMPILE_NO_FUSION);
	m.attr("_GRAPH_OP_BY_OP") = int(SPYRE_COMPILE_OP_BY_OP);
	m.attr("_OPS_VERSION") = int(SPYRE_OPS_VERSION);

	py::class_<Compiled>(m, "_Compiled")
		.def("run", &Compiled::run)
		.def("serialize", &Compiled::serialize)
		.def("signature", &Compiled::signature)
		.def("stats", &Compiled::stats);
	m.def("_compiled_load", [](int index, const py::bytes &blob, const Signature &ins,
				   const Signature &outs) {
		return load_compiled(index, blob, value_infos(ins), value_infos(outs));
	});
	m.def("_ops_counters", [](int index) {
		auto di = c10::DeviceIndex(index);
		check_device_index(di);
		spyre_ops_stats st{};
		check_op(spyre_ops_get_stats(ops_context(di), &st), "spyre_ops_get_stats");
		py::dict d;
		d["programs_built"] = st.programs_built;
		d["graphs_loaded"] = st.graphs_loaded;
		return d;
	});

	py::class_<Graph>(m, "_Graph")
		.def(py::init<int>())
		.def("input", &Graph::input)
		.def("host_input", &Graph::host_input)
		.def("constant", &Graph::constant)
		.def("output", &Graph::output)
		.def("info",
		     [](Graph &G, int v) {
			     auto i = G.info(v);
			     return py::make_tuple(py::cast(i.dtype), i.shape);
		     })
		.def("compile", &Graph::compile, py::arg("flags") = 0)
		.def("unary",
		     [](Graph &G, int op, int x) {
			     return make("graph unary", [&](int *v) {
				     return spyre_graph_unary(G.g(), spyre_unary_op(op), x, v);
			     });
		     })
		.def("binary",
		     [](Graph &G, int op, int a, int b) {
			     return make("graph binary", [&](int *v) {
				     return spyre_graph_binary(G.g(), spyre_binary_op(op), a, b, v);
			     });
		     })
		.def("binary_scalar",
		     [](Graph &G, int op, int a, double s, bool reverse) {
			     return make("graph binary_scalar", [&](int *v) {
				     return spyre_graph_binary_scalar(G.g(), spyre_binary_op(op), a, s,
								      reverse, v);
			     });
		     })
		.def("clamp",
		     [](Graph &G, int x, double lo, double hi) {
			     return make("graph clamp", [&](int *v) {
				     return spyre_graph_clamp(G.g(), x, lo, hi, v);
			     });
		     })
		.def("pow_scalar",
		     [](Graph &G, int x, double p) {
			     return make("graph pow", [&](int *v) {
				     return spyre_graph_pow_scalar(G.g(), x, p, v);
			     });
		     })
		.def("cast",
		     [](Graph &G, int x, at::ScalarType dt) {
			     return make("graph cast", [&](int *v) {
				     return spyre_graph_cast(G.g(), x, card_dtype(dt), v);
			     });
		     })
		.def("arange",
		     [](Graph &G, double start, double step, int64_t n, at::ScalarType dt) {
			     return make("graph arange", [&](int *v) {
				     return spyre_graph_arange(G.g(), start, step, n, card_dtype(dt), v);
			     });
		     })
		.def("where",
		     [](Graph &G, int c, int a, int b) {
			     return make("graph where", [&](int *v) {
				     return spyre_graph_where(G.g(), c, a, b, v);
			     });
		     })
		.def("masked_fill",
		     [](Graph &G, int x, int mask, double value) {
			     return make("graph masked_fill", [&](int *v) {
				     return spyre_graph_masked_fill(G.g(), x, mask, value, v);
			     });
		     })
		.def("tril",
		     [](Graph &G, int x, int64_t k, bool upper) {
			     return make("graph tril", [&](int *v) {
				     return spyre_graph_tril(G.g(), x, k, upper, v);
			     });
		     })
		.def("contiguous",
		     [](Graph &G, int x) {
			     return make("graph contiguous", [&](int *v) {
				     return spyre_graph_contiguous(G.g(), x, v);
			     });
		     })
		.def("matmul",
		     [](Graph &G, int a, int b) {
			     return make("graph matmul", [&](int *v) {
				     return spyre_graph_matmul(G.g(), a, b, v);
			     });
		     })
		.def("matmul_w8",
		     [](Graph &G, int a, int b) {
			     return make("graph matmul_w8", [&](int *v) {
				     return spyre_graph_matmul_w8(G.g(), a, b, v);
			     });
		     })
		.def("linear",
		     [](Graph &G, int x, int w, int bias) {
			     return make("graph linear", [&](int *v) {
				     return spyre_graph_linear(G.g(), x, w, bias, v);
			     });
		     })
		.def("reduce_dims",
		     [](Graph &G, int op, int x, std::vector<int64_t> dims, bool keepdim) {
			     auto d = as_int(dims);
			     return make("graph reduce", [&](int *v) {
				     return spyre_graph_reduce_dims(G.g(), spyre_reduce_op(op), x,
								    d.data(), unsigned(d.size()),
								    keepdim, v);
			     });
		     })
		.def("softmax",
		     [](Graph &G, int x, int dim) {
			     return make("graph softmax", [&](int *v) {
				     return spyre_graph_softmax(G.g(), x, dim, v);
			     });
		     })
		.def("log_softmax",
		     [](Graph &G, int x, int dim) {
			     return make("graph log_softmax", [&](int *v) {
				     return spyre_graph_log_softmax(G.g(), x, dim, v);
			     });
		     })
		.def("argmax",
		     [](Graph &G, int x, int dim, bool keepdim) {
			     return make("graph argmax", [&](int *v) {
				     return spyre_graph_argmax(G.g(), x, dim, keepdim, v);
			     });
		     })
		.def("cumsum",
		     [](Graph &G, int x, int dim) {
			     return make("graph cumsum", [&](int *v) {
				     return spyre_graph_cumsum(G.g(), x, dim, v);
			     });
		     })
		.def("layer_norm",
		     [](Graph &G, int x, int w, int b, double eps) {
			     return make("graph layer_norm", [&](int *v) {
				     return spyre_graph_layer_norm(G.g(), x, w, b, eps, v);
			     });
		     })
		.def("rms_norm",
		     [](Graph &G, int x, int w, double eps) {
			     return make("graph rms_norm", [&](int *v) {
				     return spyre_graph_rms_norm(G.g(), x, w, eps, v);
			     });
		     })
		.def("rotate_half",
		     [](Graph &G, int x) {
			     return make("graph rotate_half", [&](int *v) {
				     return spyre_graph_rotate_half(G.g(), x, v);
			     });
		     })
		.def("embedding",
		     [](Graph &G, int w, int idx) {
			     return make("graph embedding", [&](int *v) {
				     return spyre_graph_embedding(G.g(), w, idx, v);
			     });
		     })
		.def("gather",
		     [](Graph &G, int x, int dim, int idx) {
			     return make("graph gather", [&](int *v) {
				     return spyre_graph_gather(G.g(), x, dim, idx, v);
			     });
		     })
		.def("sdpa",
		     [](Graph &G, int q, int k, int vv, int mask, bool causal, double scale) {
			     return make("graph sdpa", [&](int *v) {
				     return spyre_graph_sdpa(G.g(), q, k, vv, mask, causal, scale, v);
			     });
		     })
		.def("cat",
		     [](Graph &G, std::vector<int> xs, int dim) {
			     return make("graph cat", [&](int *v) {
				     return spyre_graph_cat(G.g(), xs.data(), unsigned(xs.size()), dim,
							    v);
			     });
		     })
		.def("reshape",
		     [](Graph &G, int x, std::vector<int64_t> shape) {
			     return make("graph reshape", [&](int *v) {
				     return spyre_graph_reshape(G.g(), x, unsigned(shape.size()),
								shape.data(), v);
			     });
		     })
		.def("permute",
		     [](Graph &G, int x, std::vector<int64_t> perm) {
			     auto p = as_int(perm);
			     return make("graph permute", [&](int *v) {
				     return spyre_graph_permute(G.g(), x, p.data(), v);
			     });
		     })
		.def("transpose",
		     [](Graph &G, int x, int d0, int d1) {
			     return make("graph transpose", [&](int *v) {
				     return spyre_graph_transpose(G.g(), x, d0, d1, v);
			     });
		     })
		.def("slice",
		     [](Graph &G, int x, int dim, int64_t start, int64_t end) {
			     return make("graph slice", [&](int *v) {
				     return spyre_graph_slice(G.g(), x, dim, start, end, v);
			     });
		     })
		.def("expand", [](Graph &G, int x, std::vector<int64_t> shape) {
			return make("graph expand", [&](int *v) {
				return spyre_graph_expand(G.g(), x, unsigned(shape.size()), shape.data(),
							  v);
			});
		});
}

} // namespace torch_spyre
