// SPDX-License-Identifier: MIT
// The c10d backend's card-to-card path (distributed_peer.cpp): the ranks
// of one machine exchange their receive buffers' dma-buf fds once per
// process group and move a collective's bytes with peer DMA, the card of
// the writing rank writing into the receive buffer of the reading rank's
// card; reductions run on the reading rank's card.
#pragma once

#include <ATen/ATen.h>
#include <c10/core/Stream.h>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace torch_spyre {

// Process-wide counters (torch_spyre.distributed.peer_stats()): the tests
// check that the peer path really ran, the bench what it moved.
struct PeerStats {
	uint64_t peer_collectives = 0;	// collectives and p2p ops over peer DMA
	uint64_t peer_bytes = 0;	// bytes written card to card
	uint64_t staged_collectives = 0; // collectives through host memory and gloo
	uint64_t groups_peer = 0;	// process groups whose ranks connected card to card
	uint64_t groups_staged = 0;	// process groups that could not (why: last_reason)
	std::string last_reason;	// why the last group that tried stayed on gloo
	std::map<std::string, uint64_t> by_op; // peer_collectives by operation
};
PeerStats peer_stats();
void count_staged_collective();

// One process group's card-to-card connections. Built by connect() (every
// rank calls it at the same collective); used by the backend's launcher
// thread only, one operation at a time.
class PeerComm {
public:
	// nullptr (and the reason in @why) when the group cannot go card to
	// card: ranks on several machines, cards that cannot reach each other,
	// a backend or driver without sharing, SPYRE_C10D_PEER=0. Every rank
	// reaches the same answer (they agree through @store).
	static std::unique_ptr<PeerComm> connect(c10d::Store &store, int rank, int size,
						 c10::Device dev, std::chrono::milliseconds timeout,
						 std::string *why);
	~PeerComm();

	c10::Device device() const
	{
		return dev_;
	}
	// The bytes one rank can hand another before the other reads any
	// (send/recv of more go through gloo: a larger message would need the
	// receiver's attention in the middle of a send).
	size_t slot_bytes() const
	{
		return slot_;
	}
	// The stream the card work of the operations runs on (synchronised
	// before each operation returns).
	c10::Stream stream() const
	{
		return stream_;
	}
	// A failed operation (a peer gone, a timeout, a card error) breaks the
	// group: later operations raise at once.
	bool broken() const
	{
		return broken_;
	}

	// Tensors are flat and contiguous on device(); pieces of one call
	// have one dtype. The sizes of what a rank sends another are the
	// sizes the other expects (else the operation raises, naming both).
	void allreduce(const at::Tensor &x, c10d::ReduceOp::RedOpType op);
	void broadcast(const at::Tensor &x, int root);
	// outs[i] (rank i's part, of the size rank i's @in has) gets rank i's @in.
	void allgather(const std::vector<at::Tensor> &outs, const at::Tensor &in);
	// @out gets the reduction over ranks of their ins[rank].
	void reduce_scatter(const at::Tensor &out, const std::vector<at::Tensor> &ins,
			    c10d::ReduceOp::RedOpType op);
	// outs[i] gets rank i's ins[rank] (sizes may differ between pairs).
	void alltoall(const std::vector<at::Tensor> &outs, const std::vector<at::Tensor> &ins);
	// On @root, outs[i] gets rank i's @in; other ranks pass no outs.
	void gather(const std::vector<at::Tensor> &outs, const at::Tensor &in, int root);
	// @out gets @root's ins[rank]; only @root passes ins.
	void scatter(const at::Tensor &out, const std::vector<at::Tensor> &ins, int root);
	void send(const at::Tensor &x, int dst, int tag);
	void recv(const at::Tensor &x, int src, int tag);

	PeerComm(const PeerComm &) = delete;
	PeerComm &operator=(const PeerComm &) = delete;

private:
	struct Peer;
	// What exchange() hands the caller at each step: the received chunks
	// (got[q]: a view of q's cell, undefined where q sent nothing at this
	// step) and their element offset within q's message.
	using Consume = std::function<void(int64_t off, const std::vector<at::Tensor> &got)>;

	PeerComm(int rank, int size, c10::Device dev, std::chrono::milliseconds timeout);
	template <typename F> void guarded(const char *op, F &&body);
	// One operation as messages between pairs: send[p] (flat, or
	// undefined) goes to rank p, recv[q] elements come from rank q, in
	// cell-sized chunks; @consume queues the card work that reads each
	// step's chunks on stream().
	void exchange(uint32_t op, uint32_t tag, const std::vector<at::Tensor> &send,
		      const std::vector<int64_t> &recv, at::ScalarType dtype,
		      const Consume &consume);
	void put(int p, const at::Tensor &piece);
	void wait_full(int p, uint32_t op, uint32_t tag, uint64_t bytes);
	at::Tensor take_cell(int from, at::ScalarType dtype, int64_t numel);
	void release(const std::vector<int> &peers);
	void fold(const at::Tensor &out, const std::vector<at::Tensor> &operands,
		  c10d::ReduceOp::RedOpType op) const;
	// Every other rank, its message @in (a step-wise copy for the ops
	// that only move bytes).
	std::vector<at::Tensor> to_all(const at::Tensor &in) const;

	int rank_, size_;
	c10::Device dev_;
	std::chrono::milliseconds timeout_;
	size_t slot_ = 0;  // a pair's region of a receive buffer
	size_t depth_ = 0; // cells per region: chunks in flight per pair
	size_t cell_ = 0;  // slot_ / depth_
	c10::Stream stream_; // the reads of the cells (copies, reductions)
	c10::Stream xfer_;   // the writes into the peers' cells (DMA engine)
	at::Tensor rbuf_;    // size_ regions: region i receives rank i's bytes
	std::vector<std::unique_ptr<Peer>> peers_;
	bool broken_ = false;
	int nesting_ = 0; // guarded() calls under way
};

} // namespace torch_spyre
