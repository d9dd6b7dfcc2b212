// SPDX-License-Identifier: MIT
//
// Caching device allocator (the design of PyTorch's CUDA caching allocator,
// reduced to what the Spyre runtime needs):
//
// - Requests are rounded up to 512 bytes (4 sticks). Requests up to 1 MiB
//   come from the small pool, carved out of 2 MiB segments; larger ones from
//   the large pool, whose segments are the request rounded up to 2 MiB.
// - A free block is found best-fit among the blocks of the requesting
//   stream; a bigger block is split, and a freed block merges with free
//   neighbours of its segment.
// - A block freed by one stream is reused by the same stream at once (stream
//   order makes that safe). Another stream takes it only once the owner
//   stream has no pending work. record_stream() adds a stream that uses the
//   block: its free then waits for an event recorded on each such stream.
// - When libspyre cannot create a segment, every cached segment that holds
//   no live block is released and the creation retried; if it still fails,
//   torch.OutOfMemoryError says what was requested, allocated and reserved.
#include "allocator.h"

#include "device.h"
#include "stream.h"

#include <c10/util/Exception.h>

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_map>
#include <vector>

namespace torch_spyre {
namespace {

using c10::CachingDeviceAllocator::DeviceStats;
using c10::CachingAllocator::StatType;

constexpr size_t kRound = 512;
constexpr size_t kSmallSize = 1 << 20;
constexpr size_t kSmallSegment = 2 << 20;
constexpr size_t kLargeRound = 2 << 20;
// Address space reserved per device for data pointers (never touched).
constexpr size_t kAddressSpace = size_t(1) << 40;

struct Segment;

struct Block {
	Segment *seg;
	uintptr_t addr;
	size_t size;
	size_t requested = 0;
	c10::StreamId stream; // the stream that allocated it
	bool allocated = false;
	int pending_events = 0;
	std::vector<spyre_event *> events; // record_stream frees in flight
	std::set<c10::StreamId> stream_uses;
	Block *prev = nullptr, *next = nullptr;
};

struct Segment {
	spyre_bo *bo;
	uintptr_t addr;
	size_t size;
	bool small;
};

struct BlockOrder {
	bool operator()(const Block *a, const Block *b) const
	{
		if (a->stream != b->stream)
			return a->stream < b->stream;
		if (a->size != b->size)
			return a->size < b->size;
		return a->addr < b->addr;
	}
};
using Pool = std::set<Block *, BlockOrder>;

struct DeviceState {
	c10::DeviceIndex index;
	std::mutex mutex;
	uintptr_t va_base = 0;
	uintptr_t va_next = 0;
	std::map<uintptr_t, size_t> va_free; // released address ranges
	std::map<uintptr_t, Segment *> segments;
	std::unordered_map<uintptr_t, Block *> live; // allocated blocks by address
	std::vector<Block *> deferred;		    // freed, waiting for events
	Pool small, large;
	DeviceStats stats;
	AllocatorCounters counters;
};

void stat_add(c10::CachingAllocator::StatArray &a, bool small, int64_t n)
{
	auto &pool = a[static_cast<size_t>(small ? StatType::SMALL_POOL : StatType::LARGE_POOL)];
	auto &all = a[static_cast<size_t>(StatType::AGGREGATE)];
	if (n >= 0) {
		pool.increase(n);
		all.increase(n);
	} else {
		pool.decrease(-n);
		all.decrease(-n);
	}
}

// Applies @fn to every Stat of the per-pool arrays of @stats.
template <typename Fn> void for_each_stat_array(DeviceStats &stats, Fn fn)
{
	for (auto *a : {&stats.allocation, &stats.segment, &stats.active, &stats.inactive_split,
			&stats.allocated_bytes, &stats.reserved_bytes, &stats.active_bytes,
			&stats.inactive_split_bytes, &stats.requested_bytes})
		for (auto &s : *a)
			fn(s);
}

size_t round_size(size_t n)
{
	return n < kRound ? kRound : (n + kRound - 1) / kRound * kRound;
}

class SpyreAllocator final : public c10::DeviceAllocator {
public:
	c10::DataPtr allocate(size_t nbytes) override
	{
		auto index = current_device();
		c10::Device device(c10::DeviceType::PrivateUse1, index);
		if (nbytes == 0)
			return c10::DataPtr(nullptr, nullptr, &delete_ptr, device);
		check_device_index(index);
		auto &st = state(index);
		c10::Stream stream = current_stream(index);
		void *p = malloc_block(st, nbytes, stream.id());
		return c10::DataPtr(p, p, &delete_ptr, device);
	}

	c10::DeleterFnPtr raw_deleter() const override
	{
		return &delete_ptr;
	}

	void copy_data(void *dest, const void *src, std::size_t count) const override
	{
		if (count == 0)
			return;
		auto index = device_of_ptr(dest);
		spyre_buf d = resolve_device_ptr(dest, count);
		spyre_buf s = resolve_device_ptr(src, count);
		spyre_stream *stream = native_stream(current_stream(index));
		SPYRE_CHECK(spyre_memcpy_async(stream, &d, &s, count));
		sync_stream(stream);
	}

	bool initialized() override
	{
		return device_count() > 0;
	}

	void emptyCache(c10::MempoolId_t) override
	{
		for (c10::DeviceIndex i = 0; i < device_count(); i++) {
			if (!has_state(i))
				continue;
			auto &st = state(i);
			// After a device-wide synchronize no stream has pending work,
			// so free neighbours of different streams can merge.
			synchronize_device(i);
			std::lock_guard<std::mutex> lock(st.mutex);
			process_deferred(st);
			coalesce_idle(st);
			release_cached(st);
		}
	}

	void recordStream(const c10::DataPtr &ptr, c10::Stream stream) override
	{
		if (!ptr.get())
			return;
		auto &st = state(stream.device_index());
		std::lock_guard<std::mutex> lock(st.mutex);
		auto it = st.live.find(reinterpret_cast<uintptr_t>(ptr.get()));
		TORCH_CHECK(it != st.live.end(), "spyre: record_stream on a pointer this allocator "
						 "did not allocate on spyre:",
			    int(stream.device_index()));
		if (stream.id() != it->second->stream)
			it->second->stream_uses.insert(stream.id());
	}

	DeviceStats getDeviceStats(c10::DeviceIndex index) override
	{
		auto &st = state(index);
		std::lock_guard<std::mutex> lock(st.mutex);
		return st.stats;
	}

	void resetAccumulatedStats(c10::DeviceIndex index) override
	{
		auto &st = state(index);
		std::lock_guard<std::mutex> lock(st.mutex);
		for_each_stat_array(st.stats, [](c10::CachingAllocator::Stat &s) {
			s.reset_accumulated();
		});
		st.stats.num_alloc_retries = 0;
		st.stats.num_ooms = 0;
		st.stats.num_device_alloc = 0;
		st.stats.num_device_free = 0;
	}

	void resetPeakStats(c10::DeviceIndex index) override
	{
		auto &st = state(index);
		std::lock_guard<std::mutex> lock(st.mutex);
		for_each_stat_array(st.stats, [](c10::CachingAllocator::Stat &s) { s.reset_peak(); });
	}

	std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex index) override
	{
		spyre_device_props p;
		SPYRE_CHECK(spyre_device_get_props(device_handle(index), &p));
		return {p.mem_free, p.mem_total};
	}

	// --- used by the helpers outside the class -----------------------
	bool has_state(c10::DeviceIndex index)
	{
		std::lock_guard<std::mutex> lock(states_mutex_);
		return states_.count(index) != 0;
	}

	DeviceState &state(c10::DeviceIndex index)
	{
		check_device_index(index);
		std::lock_guard<std::mutex> lock(states_mutex_);
		auto &p = states_[index];
		if (!p) {
			p = new DeviceState();
			p->index = index;
			void *va = mmap(nullptr, kAddressSpace, PROT_NONE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			TORCH_CHECK(va != MAP_FAILED, "spyre: cannot reserve address space for spyre:",
				    int(index));
			p->va_base = p->va_next = reinterpret_cast<uintptr_t>(va);
		}
		return *p;
	}

	DeviceState *state_of_ptr(const void *ptr)
	{
		auto a = reinterpret_cast<uintptr_t>(ptr);
		std::lock_guard<std::mutex> lock(states_mutex_);
		for (auto &kv : states_)
			if (kv.second && a >= kv.second->va_base &&
			    a < kv.second->va_base + kAddressSpace)
				return kv.second;
		return nullptr;
	}

	void free_ptr(void *ptr)
	{
		DeviceState *st = state_of_ptr(ptr);
		if (!st)
			return;
		std::lock_guard<std::mutex> lock(st->mutex);
		auto it = st->live.find(reinterpret_cast<uintptr_t>(ptr));
		if (it == st->live.end())
			return;
		Block *b = it->second;
		st->live.erase(it);
		b->allocated = false;
		stat_add(st->stats.allocation, b->seg->small, -1);
		stat_add(st->stats.allocated_bytes, b->seg->small, -int64_t(b->size));
		stat_add(st->stats.requested_bytes, b->seg->small, -int64_t(b->requested));
		if (!b->stream_uses.empty()) {
			// Other streams may still read or write it: free it once the
			// work they have queued so far is done.
			// A deleter must not throw: if an event cannot be recorded the
			// block is never reused (leaked) rather than reused too early.
			try {
				spyre_device *dev = device_handle(st->index);
				for (auto sid : b->stream_uses) {
					spyre_event *ev = nullptr;
					c10::Stream s(c10::Stream::UNSAFE,
						      c10::Device(c10::DeviceType::PrivateUse1,
								  st->index),
						      sid);
					if (spyre_event_create(dev, 0, &ev) < 0)
						return;
					if (spyre_event_record(ev, native_stream(s)) < 0) {
						spyre_event_destroy(ev);
						return;
					}
					b->events.push_back(ev);
				}
			} catch (...) {
				return;
			}
			b->stream_uses.clear();
			st->deferred.push_back(b);
			st->counters.deferred_frees++;
			return;
		}
		finish_free(*st, b);
	}

private:
	static void delete_ptr(void *ptr);

	Pool &pool_for(DeviceState &st, bool small)
	{
		return small ? st.small : st.large;
	}

	void finish_free(DeviceState &st, Block *b)
	{
		stat_add(st.stats.active, b->seg->small, -1);
		stat_add(st.stats.active_bytes, b->seg->small, -int64_t(b->size));
		Pool &pool = pool_for(st, b->seg->small);
		// merge with free neighbours of the same stream
		for (Block *n : {b->prev, b->next}) {
			if (!n || n->allocated || n->pending_events || !n->events.empty() ||
			    n->stream != b->stream || !pool.count(n))
				continue;
			pool.erase(n);
			if (n == b->prev) {
				b->addr = n->addr;
				b->prev = n->prev;
				if (b->prev)
					b->prev->next = b;
			} else {
				b->next = n->next;
				if (b->next)
					b->next->prev = b;
			}
			b->size += n->size;
			delete n;
		}
		pool.insert(b);
		update_inactive_split(st);
	}

	void update_inactive_split(DeviceState &st)
	{
		// recomputed (pools are small): free blocks that are part of a split segment
		int64_t small_n = 0, large_n = 0, small_b = 0, large_b = 0;
		for (Pool *p : {&st.small, &st.large})
			for (Block *b : *p)
				if (b->prev || b->next) {
					(b->seg->small ? small_n : large_n)++;
					(b->seg->small ? small_b : large_b) += b->size;
				}
		auto set = [](c10::CachingAllocator::StatArray &a, int64_t s, int64_t l) {
			auto fix = [](c10::CachingAllocator::Stat &x, int64_t v) {
				if (v > x.current)
					x.increase(v - x.current);
				else if (v < x.current)
					x.decrease(x.current - v);
			};
			fix(a[static_cast<size_t>(StatType::SMALL_POOL)], s);
			fix(a[static_cast<size_t>(StatType::LARGE_POOL)], l);
			fix(a[static_cast<size_t>(StatType::AGGREGATE)], s + l);
		};
		set(st.stats.inactive_split, small_n, large_n);
		set(st.stats.inactive_split_bytes, small_b, large_b);
	}

	void process_deferred(DeviceState &st)
	{
		for (size_t i = 0; i < st.deferred.size();) {
			Block *b = st.deferred[i];
			bool done = true;
			for (auto *ev : b->events)
				if (spyre_event_query(ev) == -EBUSY)
					done = false;
			if (!done) {
				i++;
				continue;
			}
			for (auto *ev : b->events)
				spyre_event_destroy(ev);
			b->events.clear();
			st.deferred.erase(st.deferred.begin() + i);
			finish_free(st, b);
		}
	}

	Block *find_free(DeviceState &st, Pool &pool, size_t size, c10::StreamId stream)
	{
		Block key{nullptr, 0, size, 0, stream};
		auto it = pool.lower_bound(&key);
		if (it != pool.end() && (*it)->stream == stream)
			return *it;
		// Another stream's free block, once that stream has no pending work.
		Block *best = nullptr;
		for (Block *b : pool) {
			if (b->stream == stream || b->size < size || (best && b->size >= best->size))
				continue;
			c10::Stream owner(c10::Stream::UNSAFE,
					  c10::Device(c10::DeviceType::PrivateUse1, st.index), b->stream);
			if (spyre_stream_query(native_stream(owner)) != 0)
				continue;
			best = b;
		}
		if (best) {
			st.counters.cross_stream_reuses++;
			pool.erase(best);
			best->stream = stream;
			pool.insert(best);
		}
		return best;
	}

	uintptr_t take_va(DeviceState &st, size_t size)
	{
		for (auto it = st.va_free.begin(); it != st.va_free.end(); ++it) {
			if (it->second < size)
				continue;
			uintptr_t a = it->first;
			size_t rest = it->second - size;
			st.va_free.erase(it);
			if (rest)
				st.va_free[a + size] = rest;
			return a;
		}
		TORCH_CHECK(st.va_next + size <= st.va_base + kAddressSpace,
			    "spyre: address space for spyre:", int(st.index), " exhausted");
		uintptr_t a = st.va_next;
		st.va_next += size;
		return a;
	}

	void release_segment(DeviceState &st, Block *b)
	{
		Segment *seg = b->seg;
		pool_for(st, seg->small).erase(b);
		spyre_bo_destroy(seg->bo);
		st.segments.erase(seg->addr);
		st.va_free[seg->addr] = seg->size;
		stat_add(st.stats.segment, seg->small, -1);
		stat_add(st.stats.reserved_bytes, seg->small, -int64_t(seg->size));
		st.stats.num_device_free++;
		delete b;
		delete seg;
	}

	// Merges every pair of neighbouring free blocks (all streams idle).
	void coalesce_idle(DeviceState &st)
	{
		for (Pool *p : {&st.small, &st.large}) {
			std::vector<Block *> blocks(p->begin(), p->end());
			for (Block *b : blocks) {
				if (!p->count(b))
					continue;
				Block *prev = b->prev;
				while (prev && p->count(prev)) {
					p->erase(prev);
					p->erase(b);
					prev->size += b->size;
					prev->next = b->next;
					if (b->next)
						b->next->prev = prev;
					delete b;
					p->insert(prev);
					b = prev;
					prev = b->prev;
				}
			}
		}
		update_inactive_split(st);
	}

	// Frees every cached segment with no live block.
	void release_cached(DeviceState &st)
	{
		std::vector<Block *> whole;
		for (Pool *p : {&st.small, &st.large})
			for (Block *b : *p)
				if (!b->prev && !b->next)
					whole.push_back(b);
		for (Block *b : whole)
			release_segment(st, b);
		update_inactive_split(st);
	}

	Block *new_segment(DeviceState &st, size_t size, bool small, c10::StreamId stream,
			   size_t requested)
	{
		size_t seg_size = small ? kSmallSegment
					: (size + kLargeRound - 1) / kLargeRound * kLargeRound;
		spyre_bo *bo = nullptr;
		int rc = spyre_bo_create(device_handle(st.index), seg_size, SPYRE_MEM_DEVICE, &bo);
		if (rc == -ENOMEM || rc == -ENOSPC || rc == -E2BIG) {
			st.stats.num_alloc_retries++;
			synchronize_device(st.index);
			process_deferred(st);
			coalesce_idle(st);
			release_cached(st);
			rc = spyre_bo_create(device_handle(st.index), seg_size, SPYRE_MEM_DEVICE,
					     &bo);
		}
		if (rc == -ENOMEM || rc == -ENOSPC || rc == -E2BIG) {
			st.stats.num_ooms++;
			throw_oom(st, requested);
		}
		if (rc < 0)
			throw_spyre_error(rc, "spyre_bo_create (device memory)");
		auto *seg = new Segment{bo, take_va(st, seg_size), seg_size, small};
		st.segments[seg->addr] = seg;
		st.stats.num_device_alloc++;
		stat_add(st.stats.segment, small, 1);
		stat_add(st.stats.reserved_bytes, small, int64_t(seg_size));
		auto *b = new Block{seg, seg->addr, seg_size, 0, stream};
		return b;
	}

	[[noreturn]] void throw_oom(DeviceState &st, size_t requested)
	{
		spyre_device_props p;
		spyre_device_get_props(device_handle(st.index), &p);
		auto agg = static_cast<size_t>(StatType::AGGREGATE);
		auto mib = [](uint64_t b) {
			std::ostringstream o;
			o.precision(2);
			o << std::fixed << double(b) / (1 << 20) << " MiB";
			return o.str();
		};
		int64_t allocated = st.stats.allocated_bytes[agg].current;
		int64_t reserved = st.stats.reserved_bytes[agg].current;
		TORCH_CHECK_WITH(OutOfMemoryError, false, "Spyre out of memory. Tried to allocate ",
				 mib(requested), ". spyre:", int(st.index), " has a total capacity of ",
				 mib(p.mem_total), " of which ", mib(p.mem_free),
				 " is free. Of the allocated memory ", mib(allocated),
				 " is allocated by PyTorch, and ", mib(reserved - allocated),
				 " is reserved by PyTorch but unallocated. Call "
				 "torch.spyre.empty_cache() to release cached memory.");
	}

	void *malloc_block(DeviceState &st, size_t nbytes, c10::StreamId stream)
	{
		std::lock_guard<std::mutex> lock(st.mutex);
		st.counters.requests++;
		process_deferred(st);
		size_t size = round_size(nbytes);
		bool small = size <= kSmallSize;
		Pool &pool = pool_for(st, small);
		Block *b = find_free(st, pool, size, stream);
		if (b) {
			pool.erase(b);
			st.counters.cache_hits++;
		} else {
			b = new_segment(st, size, small, stream, nbytes);
		}
		// split off the rest if it is worth keeping
		size_t rest = b->size - size;
		if (rest >= (small ? kRound : kSmallSize + 1)) {
			auto *r = new Block{b->seg, b->addr + size, rest, 0, b->stream};
			r->prev = b;
			r->next = b->next;
			if (r->next)
				r->next->prev = r;
			b->next = r;
			b->size = size;
			pool.insert(r);
		}
		b->allocated = true;
		b->requested = nbytes;
		st.live[b->addr] = b;
		stat_add(st.stats.allocation, small, 1);
		stat_add(st.stats.allocated_bytes, small, int64_t(b->size));
		stat_add(st.stats.requested_bytes, small, int64_t(nbytes));
		stat_add(st.stats.active, small, 1);
		stat_add(st.stats.active_bytes, small, int64_t(b->size));
		update_inactive_split(st);
		return reinterpret_cast<void *>(b->addr);
	}

	std::mutex states_mutex_;
	std::unordered_map<c10::DeviceIndex, DeviceState *> states_;
};

SpyreAllocator *the_allocator()
{
	static auto *a = new SpyreAllocator();
	return a;
}

void SpyreAllocator::delete_ptr(void *ptr)
{
	if (ptr)
		the_allocator()->free_ptr(ptr);
}

} // namespace

c10::DeviceAllocator *device_allocator()
{
	return the_allocator();
}

c10::DeviceIndex device_of_ptr(const void *ptr)
{
	DeviceState *st = the_allocator()->state_of_ptr(ptr);
	return st ? st->index : c10::DeviceIndex(-1);
}

spyre_buf resolve_device_ptr(const void *ptr, size_t nbytes)
{
	DeviceState *st = the_allocator()->state_of_ptr(ptr);
	TORCH_CHECK(st, "spyre: ", ptr, " is not spyre device memory");
	auto a = reinterpret_cast<uintptr_t>(ptr);
	std::lock_guard<std::mutex> lock(st->mutex);
	auto it = st->segments.upper_bound(a);
	TORCH_CHECK(it != st->segments.begin(), "spyre: ", ptr, " is not in a live allocation");
	Segment *seg = std::prev(it)->second;
	TORCH_CHECK(a + nbytes <= seg->addr + seg->size, "spyre: range [", ptr, ", +", nbytes,
		    ") is outside its allocation");
	return spyre_buf{seg->bo, a - seg->addr, nbytes};
}

AllocatorCounters allocator_counters(c10::DeviceIndex index)
{
	auto &st = the_allocator()->state(index);
	std::lock_guard<std::mutex> lock(st.mutex);
	return st.counters;
}

// Registered here so that every tensor of the device uses it.
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, the_allocator());

} // namespace torch_spyre
