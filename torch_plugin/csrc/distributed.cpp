// SPDX-License-Identifier: MIT
// The c10d backend for spyre tensors (torch.distributed "spyre").
//
// Between the cards of one machine the bytes go card to card
// (distributed_peer.cpp: the ranks pass their receive buffers' dma-buf fds
// once per group and write into each other's cards with peer DMA) for
// allreduce, broadcast, allgather(_into_tensor), reduce_scatter(_tensor),
// alltoall(_base), gather, scatter and send/recv. Everything else, and
// every collective when the ranks span machines or their cards cannot
// reach each other, stages its spyre tensors through pinned host memory
// and runs on gloo, the CPU engine PyTorch already has: inputs come down
// to pinned host buffers (non_blocking D2H on the caller's current stream,
// after the work that produced them), an event marks the end of those
// copies, and the call returns. The backend's launcher thread waits for
// the event and starts gloo's collective on the host buffers, collectives
// in call order (gloo pairs them across ranks by that order). The Work's
// wait() waits for gloo and copies the results back to the card on the
// caller's current stream (non_blocking from pinned memory: ordered before
// anything the caller queues on that stream later, as NCCL's wait orders
// the current CUDA stream). Documentation/distributed.rst says which path
// runs when.
//
// Why C++ and not a Python ProcessGroup: torch 2.13's pybind trampoline
// exists for ProcessGroup only, not for Backend, so a Python backend has to
// replace the whole process group (losing "cpu:gloo" next to it) and can
// override only some collectives (not _allgather_base, reduce, gather,
// scatter...), so dist.all_gather_into_tensor would fail on it. A C++
// Backend sits under ProcessGroup's per-device dispatch like gloo and NCCL
// and serves c10d's Python API, the functional collectives and DTensor.
#include "distributed.h"
#include "distributed_peer.h"
#include "host_allocator.h"
#include "stream.h"

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Utils.hpp>
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

// The Work of a collective whose launcher job did everything (the card to
// card path): complete from the start.
class DoneWork : public Work {
public:
	DoneWork()
	{
		finish();
	}
};

// A spyre tensor as the card-to-card path takes it: flat and contiguous,
// itself when it is, else a contiguous copy (@load: of its values, queued
// on the caller's stream at the call) written back at the end.
struct Flat {
	at::Tensor user, flat;
	bool temp = false;

	Flat() = default;
	Flat(const at::Tensor &t, bool load) : user(t)
	{
		if (t.is_contiguous()) {
			flat = t.view(-1);
		} else {
			flat = load ? t.contiguous().view(-1) : at::empty({ t.numel() }, t.options());
			temp = true;
		}
	}

	void write_back() const
	{
		if (temp)
			user.copy_(flat.view(user.sizes()));
	}
};

// Output tensors as Flats (their values not loaded), and back.
std::shared_ptr<std::vector<Flat>> flats(const TensorList &ts)
{
	auto v = std::make_shared<std::vector<Flat>>();
	for (auto &t : ts)
		v->emplace_back(t, false);
	return v;
}

TensorList flat_views(const std::vector<Flat> &fs)
{
	TensorList v;
	for (auto &f : fs)
		v.push_back(f.flat);
	return v;
}

void write_back(const std::vector<Flat> &fs)
{
	for (auto &f : fs)
		f.write_back();
}

// all_to_all_single's @n parts of @flat: the elements of @shaped, whose
// dim-0 rows @splits divides (c10d::checkSplitSizes checked them), or
// equal parts when @splits is empty.
TensorList split_rows(const at::Tensor &flat, const at::Tensor &shaped,
		      const std::vector<int64_t> &splits, int n)
{
	int64_t rows = shaped.size(0);
	int64_t row = rows ? shaped.numel() / rows : 0;
	TensorList parts;
	int64_t off = 0;
	for (int i = 0; i < n; i++) {
		int64_t r = splits.empty() ? rows / n : splits[i];
		parts.push_back(flat.narrow(0, off * row, r * row));
		off += r;
	}
	return parts;
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
	SpyreBackend(c10::intrusive_ptr<c10d::Backend> gloo, int rank, int size,
		     c10::intrusive_ptr<c10d::Store> store, std::chrono::milliseconds timeout)
		: Backend(rank, size), gloo_(std::move(gloo)), store_(std::move(store)),
		  timeout_(timeout), launcher_(std::make_unique<Launcher>())
	{
	}

	~SpyreBackend() override
	{
		stop_launcher(); // its jobs use peer_
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
		if (tensors.size() == 1 && opts.rootTensor == 0) {
			if (PeerComm *pc = peer_for("broadcast", tensors, false)) {
				auto f = std::make_shared<Flat>(tensors[0], true);
				int root = int(opts.rootRank);
				return peer_work(pc, c10d::OpType::BROADCAST, tensors,
						 [f, root](PeerComm &c) {
							 c.broadcast(f->flat, root);
							 f->write_back();
						 });
			}
		}
		count_staged_collective();
		Staging s("broadcast");
		auto host = s.inout(tensors, "tensors");
		return s.done(this, c10d::OpType::BROADCAST,
			      [g = gloo_, host, opts]() mutable {
				      return g->broadcast(host, opts);
			      });
	}

	WorkPtr allreduce(TensorList &tensors, const c10d::AllreduceOptions &opts) override
	{
		if (tensors.size() == 1) {
			auto o = opts;
			avg_post("allreduce", o.reduceOp, tensors); // its checks, before routing
			if (PeerComm *pc = peer_for("allreduce", tensors, true, opts.reduceOp.op_)) {
				auto f = std::make_shared<Flat>(tensors[0], true);
				auto op = opts.reduceOp.op_;
				return peer_work(pc, c10d::OpType::ALLREDUCE, tensors,
						 [f, op](PeerComm &c) {
							 c.allreduce(f->flat, op);
							 f->write_back();
						 });
			}
		}
		count_staged_collective();
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
		if (inputs.size() == 1 && outputs.size() == 1 && same_parts(outputs[0], inputs[0])) {
			TensorList all = outputs[0];
			all.push_back(inputs[0]);
			if (PeerComm *pc = peer_for("allgather", all, false)) {
				auto in = inputs[0].contiguous().view(-1);
				auto outs = flats(outputs[0]);
				return peer_work(pc, c10d::OpType::ALLGATHER, outputs[0],
						 [outs, in](PeerComm &c) {
							 c.allgather(flat_views(*outs), in);
							 write_back(*outs);
						 });
			}
		}
		count_staged_collective();
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
		check_flat_sizes("all_gather_into_tensor", output, "output_tensor", input,
				 "input_tensor");
		if (PeerComm *pc = peer_for("all_gather_into_tensor", { output, input }, false)) {
			auto in = input.contiguous().view(-1);
			auto out = std::make_shared<Flat>(output, false);
			int n = getSize();
			return peer_work(pc, c10d::OpType::_ALLGATHER_BASE, { output },
					 [out, in, n](PeerComm &c) {
						 TensorList o;
						 for (int i = 0; i < n; i++)
							 o.push_back(out->flat.narrow(0, i * in.numel(),
										      in.numel()));
						 c.allgather(o, in);
						 out->write_back();
					 });
		}
		count_staged_collective();
		Staging s("all_gather_into_tensor");
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
		int root = int(opts.rootRank);
		if (inputs.size() == 1 && rooted_parts("gather", outputs, "gather_list", inputs[0],
						       "tensor", root)) {
			TensorList all = inputs;
			if (getRank() == root)
				all.insert(all.end(), outputs[0].begin(), outputs[0].end());
			if (PeerComm *pc = peer_for("gather", all, false)) {
				auto in = inputs[0].contiguous().view(-1);
				auto outs = flats(getRank() == root ? outputs[0] : TensorList{});
				return peer_work(pc, c10d::OpType::GATHER,
						 getRank() == root ? outputs[0] : TensorList{},
						 [outs, in, root](PeerComm &c) {
							 c.gather(flat_views(*outs), in, root);
							 write_back(*outs);
						 });
			}
		}
		count_staged_collective();
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
		int root = int(opts.rootRank);
		if (outputs.size() == 1 && rooted_parts("scatter", inputs, "scatter_list", outputs[0],
							"tensor", root)) {
			TensorList all = outputs;
			if (getRank() == root)
				all.insert(all.end(), inputs[0].begin(), inputs[0].end());
			if (PeerComm *pc = peer_for("scatter", all, false)) {
				TensorList ins;
				if (getRank() == root)
					for (auto &t : inputs[0])
						ins.push_back(t.contiguous().view(-1));
				auto out = std::make_shared<Flat>(outputs[0], false);
				return peer_work(pc, c10d::OpType::SCATTER, outputs,
						 [out, ins, root](PeerComm &c) {
							 c.scatter(out->flat, ins, root);
							 out->write_back();
						 });
			}
		}
		count_staged_collective();
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
		if (outputs.size() == 1 && inputs.size() == 1 && same_parts(inputs[0], outputs[0])) {
			auto o = opts;
			avg_post("reduce_scatter", o.reduceOp, outputs);
			TensorList all = inputs[0];
			all.push_back(outputs[0]);
			if (PeerComm *pc = peer_for("reduce_scatter", all, true, opts.reduceOp.op_)) {
				TensorList ins;
				for (auto &t : inputs[0])
					ins.push_back(t.contiguous().view(-1));
				auto out = std::make_shared<Flat>(outputs[0], false);
				auto op = opts.reduceOp.op_;
				return peer_work(pc, c10d::OpType::REDUCE_SCATTER, outputs,
						 [out, ins, op](PeerComm &c) {
							 c.reduce_scatter(out->flat, ins, op);
							 out->write_back();
						 });
			}
		}
		count_staged_collective();
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
		check_flat_sizes("reduce_scatter_tensor", input, "input", output, "output");
		{
			auto o = opts;
			TensorList outs{ output };
			avg_post("reduce_scatter_tensor", o.reduceOp, outs);
		}
		if (PeerComm *pc = peer_for("reduce_scatter_tensor", { output, input }, true,
					    opts.reduceOp.op_)) {
			auto in = input.contiguous().view(-1);
			auto out = std::make_shared<Flat>(output, false);
			auto op = opts.reduceOp.op_;
			int n = getSize();
			return peer_work(pc, c10d::OpType::_REDUCE_SCATTER_BASE, { output },
					 [out, in, op, n](PeerComm &c) {
						 int64_t m = out->flat.numel();
						 TensorList ins;
						 for (int i = 0; i < n; i++)
							 ins.push_back(in.narrow(0, i * m, m));
						 c.reduce_scatter(out->flat, ins, op);
						 out->write_back();
					 });
		}
		count_staged_collective();
		Staging s("reduce_scatter_tensor");
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
		if (PeerComm *pc = peer_for("all_to_all_single", { output, input }, false)) {
			// gloo's checks and errors, raised at the call on this rank
			c10d::checkSplitSizes(input_splits, input, getSize());
			c10d::checkSplitSizes(output_splits, output, getSize());
			int n = getSize();
			auto ins = split_rows(input.contiguous().view(-1), input, input_splits, n);
			auto out = std::make_shared<Flat>(output, false);
			auto osplits = output_splits;
			return peer_work(pc, c10d::OpType::ALLTOALL_BASE, { output },
					 [out, ins, osplits, n](PeerComm &c) {
						 c.alltoall(split_rows(out->flat, out->user, osplits, n),
							    ins);
						 out->write_back();
					 });
		}
		Staging s("all_to_all_single");
		auto in = s.in1(input, "input");
		auto out = s.out1(output, "output");
		count_staged_collective();
		return s.done(this, c10d::OpType::ALLTOALL_BASE,
			      [g = gloo_, out, in, output_splits, input_splits, opts]() mutable {
				      return g->alltoall_base(out, in, output_splits, input_splits,
							      opts);
			      });
	}

	WorkPtr alltoall(TensorList &outputs, TensorList &inputs,
			 const c10d::AllToAllOptions &opts) override
	{
		int n = getSize(), me = getRank();
		if (int(outputs.size()) == n && int(inputs.size()) == n) {
			TensorList all = outputs;
			all.insert(all.end(), inputs.begin(), inputs.end());
			if (PeerComm *pc = peer_for("all_to_all", all, false)) {
				TORCH_CHECK_VALUE(outputs[me].numel() == inputs[me].numel(),
						  "spyre c10d backend: all_to_all: output_tensor_list[",
						  me, "] has ", outputs[me].numel(),
						  " elements but input_tensor_list[", me, "] has ",
						  inputs[me].numel(), " (rank ", me, " to itself)");
				TensorList ins;
				for (auto &t : inputs)
					ins.push_back(t.contiguous().view(-1));
				auto outs = flats(outputs);
				return peer_work(pc, c10d::OpType::ALLTOALL, outputs,
						 [outs, ins](PeerComm &c) {
							 c.alltoall(flat_views(*outs), ins);
							 write_back(*outs);
						 });
			}
		}
		count_staged_collective();
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
		if (PeerComm *pc = peer_for_p2p("send", tensors)) {
			auto in = tensors[0].contiguous().view(-1);
			return peer_work(pc, c10d::OpType::SEND, {},
					 [in, dst, tag](PeerComm &c) { c.send(in, dst, tag); });
		}
		count_staged_collective();
		Staging s("send");
		auto in = s.in(tensors, "tensor");
		return s.done(this, c10d::OpType::SEND,
			      [g = gloo_, in, dst, tag]() mutable {
				      return g->send(in, dst, tag);
			      });
	}

	WorkPtr recv(TensorList &tensors, int src, int tag) override
	{
		if (PeerComm *pc = peer_for_p2p("recv", tensors)) {
			auto out = std::make_shared<Flat>(tensors[0], false);
			return peer_work(pc, c10d::OpType::RECV, tensors,
					 [out, src, tag](PeerComm &c) {
						 c.recv(out->flat, src, tag);
						 out->write_back();
					 });
		}
		count_staged_collective();
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
		peer_.reset();
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

	// gather's and scatter's list: on the root world_size parts of @one's
	// dtype and size (else ValueError, naming them), elsewhere none. True
	// when the call has the card-to-card form; a root's malformed list
	// goes to gloo, which raises its own error.
	bool rooted_parts(const char *op, const std::vector<TensorList> &lists,
			  const char *list_arg, const at::Tensor &one, const char *one_arg,
			  int root) const
	{
		if (getRank() != root)
			return lists.empty() || (lists.size() == 1 && lists[0].empty());
		if (lists.size() != 1 || int(lists[0].size()) != getSize() || !one.defined())
			return false;
		for (auto &t : lists[0]) {
			if (!t.defined())
				return false;
			TORCH_CHECK_VALUE(t.scalar_type() == one.scalar_type() &&
						  t.numel() == one.numel(),
					  "spyre c10d backend: ", op, ": ", list_arg, " holds a ",
					  t.scalar_type(), " tensor of ", t.numel(),
					  " elements, but ", one_arg, " is ", one.scalar_type(),
					  " of ", one.numel());
		}
		return true;
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

	// The card-to-card connections when this call can use them, else
	// nullptr (gloo). The group's first collective sets them up (every rank
	// calls it, so all agree); its card is the group's card. The choice
	// depends only on what every rank sees alike (op, dtype, sizes, the
	// group's agreement), so all ranks of a call take the same path.
	PeerComm *peer_for(const char *op, const TensorList &ts, bool reduces,
			   c10d::ReduceOp::RedOpType rop = c10d::ReduceOp::SUM)
	{
		for (auto &t : ts) // the staging path raises the errors, naming the argument
			if (!t.defined() || t.device().type() != c10::DeviceType::PrivateUse1 ||
			    t.is_sparse())
				return nullptr;
		if (!peer_tried_) {
			peer_tried_ = true;
			std::string why;
			peer_ = PeerComm::connect(*store_, getRank(), getSize(), ts[0].device(),
						  timeout_, &why);
		}
		if (!peer_)
			return nullptr;
		for (auto &t : ts) {
			TORCH_CHECK_VALUE(t.device() == peer_->device(), "spyre c10d backend: ", op,
					  ": a tensor on ", t.device(),
					  ", but this process group moves bytes card to card "
					  "from ",
					  peer_->device(),
					  " (the card of its first collective); use one card "
					  "per rank, or SPYRE_C10D_PEER=0 for host staging");
			if (t.scalar_type() != ts[0].scalar_type())
				return nullptr;
		}
		if (reduces && !card_reduces(ts[0].scalar_type(), rop))
			return nullptr;
		return peer_.get();
	}

	// Send/recv: card to card once a collective set the group up, for
	// messages of one slot (both ranks know the size, so both agree).
	PeerComm *peer_for_p2p(const char *op, const TensorList &ts)
	{
		if (!peer_ || ts.size() != 1)
			return nullptr;
		Staging(op).check(ts[0], "tensor");
		size_t bytes = size_t(ts[0].numel()) * ts[0].element_size();
		if (ts[0].device() != peer_->device() || bytes > peer_->slot_bytes())
			return nullptr;
		return peer_.get();
	}

	// Reductions the card does as the CPU (gloo) does: bool's SUM/PRODUCT
	// are gloo's own logic, so bool reduces there.
	static bool card_reduces(at::ScalarType t, c10d::ReduceOp::RedOpType op)
	{
		switch (op) {
		case c10d::ReduceOp::SUM:
		case c10d::ReduceOp::AVG:
		case c10d::ReduceOp::PRODUCT:
		case c10d::ReduceOp::MAX:
		case c10d::ReduceOp::MIN:
			break;
		default:
			return false;
		}
		return t == at::kFloat || t == at::kHalf || t == at::kBFloat16 || t == at::kInt ||
		       t == at::kLong;
	}

	// Parts of one size and dtype (the card-to-card forms need it; other
	// shapes go to gloo, which raises its own error for bad ones).
	bool same_parts(const TensorList &parts, const at::Tensor &one) const
	{
		if (int(parts.size()) != getSize())
			return false;
		for (auto &t : parts)
			if (!t.defined() || !one.defined() || t.numel() != one.numel() ||
			    t.scalar_type() != one.scalar_type())
				return false;
		return true;
	}

	// A card-to-card operation: queued on the launcher once the caller's
	// current stream has run everything before the call (the inputs'
	// producers, the contiguous copies made above); the job runs it on the
	// group's stream and waits for it, so wait() returns with the results
	// on the card.
	WorkPtr peer_work(PeerComm *pc, c10d::OpType type, TensorList outputs,
			  std::function<void(PeerComm &)> body)
	{
		auto work = c10::make_intrusive<SpyreWork>(
			getRank(), type, std::vector<std::pair<at::Tensor, at::Tensor>>{},
			std::move(outputs), nullptr);
		c10::impl::VirtualGuardImpl impl(c10::DeviceType::PrivateUse1);
		auto event = std::make_shared<c10::Event>(c10::DeviceType::PrivateUse1);
		event->record(impl.getStream(pc->device()));
		push([event, pc, body = std::move(body), work] {
			try {
				event->synchronize();
				{
					c10::DeviceGuard dg(pc->device());
					c10::StreamGuard sg(pc->stream());
					body(*pc);
					sync_stream(native_stream(pc->stream()));
				}
				work->launched(c10::make_intrusive<DoneWork>(), nullptr);
			} catch (...) {
				work->launched(nullptr, std::current_exception());
			}
		});
		return work;
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
	c10::intrusive_ptr<c10d::Store> store_;
	std::chrono::milliseconds timeout_;
	bool peer_tried_ = false;	 // (callers' threads; c10d calls in order)
	std::unique_ptr<PeerComm> peer_; // the launcher's jobs use it
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
				 int size, const c10::intrusive_ptr<c10d::Store> &store,
				 int64_t timeout_ms) {
			     TORCH_CHECK_VALUE(gloo, "spyre c10d backend: no gloo backend given");
			     TORCH_CHECK_VALUE(store, "spyre c10d backend: no store given");
			     return c10::make_intrusive<SpyreBackend>(
				     gloo, rank, size, store, std::chrono::milliseconds(timeout_ms));
		     }),
		     py::arg("gloo"), py::arg("rank"), py::arg("size"), py::arg("store"),
		     py::arg("timeout_ms"));
	m.def("_c10d_peer_stats", [] {
		auto s = peer_stats();
		py::dict d;
		d["peer_collectives"] = s.peer_collectives;
		d["peer_bytes"] = s.peer_bytes;
		d["staged_collectives"] = s.staged_collectives;
		d["groups_peer"] = s.groups_peer;
		d["groups_staged"] = s.groups_staged;
		d["last_reason"] = s.last_reason;
		py::dict by_op;
		for (auto &[op, n] : s.by_op)
			by_op[py::str(op)] = n;
		d["by_op"] = by_op;
		return d;
	});
}

} // namespace torch_spyre
