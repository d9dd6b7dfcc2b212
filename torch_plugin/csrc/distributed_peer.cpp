// SPDX-License-Identifier: MIT
// Card to card between the ranks of one machine (distributed_peer.h).
//
// Setup, once per process group, at its first collective (every rank is
// there): each rank allocates a receive buffer on its card, size slots of
// slot bytes (slot i receives rank i's bytes), exports it (libspyre's
// spyre_bo_export: the BO's dma-buf on drm, the sim card's memfd), and
// listens on an abstract Unix socket whose name it publishes in the c10d
// store with its machine's boot id. When all ranks are on one machine,
// each connects to the lower ranks' sockets, and the two ranks of each pair
// pass their buffers' fds (SCM_RIGHTS) and import them as peer BOs of their
// own card. The ranks then agree through the store: all imports worked, or
// everybody stays on gloo.
//
// A pair's region of a receive buffer is split into cells (depth of them,
// SPYRE_C10D_PEER_DEPTH, default 4), and an operation's bytes go in
// cell-sized chunks, several in flight per pair: the writer's card writes
// a chunk into the reader's next cell (peer DMA, a COPY whose destination
// is the peer BO, on a DMA-engine stream), waits for the copy and sends
// FULL over the socket; the reader waits for FULL and consumes the cell
// with card work on its compute stream (a copy out, or a reduction with
// its own data, in rank order so every rank computes the same result);
// once that work ran it sends FREE, which gives the writer the cell back.
// A rank issues the writes of chunk k before it waits for the reads of
// chunk k-1, so the peer DMA of one chunk overlaps the reduction of the
// previous one, on both cards. The sockets also carry a failure: a rank
// that dies closes them, and the others' next wait raises instead of
// hanging (or the group's timeout).
#include "distributed_peer.h"
#include "allocator.h"
#include "device.h"
#include "stream.h"

#include <c10/core/DeviceGuard.h>
#include <c10/core/StreamGuard.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <algorithm>
#include <deque>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace torch_spyre {
namespace {

std::atomic<uint64_t> g_peer_ops{0}, g_peer_bytes{0}, g_staged{0}, g_groups_peer{0},
	g_groups_staged{0};
std::mutex g_reason_mu; // and g_by_op
std::string g_reason;
std::map<std::string, uint64_t> g_by_op;

using Clock = std::chrono::steady_clock;

constexpr uint32_t kHelloMagic = 0x53504331; // "SPC1"
enum : uint32_t { kFull = 1, kFree = 2 };

// What the two ranks of a pair tell each other once, with the fd.
struct Hello {
	uint32_t magic;
	uint32_t rank;
	uint64_t export_offset, export_size; // spyre_bo_export's range
	uint64_t buf_offset;		     // the receive buffer within it
	uint64_t slot, depth;
};

struct Msg {
	uint32_t kind, op, tag, pad;
	uint64_t bytes;
};

const char *op_name(uint32_t op)
{
	static const char *names[] = { "?",	      "allreduce", "broadcast", "allgather",
				       "reduce_scatter", "send/recv", "alltoall",  "gather",
				       "scatter" };
	return op < sizeof(names) / sizeof(names[0]) ? names[op] : "?";
}
enum : uint32_t {
	kAllreduce = 1,
	kBroadcast,
	kAllgather,
	kReduceScatter,
	kP2P,
	kAlltoall,
	kGather,
	kScatter
};

std::string machine_id()
{
	std::string boot;
	std::ifstream f("/proc/sys/kernel/random/boot_id");
	std::getline(f, boot);
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	return boot + "@" + host;
}

// Waits until @fd is readable (or @deadline): false on timeout.
bool wait_readable(int fd, Clock::time_point deadline)
{
	for (;;) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
										   Clock::now());
		if (left.count() < 0)
			return false;
		struct pollfd p = { fd, POLLIN, 0 };
		int n = poll(&p, 1, int(std::min<int64_t>(left.count(), 1000)));
		if (n > 0)
			return true;
		if (n < 0 && errno != EINTR)
			TORCH_CHECK(false, "spyre c10d backend: poll: ", strerror(errno));
	}
}

// Reads exactly @len bytes (and an fd with the first ones, if @fd_out).
void read_exact(int fd, void *buf, size_t len, Clock::time_point deadline, const char *what,
		int peer, int *fd_out = nullptr)
{
	auto *p = static_cast<char *>(buf);
	size_t got = 0;
	while (got < len) {
		TORCH_CHECK(wait_readable(fd, deadline), "spyre c10d backend: timed out waiting for ",
			    what, " from rank ", peer, " (the group's timeout)");
		ssize_t n;
		if (fd_out && got == 0) {
			char ctl[CMSG_SPACE(sizeof(int))] = {};
			struct iovec iov = { p, len };
			struct msghdr mh = {};
			mh.msg_iov = &iov;
			mh.msg_iovlen = 1;
			mh.msg_control = ctl;
			mh.msg_controllen = sizeof(ctl);
			n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
			struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : nullptr;
			if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
				memcpy(fd_out, CMSG_DATA(c), sizeof(int));
		} else {
			n = read(fd, p + got, len - got);
		}
		if (n < 0 && errno == EINTR)
			continue;
		TORCH_CHECK(n != 0, "spyre c10d backend: rank ", peer,
			    " closed its connection (did it exit or fail?) while this rank waited "
			    "for ",
			    what);
		TORCH_CHECK(n > 0, "spyre c10d backend: reading ", what, " from rank ", peer, ": ",
			    strerror(errno));
		got += size_t(n);
	}
}

void write_all(int fd, const void *buf, size_t len, int peer, int pass_fd = -1)
{
	auto *p = static_cast<const char *>(buf);
	size_t done = 0;
	while (done < len) {
		ssize_t n;
		if (pass_fd >= 0 && done == 0) {
			char ctl[CMSG_SPACE(sizeof(int))] = {};
			struct iovec iov = { const_cast<char *>(p), len };
			struct msghdr mh = {};
			mh.msg_iov = &iov;
			mh.msg_iovlen = 1;
			mh.msg_control = ctl;
			mh.msg_controllen = sizeof(ctl);
			struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
			n = sendmsg(fd, &mh, MSG_NOSIGNAL);
		} else {
			n = send(fd, p + done, len - done, MSG_NOSIGNAL);
		}
		if (n < 0 && errno == EINTR)
			continue;
		TORCH_CHECK(n > 0, "spyre c10d backend: writing to rank ", peer, ": ",
			    strerror(errno), errno == EPIPE ? " (it closed its connection)" : "");
		done += size_t(n);
	}
}

// An abstract-namespace Unix socket address (no file to clean up; one
// network namespace, which is what "one machine" means here).
socklen_t unix_addr(const std::string &name, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	size_t n = std::min(name.size(), sizeof(a->sun_path) - 2);
	memcpy(a->sun_path + 1, name.data(), n); // sun_path[0] = 0: abstract
	return socklen_t(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

std::vector<std::string> split(const std::string &s, char sep)
{
	std::vector<std::string> r;
	std::stringstream ss(s);
	std::string item;
	while (std::getline(ss, item, sep))
		r.push_back(item);
	return r;
}

void set_reason(const std::string &why)
{
	std::lock_guard<std::mutex> lock(g_reason_mu);
	g_reason = why;
}

} // namespace

PeerStats peer_stats()
{
	PeerStats s;
	s.peer_collectives = g_peer_ops.load();
	s.peer_bytes = g_peer_bytes.load();
	s.staged_collectives = g_staged.load();
	s.groups_peer = g_groups_peer.load();
	s.groups_staged = g_groups_staged.load();
	std::lock_guard<std::mutex> lock(g_reason_mu);
	s.last_reason = g_reason;
	s.by_op = g_by_op;
	return s;
}

void count_staged_collective()
{
	g_staged++;
}

struct PeerComm::Peer {
	int fd = -1;
	spyre_bo *bo = nullptr; // the peer's receive buffer, imported
	uint64_t base = 0;	// its first byte within bo
	size_t credits = 0;	// cells of our region of its buffer we may write
	uint64_t puts = 0;	// chunks written to it (the next goes to cell puts % depth)
	uint64_t takes = 0;	// chunks read from it (likewise, in our buffer)
	std::deque<Msg> fulls;	// FULLs received, not consumed yet

	~Peer()
	{
		if (fd >= 0)
			close(fd);
		if (bo)
			spyre_bo_destroy(bo);
	}
};

PeerComm::PeerComm(int rank, int size, c10::Device dev, std::chrono::milliseconds timeout)
	: rank_(rank), size_(size), dev_(dev), timeout_(timeout), stream_(new_stream(dev.index())),
	  xfer_(new_transfer_stream(dev.index()))
{
}

PeerComm::~PeerComm() = default;

std::unique_ptr<PeerComm> PeerComm::connect(c10d::Store &store, int rank, int size,
					    c10::Device dev, std::chrono::milliseconds timeout,
					    std::string *why)
{
	auto fail = [&](const std::string &r) -> std::unique_ptr<PeerComm> {
		*why = r;
		set_reason(r);
		g_groups_staged++;
		return nullptr;
	};
	if (size < 2)
		return fail("one rank");
	std::unique_ptr<PeerComm> c(new PeerComm(rank, size, dev, timeout));
	const char *env = getenv("SPYRE_C10D_PEER");
	const char *slot_env = getenv("SPYRE_C10D_PEER_SLOT");
	const char *depth_env = getenv("SPYRE_C10D_PEER_DEPTH");
	// Two cells at least: a rank writes chunk k before it frees the cell
	// of chunk k-1 (exchange()), so with one cell both ranks of a pair
	// would wait for the other's FREE.
	c->depth_ = std::clamp<size_t>(depth_env ? std::strtoull(depth_env, nullptr, 0) : 4, 2, 64);
	c->slot_ = slot_env ? std::strtoull(slot_env, nullptr, 0) : size_t(4) << 20;
	c->cell_ = std::max<size_t>(4096, c->slot_ / c->depth_ / 4096 * 4096);
	c->slot_ = c->cell_ * c->depth_;

	// Phase 1: the buffer, its export and our socket; publish.
	std::string local_why;
	struct spyre_bo_export ex = { -1, 0, 0 };
	spyre_buf rb{};
	int lfd = -1;
	std::string sock;
	if (env && !strcmp(env, "0")) {
		local_why = "SPYRE_C10D_PEER=0";
	} else {
		try {
			c10::DeviceGuard g(dev);
			c->rbuf_ = at::empty({int64_t(c->slot_ * size)},
					     at::TensorOptions().dtype(at::kByte).device(dev));
			rb = resolve_device_ptr(c->rbuf_.data_ptr(), c->slot_ * size);
			int rc = spyre_bo_export(rb.bo, &ex);
			if (rc < 0)
				local_why = std::string("cannot export the receive buffer: ") +
					    spyre_last_error();
		} catch (const std::exception &e) {
			local_why = std::string("receive buffer: ") + e.what();
		}
	}
	if (local_why.empty()) {
		std::random_device rd;
		sock = "spyre-c10d-" + std::to_string(getpid()) + "-" + std::to_string(rd()) +
		       std::to_string(rd());
		struct sockaddr_un a;
		socklen_t len = unix_addr(sock, &a);
		lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (lfd < 0 || bind(lfd, reinterpret_cast<sockaddr *>(&a), len) ||
		    listen(lfd, size))
			local_why = std::string("unix socket: ") + strerror(errno);
	}
	std::string mine = machine_id() + "|" + (local_why.empty() ? "1" : "0") + "|" + sock +
			   "|" + local_why;
	store.set("p1/" + std::to_string(rank), std::vector<uint8_t>(mine.begin(), mine.end()));
	std::vector<std::string> socks(size);
	std::string agreed;
	std::string my_machine = machine_id();
	for (int i = 0; i < size; i++) {
		auto v = store.get("p1/" + std::to_string(i));
		auto f = split(std::string(v.begin(), v.end()), '|');
		if (f.size() < 3)
			f.resize(4);
		if (f[0] != my_machine && agreed.empty())
			agreed = "rank " + std::to_string(i) + " is on another machine";
		else if (f[1] != "1" && agreed.empty())
			agreed = "rank " + std::to_string(i) + ": " + (f.size() > 3 ? f[3] : "");
		socks[i] = f[2];
	}
	auto cleanup = [&] {
		if (lfd >= 0)
			close(lfd);
		if (ex.fd >= 0)
			close(ex.fd);
	};
	if (!agreed.empty()) {
		cleanup();
		return fail(agreed);
	}

	// Phase 2: connect the pairs, pass the fds, import.
	c->peers_.resize(size);
	Hello me{ kHelloMagic, uint32_t(rank), ex.offset, ex.size, rb.offset, c->slot_, c->depth_ };
	auto deadline = Clock::now() + timeout;
	try {
		auto import = [&](const Hello &h, int fd, int from) {
			TORCH_CHECK(h.magic == kHelloMagic && int(h.rank) == from,
				    "bad hello from rank ", from);
			TORCH_CHECK(h.slot == c->slot_ && h.depth == c->depth_, "rank ", from,
				    " uses ", h.depth, " cells in ", h.slot, " bytes per rank, this rank ",
				    c->depth_, " in ", c->slot_,
				    " (SPYRE_C10D_PEER_SLOT or SPYRE_C10D_PEER_DEPTH differ)");
			TORCH_CHECK(fd >= 0, "rank ", from, " sent no fd");
			struct spyre_bo_export pe = { fd, h.export_offset, h.export_size };
			spyre_bo *bo = nullptr;
			int rc = spyre_bo_import_peer(device_handle(dev.index()), &pe, &bo);
			close(fd);
			TORCH_CHECK(rc == 0, "importing rank ", from,
				    "'s buffer: ", spyre_last_error());
			c->peers_[from]->bo = bo;
			c->peers_[from]->base = h.buf_offset;
			c->peers_[from]->credits = c->depth_;
		};
		for (int j = 0; j < rank; j++) { // we connect to the lower ranks
			auto p = std::make_unique<Peer>();
			p->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			struct sockaddr_un a;
			socklen_t len = unix_addr(socks[j], &a);
			TORCH_CHECK(p->fd >= 0 &&
					    ::connect(p->fd, reinterpret_cast<sockaddr *>(&a), len) == 0,
				    "connecting to rank ", j, ": ", strerror(errno));
			c->peers_[j] = std::move(p);
			write_all(c->peers_[j]->fd, &me, sizeof(me), j, ex.fd);
			Hello h{};
			int fd = -1;
			read_exact(c->peers_[j]->fd, &h, sizeof(h), deadline, "its buffer", j, &fd);
			import(h, fd, j);
		}
		for (int k = rank + 1; k < size; k++) { // the higher ranks connect to us
			TORCH_CHECK(wait_readable(lfd, deadline), "timed out waiting for rank ", k,
				    " to connect");
			auto p = std::make_unique<Peer>();
			p->fd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
			TORCH_CHECK(p->fd >= 0, "accept: ", strerror(errno));
			Hello h{};
			int fd = -1;
			read_exact(p->fd, &h, sizeof(h), deadline, "its buffer", -1, &fd);
			int from = int(h.rank);
			if (from <= rank || from >= size || c->peers_[from]) {
				if (fd >= 0)
					close(fd);
				TORCH_CHECK(false, "a connection claiming rank ", from);
			}
			c->peers_[from] = std::move(p);
			write_all(c->peers_[from]->fd, &me, sizeof(me), from, ex.fd);
			import(h, fd, from);
		}
	} catch (const std::exception &e) {
		local_why = e.what();
		auto nl = local_why.find('\n'); // c10::Error appends a backtrace
		if (nl != std::string::npos)
			local_why.resize(nl);
	}
	cleanup();
	std::string ok = local_why.empty() ? "1" : "0|" + local_why;
	store.set("p2/" + std::to_string(rank), std::vector<uint8_t>(ok.begin(), ok.end()));
	for (int i = 0; i < size; i++) {
		auto v = store.get("p2/" + std::to_string(i));
		std::string s(v.begin(), v.end());
		if (s != "1" && agreed.empty())
			agreed = "rank " + std::to_string(i) + ": " +
				 (s.size() > 2 ? s.substr(2) : std::string("failed"));
	}
	if (!agreed.empty())
		return fail(agreed);
	g_groups_peer++;
	return c;
}

template <typename F> void PeerComm::guarded(const char *op, F &&body)
{
	TORCH_CHECK(!broken_, "spyre c10d backend: ", op,
		    ": an earlier operation of this process group failed card to card (a rank "
		    "exited, timed out or its card failed); the group cannot be used any more");
	c10::DeviceGuard dg(dev_);
	c10::StreamGuard sg(stream_);
	nesting_++; // (an operation made of others counts once, as itself)
	try {
		body();
	} catch (...) {
		nesting_--;
		broken_ = true;
		for (auto &p : peers_) // the others' waits end now, not at their timeout
			if (p && p->fd >= 0)
				shutdown(p->fd, SHUT_RDWR);
		throw;
	}
	if (--nesting_)
		return;
	g_peer_ops++;
	std::lock_guard<std::mutex> lock(g_reason_mu);
	g_by_op[op]++;
}

// Writes @piece into rank @p's next cell for us, once p freed it.
void PeerComm::put(int p, const at::Tensor &piece)
{
	auto &pe = *peers_[p];
	auto deadline = Clock::now() + timeout_;
	while (pe.credits == 0) {
		Msg m{};
		read_exact(pe.fd, &m, sizeof(m), deadline, "its receive buffer to be free", p);
		if (m.kind == kFree)
			pe.credits++;
		else
			pe.fulls.push_back(m);
	}
	pe.credits--;
	uint64_t n = uint64_t(piece.numel()) * piece.element_size();
	uint64_t cell = pe.puts++ % depth_;
	spyre_buf src = resolve_device_ptr(piece.data_ptr(), n);
	spyre_buf dst = { pe.bo, pe.base + uint64_t(rank_) * slot_ + cell * cell_, n };
	SPYRE_CHECK(spyre_memcpy_async(native_stream(xfer_), &dst, &src, n));
	g_peer_bytes += n;
}

void PeerComm::wait_full(int p, uint32_t op, uint32_t tag, uint64_t bytes)
{
	auto &pe = *peers_[p];
	auto deadline = Clock::now() + timeout_;
	while (pe.fulls.empty()) {
		Msg m{};
		read_exact(pe.fd, &m, sizeof(m), deadline, op_name(op), p);
		if (m.kind == kFree)
			pe.credits++;
		else
			pe.fulls.push_back(m);
	}
	Msg m = pe.fulls.front();
	pe.fulls.pop_front();
	TORCH_CHECK(m.kind == kFull && m.op == op && m.tag == tag && m.bytes == bytes,
		    "spyre c10d backend: rank ", p, " sent ", op_name(m.op), " (tag ", m.tag, ", ",
		    m.bytes, " bytes) where this rank runs ", op_name(op), " (tag ", tag, ", ",
		    bytes, " bytes): the ranks called different collectives or sizes");
}

// The cell rank @from filled next (after wait_full), as @numel elements.
at::Tensor PeerComm::take_cell(int from, at::ScalarType dtype, int64_t numel)
{
	uint64_t cell = peers_[from]->takes++ % depth_;
	int64_t es = int64_t(c10::elementSize(dtype));
	return rbuf_.narrow(0, int64_t(from * slot_ + cell * cell_), numel * es).view(dtype);
}

void PeerComm::release(const std::vector<int> &peers)
{
	sync_stream(native_stream(stream_)); // done reading the cells
	Msg m{ kFree, 0, 0, 0, 0 };
	// A peer that finished this step may have left the group already (its
	// last step needs no FREE from us): a closed socket is no error here;
	// if the peer is gone for good, the next step that waits for it says so.
	for (int p : peers) {
		ssize_t n;
		do
			n = ::send(peers_[p]->fd, &m, sizeof(m), MSG_NOSIGNAL);
		while (n < 0 && errno == EINTR);
		TORCH_CHECK(n == sizeof(m) || (n < 0 && (errno == EPIPE || errno == ECONNRESET)),
			    "spyre c10d backend: writing to rank ", p, ": ",
			    n < 0 ? strerror(errno) : "short write");
	}
}

// Step k (every rank's k-th chunk of each message, elements k * ce on):
// write the chunks of step k, then wait for the reads of step k-1 and free
// their cells, then wait for step k's chunks and queue their reads. The
// writes of step k run on the card while the reads of step k-1 do; a
// rank never waits for a FULL before it freed what it read earlier, so
// with two cells or more no pair waits on itself.
void PeerComm::exchange(uint32_t op, uint32_t tag, const std::vector<at::Tensor> &send,
			const std::vector<int64_t> &recv, at::ScalarType dtype,
			const Consume &consume)
{
	int64_t es = int64_t(c10::elementSize(dtype));
	int64_t ce = int64_t(cell_) / es;
	auto sends = [&](int p) { return send[p].defined() ? send[p].numel() : int64_t(0); };
	int64_t steps = 0;
	for (int p = 0; p < size_; p++)
		if (p != rank_)
			steps = std::max({ steps, (sends(p) + ce - 1) / ce, (recv[p] + ce - 1) / ce });
	std::vector<int> reading; // the ranks whose cells the queued reads use
	for (int64_t k = 0; k < steps; k++) {
		int64_t off = k * ce;
		std::vector<std::pair<int, uint64_t>> wrote;
		for (int p = 0; p < size_; p++) {
			if (p == rank_ || sends(p) <= off)
				continue;
			int64_t m = std::min(ce, sends(p) - off);
			put(p, send[p].narrow(0, off, m));
			wrote.emplace_back(p, uint64_t(m * es));
		}
		if (!wrote.empty()) {
			sync_stream(native_stream(xfer_)); // the bytes are in the peers' memory
			for (auto &[p, bytes] : wrote) {
				Msg m{ kFull, op, tag, 0, bytes };
				write_all(peers_[p]->fd, &m, sizeof(m), p);
			}
		}
		if (!reading.empty())
			release(reading);
		reading.clear();
		std::vector<at::Tensor> got(size_);
		for (int q = 0; q < size_; q++) {
			if (q == rank_ || recv[q] <= off)
				continue;
			int64_t m = std::min(ce, recv[q] - off);
			wait_full(q, op, tag, uint64_t(m * es));
			got[q] = take_cell(q, dtype, m);
			reading.push_back(q);
		}
		if (!reading.empty())
			consume(off, got);
	}
	if (!reading.empty())
		release(reading);
}

void PeerComm::fold(const at::Tensor &out, const std::vector<at::Tensor> &operands,
		    c10d::ReduceOp::RedOpType op) const
{
	at::Tensor acc = operands[0];
	for (size_t i = 1; i < operands.size(); i++) {
		at::Tensor dst = i + 1 == operands.size() ? out : at::empty_like(acc);
		const at::Tensor &v = operands[i];
		switch (op) {
		case c10d::ReduceOp::SUM:
		case c10d::ReduceOp::AVG:
			at::add_out(dst, acc, v);
			break;
		case c10d::ReduceOp::PRODUCT:
			at::mul_out(dst, acc, v);
			break;
		case c10d::ReduceOp::MAX:
			at::maximum_out(dst, acc, v);
			break;
		case c10d::ReduceOp::MIN:
			at::minimum_out(dst, acc, v);
			break;
		default:
			TORCH_CHECK(false, "spyre c10d backend: reduce op ", int(op),
				    " has no card-to-card form");
		}
		acc = dst;
	}
	if (operands.size() == 1 && !out.is_same(acc))
		out.copy_(acc);
	if (op == c10d::ReduceOp::AVG)
		out.div_(size_);
}

namespace {
// The reads of the ops that only move bytes: outs[q] gets what rank q
// sent, chunk by chunk.
std::function<void(int64_t, const std::vector<at::Tensor> &)>
copy_into(const std::vector<at::Tensor> &outs)
{
	return [&outs](int64_t off, const std::vector<at::Tensor> &got) {
		for (size_t q = 0; q < got.size(); q++)
			if (got[q].defined())
				outs[q].narrow(0, off, got[q].numel()).copy_(got[q]);
	};
}

// @x where rank @from's bytes go, in a list indexed by rank.
std::vector<at::Tensor> only(int size, int from, const at::Tensor &x)
{
	std::vector<at::Tensor> v(size);
	v[from] = x;
	return v;
}
} // namespace

std::vector<at::Tensor> PeerComm::to_all(const at::Tensor &in) const
{
	std::vector<at::Tensor> send(size_);
	for (int p = 0; p < size_; p++)
		if (p != rank_)
			send[p] = in;
	return send;
}

// Below this size every rank reduces the whole message (one round of
// messages); from it on, each rank reduces its 1/size part of it (a
// reduce-scatter) and hands the result to the others (an all-gather),
// as NCCL's ring does: the cards' reduction work is then split instead of
// repeated, at the cost of a second round of messages.
constexpr int64_t kSplitReduceBytes = 256 << 10;

void PeerComm::allreduce(const at::Tensor &x, c10d::ReduceOp::RedOpType op)
{
	int64_t n = x.numel();
	if (n * x.element_size() >= kSplitReduceBytes) {
		int64_t part = (n + size_ - 1) / size_;
		std::vector<at::Tensor> parts;
		for (int i = 0; i < size_; i++) {
			int64_t off = std::min(n, i * part);
			parts.push_back(x.narrow(0, off, std::min(part, n - off)));
		}
		guarded("allreduce", [&] {
			reduce_scatter(parts[rank_], parts, op);
			allgather(parts, parts[rank_]);
		});
		return;
	}
	guarded("allreduce", [&] {
		std::vector<int64_t> recv(size_, n);
		exchange(kAllreduce, 0, to_all(x), recv, x.scalar_type(),
			 [&](int64_t off, const std::vector<at::Tensor> &got) {
				 auto mine = x.narrow(0, off, got[rank_ ? 0 : 1].numel());
				 std::vector<at::Tensor> operands = got;
				 operands[rank_] = mine;
				 fold(mine, operands, op);
			 });
	});
}

void PeerComm::broadcast(const at::Tensor &x, int root)
{
	guarded("broadcast", [&] {
		std::vector<at::Tensor> send(size_);
		std::vector<int64_t> recv(size_, 0);
		if (rank_ == root)
			send = to_all(x);
		else
			recv[root] = x.numel();
		auto outs = only(size_, root, x);
		exchange(kBroadcast, uint32_t(root), send, recv, x.scalar_type(), copy_into(outs));
	});
}

void PeerComm::allgather(const std::vector<at::Tensor> &outs, const at::Tensor &in)
{
	guarded("allgather", [&] {
		if (!outs[rank_].is_same(in))
			outs[rank_].copy_(in);
		std::vector<int64_t> recv(size_);
		for (int q = 0; q < size_; q++)
			recv[q] = q == rank_ ? 0 : outs[q].numel();
		exchange(kAllgather, 0, to_all(in), recv, in.scalar_type(), copy_into(outs));
	});
}

void PeerComm::reduce_scatter(const at::Tensor &out, const std::vector<at::Tensor> &ins,
			      c10d::ReduceOp::RedOpType op)
{
	guarded("reduce_scatter", [&] {
		std::vector<at::Tensor> send = ins;
		send[rank_] = at::Tensor();
		std::vector<int64_t> recv(size_, out.numel());
		exchange(kReduceScatter, 0, send, recv, out.scalar_type(),
			 [&](int64_t off, const std::vector<at::Tensor> &got) {
				 int64_t m = got[rank_ ? 0 : 1].numel();
				 std::vector<at::Tensor> operands = got;
				 operands[rank_] = ins[rank_].narrow(0, off, m);
				 fold(out.narrow(0, off, m), operands, op);
			 });
	});
}

void PeerComm::alltoall(const std::vector<at::Tensor> &outs, const std::vector<at::Tensor> &ins)
{
	guarded("alltoall", [&] {
		if (!outs[rank_].is_same(ins[rank_]))
			outs[rank_].copy_(ins[rank_]);
		std::vector<at::Tensor> send = ins;
		send[rank_] = at::Tensor();
		std::vector<int64_t> recv(size_);
		for (int q = 0; q < size_; q++)
			recv[q] = q == rank_ ? 0 : outs[q].numel();
		exchange(kAlltoall, 0, send, recv, ins[rank_].scalar_type(), copy_into(outs));
	});
}

void PeerComm::gather(const std::vector<at::Tensor> &outs, const at::Tensor &in, int root)
{
	guarded("gather", [&] {
		std::vector<at::Tensor> send(size_);
		std::vector<int64_t> recv(size_, 0);
		if (rank_ == root) {
			if (!outs[rank_].is_same(in))
				outs[rank_].copy_(in);
			for (int q = 0; q < size_; q++)
				recv[q] = q == rank_ ? 0 : in.numel();
		} else {
			send[root] = in;
		}
		exchange(kGather, uint32_t(root), send, recv, in.scalar_type(), copy_into(outs));
	});
}

void PeerComm::scatter(const at::Tensor &out, const std::vector<at::Tensor> &ins, int root)
{
	guarded("scatter", [&] {
		std::vector<at::Tensor> send(size_);
		std::vector<int64_t> recv(size_, 0);
		if (rank_ == root) {
			if (!out.is_same(ins[rank_]))
				out.copy_(ins[rank_]);
			send = ins;
			send[rank_] = at::Tensor();
		} else {
			recv[root] = out.numel();
		}
		auto outs = only(size_, root, out);
		exchange(kScatter, uint32_t(root), send, recv, out.scalar_type(), copy_into(outs));
	});
}

void PeerComm::send(const at::Tensor &x, int dst, int tag)
{
	guarded("send", [&] {
		uint64_t bytes = uint64_t(x.numel()) * x.element_size();
		TORCH_CHECK(bytes <= slot_, "spyre c10d backend: send of ", bytes,
			    " bytes over peer DMA (at most ", slot_, ")");
		exchange(kP2P, uint32_t(tag), only(size_, dst, x), std::vector<int64_t>(size_, 0),
			 x.scalar_type(), nullptr);
	});
}

void PeerComm::recv(const at::Tensor &x, int src, int tag)
{
	guarded("recv", [&] {
		std::vector<int64_t> recv(size_, 0);
		recv[src] = x.numel();
		auto outs = only(size_, src, x);
		exchange(kP2P, uint32_t(tag), std::vector<at::Tensor>(size_), recv, x.scalar_type(),
			 copy_into(outs));
	});
}

} // namespace torch_spyre
