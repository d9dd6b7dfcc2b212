// SPDX-License-Identifier: MIT
// The c10d backend for spyre tensors (torch.distributed "spyre").
//
// The card has no network, and the ranks are separate processes (the
// cards' peer DMA, libspyre's spyre_memcpy_peer, would need dma-buf fds
// passed between them; not done yet), so a collective stages its
// spyre tensors through pinned host memory and runs on gloo, the CPU
// engine PyTorch already has: inputs come down to pinned host buffers
// (non_blocking D2H on the caller's current stream, after the work that
// produced them), an event marks the end of those copies, and the call
// returns. The backend's launcher thread waits for the event and starts
// gloo's collective on the host buffers, collectives in call order (gloo
// pairs them across ranks by that order). The Work's wait() waits for
// gloo and copies the results back to the card on the caller's current
// stream (non_blocking from pinned memory: ordered before anything the
// caller queues on that stream later, as NCCL's wait orders the current
// CUDA stream). Two cards of one machine go the same way, through
// host memory (Documentation/distributed.rst).
//
// Why C++ and not a Python ProcessGroup: torch 2.13's pybind trampoline
// exists for ProcessGroup only, not for Backend, so a Python backend has to
// replace the whole process group (losing "cpu:gloo" next to it) and can
// override only some collectives (not _allgather_base, reduce, gather,
// scatter...), so dist.all_gather_into_tensor would fail on it. A C++
// Backend sits under ProcessGroup's per-device dispatch like gloo and NCCL
// and serves c10d's Python API, the functional collectives and DTensor.
#include "distributed.h"
#include "host_allocator.h"

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <torch/extension.h>

#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace py = pybind11;

namespace torch_spyre {
namespace {

using c10d::Work;
using WorkPtr = c10::intrusive_ptr<Work>;
using TensorList = std::vector<at::Tensor>;

// A pinned host tensor shaped like @t (contiguous), pinned for t's card so
// the copies to and from it are single DMAs.
at::Tensor host_like(const at::Tensor &t)
{
	auto opts = t.options().device(at::kCPU);
	size_t nbytes = size_t(t.numel()) * t.element_size();
	c10::Storage storage(c10::Storage::use_byte_size_t(), nbytes,
			     host_alloc_for(t.device().index(), nbytes), nullptr, false);
	return at::empty({0}, opts).set_(storage, 0, t.sizes(), c10::contiguous_strides(t.sizes()));
}

// What a collective does after gloo finished, before the copies back
// (AVG's division: gloo has no AVG).
using Post = std::function<void()>;

// A collective's Work: gloo's Work on the host copies once the launcher
// started it, plus the copies back to the card that wait() (or a completed
// is_completed()) queues on the caller's current stream, once.
class SpyreWork : public Work {
public:
	SpyreWork(int rank, c10d::OpType type, std::vector<std::pair<at::Tensor, at::Tensor>> back,
		  TensorList outputs, Post post)
		: Work(rank, type), back_(std::move(back)), outputs_(std::move(outputs)),
		  post_(std::move(post))
	{
	}

	// The launcher: gloo's work started, or starting it failed.
	void launched(WorkPtr gloo, std::exception_ptr error)
	{
		{
			std::lock_guard<std::mutex> lock(launch_mu_);
			gloo_ = std::move(gloo);
			launch_error_ = error;
			launch_done_ = true;
		}
		launch_cv_.notify_all();
	}

	bool isCompleted() override
	{
		WorkPtr g;
		{
			std::lock_guard<std::mutex> lock(launch_mu_);
			if (!launch_done_)
				return false;
			if (launch_error_)
				return true;
			g = gloo_;
		}
		if (!g->isCompleted())
			return false;
		if (g->isSuccess()) // a failed one leaves the outputs alone
			finish_once();
		return true;
	}

	bool isSuccess() const override
	{
		std::lock_guard<std::mutex> lock(launch_mu_);
		return launch_done_ && !launch_error_ && gloo_->isSuccess();
	}

	std::exception_ptr exception() const override
	{
		std::lock_guard<std::mutex> lock(launch_mu_);
		if (launch_error_ || !gloo_)
			return launch_error_;
		return gloo_->exception();
	}

	int sourceRank() const override
	{
		std::lock_guard<std::mutex> lock(launch_mu_);
		TORCH_CHECK(gloo_, "spyre c10d backend: sourceRank() before the recv started");
		return gloo_->sourceRank();
	}

	std::vector<at::Tensor> result() override
	{
		return outputs_;
	}

	void synchronize() override
	{
		finish_once();
	}

	bool wait(std::chrono::milliseconds timeout) override
	{
		// (Work.wait's binding has released the GIL already)
		bool ok = started()->wait(timeout);
		if (ok)
			finish_once();
		return ok;
	}

	// Blocking: the future is complete when the results are on the card's
	// stream (DDP-style comm hooks are not a target yet).
	c10::intrusive_ptr<c10::ivalue::Future> getFuture() override
	{
		wait(kNoTimeout);
		auto fut = c10::make_intrusive<c10::ivalue::Future>(
			c10::ListType::create(c10::TensorType::get()));
		fut->markCompleted(c10::IValue(outputs_));
		return fut;
	}

private:
	// gloo's work once launched (it waits only for the card's copies to
	// the host); rethrows a failure to start it.
	WorkPtr started()
	{
		std::unique_lock<std::mutex> lock(launch_mu_);
		launch_cv_.wait(lock, [this] { return launch_done_; });
		if (launch_error_)
			std::rethrow_exception(launch_error_);
		return gloo_;
	}

	void finish_once()
	{
		std::lock_guard<std::mutex> lock(mu_);
		if (copied_)
			return;
		if (post_)
			post_();
		for (auto &[dst, host] : back_)
			dst.copy_(host, /*non_blocking=*/true);
		copied_ = true;
		back_.clear(); // the pinned blocks' reuse waits for the copies (recorded)
	}

	mutable std::mutex launch_mu_;
	std::condition_variable launch_cv_;
	bool launch_done_ = false;
	std::exception_ptr launch_error_;
	WorkPtr gloo_;
	std::vector<std::pair<at::Tensor, at::Tensor>> back_;
	TensorList outputs_;
	Post post_;
	std::mutex mu_;
	bool copied_ = false;
};

// One thread per backend that starts gloo's collectives in call order,
// each once the card has copied its inputs to the host.
class Launcher {
public:
	Launcher() : thread_([this] { run(); })
	{
	}

	~Launcher()
	{
		{
			std::lock_guard<std::mutex> lock(mu_);
			stop_ = true;
		}
		cv_.notify_all();
		thread_.join();
	}

	void push(std::function<void()> job)
	{
		{
			std::lock_guard<std::mutex> lock(mu_);
			jobs_.push_back(std::move(job));
		}
		cv_.notify_all();
	}

private:
	void run()
	{
		for (;;) {
			std::function<void()> job;
			{
				std::unique_lock<std::mutex> lock(mu_);
				cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
				if (jobs_.empty())
					return; // stopping, nothing left
				job = std::move(jobs_.front());
				jobs_.pop_front();
			}
			job();
			job = nullptr; // its tensors and gloo's work go now, not later
		}
	}

	std::mutex mu_;
	std::condition_variable cv_;
	std::deque<std::function<void()>> jobs_;
	bool stop_ = false;
	std::thread thread_; // last: starts after the members it uses
};

class SpyreBackend : public c10d::Backend {
public:
	SpyreBackend(c10::intrusive_ptr<c10d::Backend> gloo, int rank, int size)
		: Backend(rank, size), gloo_(std::move(gloo)),
		  launcher_(std::make_unique<Launcher>())
	{
	}

	const std::string getBackendName() const override
	{
		return "spyre";
	}

	void setSequenceNumberForGroup() override
	{
		gloo_->setSequenceNumberForGroup();
	}

	uint64_t getSequenceNumberForGroup() override
	{
		return gloo_->getSequenceNumberForGroup();
	}

	WorkPtr broadcast(TensorList &tensors, const c10d::BroadcastOptions &opts) override
	{
		Staging s("broadcast");
		auto host = s.inout(tensors, "tensors");
		return s.done(this, c10d::OpType::BROADCAST,
			      [g = gloo_, host, opts]() mutable {
				      return g->broadcast(host, opts);
			      });
	}

	WorkPtr allreduce(TensorList &tensors, const c10d::AllreduceOptions &opts) override
	{
		Staging s("allreduce");
		auto host = s.inout(tensors, "tensors");
		auto o = opts;
		Post post = avg_post(s.op, o.reduceOp, host);
		return s.done(this, c10d::OpType::ALLREDUCE,
			      [g = gloo_, host, o]() mutable { return g->allreduce(host, o); },
			      post);
	}

	WorkPtr allreduce_coalesced(TensorList &tensors,
				    const c10d::AllreduceCoalescedOptions &opts) override
	{
		Staging s("allreduce_coalesced");
		auto host = s.inout(tensors, "tensors");
		auto o = opts;
		Post post = avg_post(s.op, o.reduceOp, host);
		return s.done(this, c10d::OpType::ALLREDUCE_COALESCED,
			      [g = gloo_, host, o]() mutable {
				      return g->allreduce_coalesced(host, o);
			      },
			      post);
	}

	WorkPtr reduce(TensorList &tensors, const c10d::ReduceOptions &opts) override
	{
		Staging s("reduce");
		auto host = s.inout(tensors, "tensors");
		auto o = opts;
		// only the root's result is defined: divide there
		TensorList root = getRank() == o.rootRank ? host : TensorList{};
		Post post = avg_post(s.op, o.reduceOp, root);
		return s.done(this, c10d::OpType::REDUCE,
			      [g = gloo_, host, o]() mutable { return g->reduce(host, o); },
			      post);
	}

	WorkPtr allgather(std::vector<TensorList> &outputs, TensorList &inputs,
			  const c10d::AllgatherOptions &opts) override
	{
		Staging s("allgather");
		auto in = s.in(inputs, "input_tensor");
		std::vector<TensorList> out;
		for (auto &l : outputs)
			out.push_back(s.out(l, "tensor_list"));
		return s.done(this, c10d::OpType::ALLGATHER,
			      [g = gloo_, out, in, opts]() mutable {
				      return g->allgather(out, in, opts);
			      });
	}

	WorkPtr _allgather_base(at::Tensor &output, at::Tensor &input,
				const c10d::AllgatherOptions &opts) override
	{
		Staging s("all_gather_into_tensor");
		check_flat_sizes(s.op, output, "output_tensor", input, "input_tensor");
		auto in = s.in1(input, "input_tensor");
		auto out = s.out1(output, "output_tensor");
		return s.done(this, c10d::OpType::_ALLGATHER_BASE,
			      [g = gloo_, out, in, opts]() mutable {
				      return g->_allgather_base(out, in, opts);
			      });
	}

	WorkPtr allgather_coalesced(std::vector<TensorList> &outputs, TensorList &inputs,
				    const c10d::AllgatherOptions &opts) override
	{
		Staging s("allgather_coalesced");
		auto in = s.in(inputs, "input_tensors");
		std::vector<TensorList> out;
		for (auto &l : outputs)
			out.push_back(s.out(l, "output_tensor_lists"));
		return s.done(this, c10d::OpType::ALLGATHER_COALESCED,
			      [g = gloo_, out, in, opts]() mutable {
				      return g->allgather_coalesced(out, in, opts);
			      });
	}

	WorkPtr allgather_into_tensor_coalesced(TensorList &outputs, TensorList &inputs,
						const c10d::AllgatherOptions &opts) override
	{
		Staging s("allgather_into_tensor_coalesced");
		auto in = s.in(inputs, "inputs");
		auto out = s.out(outputs, "outputs");
		return s.done(this, c10d::OpType::COALESCED,
			      [g = gloo_, out, in, opts]() mutable {
				      return g->allgather_into_tensor_coalesced(out, in, opts);
			      });
	}

	WorkPtr gather(std::vector<TensorList> &outputs, TensorList &inputs,
		       const c10d::GatherOptions &opts) override
	{
		Staging s("gather");
		auto in = s.in(inputs, "tensor");
		std::vector<TensorList> out;
		for (auto &l : outputs)
			out.push_back(s.out(l, "gather_list"));
		return s.done(this, c10d::OpType::GATHER,
			      [g = gloo_, out, in, opts]() mutable {
				      return g->gather(out, in, opts);
			      });
	}

	WorkPtr scatter(TensorList &outputs, std::vector<TensorList> &inputs,
			const c10d::ScatterOptions &opts) override
	{
		Staging s("scatter");
		std::vector<TensorList> in;
		for (auto &l : inputs)
			in.push_back(s.in(l, "scatter_list"));
		auto out = s.out(outputs, "tensor");
		return s.done(this, c10d::OpType::SCATTER,
			      [g = gloo_, out, in, opts]() mutable {
				      return g->scatter(out, in, opts);
			      });
	}

	WorkPtr reduce_scatter(TensorList &outputs, std::vector<TensorList> &inputs,
			       const c10d::ReduceScatterOptions &opts) override
	{
		Staging s("reduce_scatter");
		std::vector<TensorList> in;
		for (auto &l : inputs)
			in.push_back(s.in(l, "input_list"));
		auto out = s.out(outputs, "output");
		auto o = opts;
		Post post = avg_post(s.op, o.reduceOp, out);
		return s.done(this, c10d::OpType::REDUCE_SCATTER,
			      [g = gloo_, out, in, o]() mutable {
				      return g->reduce_scatter(out, in, o);
			      },
			      post);
	}

	WorkPtr _reduce_scatter_base(at::Tensor &output, at::Tensor &input,
				     const c10d::ReduceScatterOptions &opts) override
	{
		Staging s("reduce_scatter_tensor");
		check_flat_sizes(s.op, input, "input", output, "output");
		auto in = s.in1(input, "input");
		auto out = s.out1(output, "output");
		auto o = opts;
		TensorList outs{out};
		Post post = avg_post(s.op, o.reduceOp, outs);
		return s.done(this, c10d::OpType::_REDUCE_SCATTER_BASE,
			      [g = gloo_, out, in, o]() mutable {
				      return g->_reduce_scatter_base(out, in, o);
			      },
			      post);
	}

	WorkPtr reduce_scatter_tensor_coalesced(TensorList &outputs, TensorList &inputs,
						const c10d::ReduceScatterOptions &opts) override
	{
		Staging s("reduce_scatter_tensor_coalesced");
		auto in = s.in(inputs, "inputs");
		auto out = s.out(outputs, "outputs");
		auto o = opts;
		Post post = avg_post(s.op, o.reduceOp, out);
		return s.done(this, c10d::OpType::COALESCED,
			      [g = gloo_, out, in, o]() mutable {
				      return g->reduce_scatter_tensor_coalesced(out, in, o);
			      },
			      post);
	}

	WorkPtr alltoall_base(at::Tensor &output, at::Tensor &input,
			      std::vector<int64_t> &output_splits,
			      std::vector<int64_t> &input_splits,
			      const c10d::AllToAllOptions &opts) override
	{
		Staging s("all_to_all_single");
		auto in = s.in1(input, "input");
		auto out = s.out1(output, "output");
		return s.done(this, c10d::OpType::ALLTOALL_BASE,
			      [g = gloo_, out, in, output_splits, input_splits, opts]() mutable {
				      return g->alltoall_base(out, in, output_splits, input_splits,
							      opts);
			      });
	}

	WorkPtr alltoall(TensorList &outputs, TensorList &inputs,
			 const c10d::AllToAllOptions &opts) override
	{
		Staging s("all_to_all");
		auto in = s.in(inputs, "input_tensor_list");
		auto out = s.out(outputs, "output_tensor_list");
		return s.done(this, c10d::OpType::ALLTOALL,
			      [g = gloo_, out, in, opts]() mutable {
				      return g->alltoall(out, in, opts);
			      });
	}

	WorkPtr send(TensorList &tensors, int dst, int tag) override
	{
		Staging s("send");
		auto in = s.in(tensors, "tensor");
		return s.done(this, c10d::OpType::SEND,
			      [g = gloo_, in, dst, tag]() mutable {
				      return g->send(in, dst, tag);
			      });
	}

	WorkPtr recv(TensorList &tensors, int src, int tag) override
	{
		Staging s("recv");
		auto out = s.out(tensors, "tensor");
		return s.done(this, c10d::OpType::RECV,
			      [g = gloo_, out, src, tag]() mutable {
				      return g->recv(out, src, tag);
			      });
	}

	WorkPtr recvAnysource(TensorList &tensors, int tag) override
	{
		Staging s("recv");
		auto out = s.out(tensors, "tensor");
		return s.done(this, c10d::OpType::RECVANYSOURCE,
			      [g = gloo_, out, tag]() mutable {
				      return g->recvAnysource(out, tag);
			      });
	}

	WorkPtr barrier(const c10d::BarrierOptions &opts) override
	{
		// through the launcher too: after the collectives called before it
		Staging s("barrier");
		auto o = opts;
		o.device = at::Device(at::kCPU); // gloo's barrier is its own, no tensor
		return s.done(this, c10d::OpType::BARRIER,
			      [g = gloo_, o]() mutable { return g->barrier(o); });
	}

	void abort() override
	{
		stop_launcher();
		gloo_->abort();
	}

	// destroy_process_group: the launcher thread ends here, on the caller's
	// thread, once every collective queued so far has started, so no
	// thread of ours outlives the group into interpreter teardown.
	void shutdown() override
	{
		stop_launcher();
		gloo_->shutdown();
	}

private:
	// One call's host copies: checks that every tensor is a spyre tensor
	// (a clear error naming the op and argument otherwise), stages inputs
	// down and remembers which host tensors go back to which spyre tensors.
	struct Staging {
		explicit Staging(const char *op_) : op(op_)
		{
		}

		void check(const at::Tensor &t, const char *arg) const
		{
			TORCH_CHECK_VALUE(t.defined(), "spyre c10d backend: ", op, ": ", arg,
					  " is an undefined tensor");
			TORCH_CHECK_VALUE(t.device().type() == c10::DeviceType::PrivateUse1,
					  "spyre c10d backend: ", op, ": ", arg, " is a ",
					  t.device().type(),
					  " tensor; this backend takes spyre tensors (for CPU "
					  "tensors name a CPU backend too: "
					  "init_process_group(\"cpu:gloo,spyre:spyre\"))");
			TORCH_CHECK_VALUE(!t.is_sparse(), "spyre c10d backend: ", op, ": ", arg,
					  " is sparse; only dense spyre tensors are supported");
		}

		// A host copy of input @t (it is not written back): queued on
		// t's current stream, after the work that produces t.
		at::Tensor in1(const at::Tensor &t, const char *arg)
		{
			check(t, arg);
			auto h = host_like(t);
			download(h, t);
			return h;
		}

		// A host tensor for output @t, copied back at wait().
		at::Tensor out1(const at::Tensor &t, const char *arg, bool load = false)
		{
			check(t, arg);
			auto h = host_like(t);
			if (load)
				download(h, t);
			back.emplace_back(t, h);
			outputs.push_back(t);
			return h;
		}

		void download(at::Tensor &h, const at::Tensor &t)
		{
			h.copy_(t, /*non_blocking=*/true);
			if (std::find(devices.begin(), devices.end(), t.device()) == devices.end())
				devices.push_back(t.device());
		}

		TensorList in(const TensorList &ts, const char *arg)
		{
			TensorList r;
			for (auto &t : ts)
				r.push_back(in1(t, arg));
			return r;
		}

		TensorList out(const TensorList &ts, const char *arg)
		{
			TensorList r;
			for (auto &t : ts)
				r.push_back(out1(t, arg));
			return r;
		}

		// In-place collectives (allreduce, broadcast): down and back.
		TensorList inout(const TensorList &ts, const char *arg)
		{
			TensorList r;
			for (auto &t : ts)
				r.push_back(out1(t, arg, true));
			return r;
		}

		// The Work; @launch starts gloo's collective on the launcher
		// thread once the downloads above have run on the card.
		WorkPtr done(SpyreBackend *be, c10d::OpType type, std::function<WorkPtr()> launch,
			     Post post = nullptr)
		{
			auto work = c10::make_intrusive<SpyreWork>(
				be->getRank(), type, std::move(back), std::move(outputs),
				std::move(post));
			c10::impl::VirtualGuardImpl impl(c10::DeviceType::PrivateUse1);
			auto events = std::make_shared<std::vector<c10::Event>>();
			for (auto &d : devices) {
				events->emplace_back(c10::DeviceType::PrivateUse1);
				events->back().record(impl.getStream(d));
			}
			be->push([events, launch = std::move(launch), work] {
				try {
					for (auto &e : *events)
						e.synchronize(); // the inputs are on the host
					work->launched(launch(), nullptr);
				} catch (...) {
					work->launched(nullptr, std::current_exception());
				}
			});
			return work;
		}

		const char *op;
		std::vector<std::pair<at::Tensor, at::Tensor>> back;
		TensorList outputs;
		std::vector<c10::Device> devices; // where inputs came from
	};

	// The "into a tensor" forms: @whole holds world-size copies of @part,
	// in @part's dtype (checked here so the error names the op and sizes,
	// on every rank before anything is sent).
	void check_flat_sizes(const char *op, const at::Tensor &whole, const char *whole_arg,
			      const at::Tensor &part, const char *part_arg) const
	{
		TORCH_CHECK_VALUE(whole.scalar_type() == part.scalar_type(),
				  "spyre c10d backend: ", op, ": ", whole_arg, " is ",
				  whole.scalar_type(), " but ", part_arg, " is ",
				  part.scalar_type());
		TORCH_CHECK_VALUE(whole.numel() == part.numel() * getSize(),
				  "spyre c10d backend: ", op, ": ", whole_arg, " has ",
				  whole.numel(), " elements, expected world_size (", getSize(),
				  ") x ", part_arg, "'s ", part.numel(), " = ",
				  part.numel() * getSize());
	}

	// Gloo has no AVG: sum, then divide the results by the group size on
	// the host (the dtype's own rounding, as a CPU sum / n). An integer
	// average has no exact result, so it is refused as PREMUL_SUM is.
	Post avg_post(const char *op, c10d::ReduceOp &reduce, const TensorList &results)
	{
		TORCH_CHECK_VALUE(reduce.op_ != c10d::ReduceOp::PREMUL_SUM, "spyre c10d backend: ",
				  op, ": ReduceOp.PREMUL_SUM is not supported");
		if (reduce.op_ != c10d::ReduceOp::AVG)
			return nullptr;
		for (auto &t : results)
			TORCH_CHECK_VALUE(at::isFloatingType(t.scalar_type()),
					  "spyre c10d backend: ", op,
					  ": ReduceOp.AVG needs a floating-point tensor, got ",
					  t.scalar_type());
		reduce = c10d::ReduceOp(c10d::ReduceOp::SUM);
		int n = getSize();
		return [results, n] {
			for (auto t : results)
				t.div_(n);
		};
	}

	void push(std::function<void()> job)
	{
		std::lock_guard<std::mutex> lock(launcher_mu_);
		TORCH_CHECK(launcher_, "spyre c10d backend: a collective after the process group "
				       "was shut down (destroy_process_group)");
		launcher_->push(std::move(job));
	}

	void stop_launcher()
	{
		std::unique_ptr<Launcher> l;
		{
			std::lock_guard<std::mutex> lock(launcher_mu_);
			l = std::move(launcher_);
		}
		l.reset(); // joins
	}

	c10::intrusive_ptr<c10d::Backend> gloo_;
	std::mutex launcher_mu_;
	std::unique_ptr<Launcher> launcher_;
};

} // namespace

void init_distributed_bindings(py::module &m)
{
	// A subclass of torch's own binding torch._C._distributed_c10d.Backend
	// (imported first so pybind11 knows the base), so that
	// ProcessGroup._register_backend takes it.
	py::module::import("torch._C._distributed_c10d");
	py::class_<SpyreBackend, c10d::Backend, c10::intrusive_ptr<SpyreBackend>>(m,
										  "_SpyreBackend")
		.def(py::init([](const c10::intrusive_ptr<c10d::Backend> &gloo, int rank,
				 int size) {
			     TORCH_CHECK_VALUE(gloo, "spyre c10d backend: no gloo backend given");
			     return c10::make_intrusive<SpyreBackend>(gloo, rank, size);
		     }),
		     py::arg("gloo"), py::arg("rank"), py::arg("size"));
}

} // namespace torch_spyre
