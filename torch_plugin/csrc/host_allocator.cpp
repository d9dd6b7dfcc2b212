// SPDX-License-Identifier: MIT
#include "host_allocator.h"

#include "device.h"
#include "stream.h"

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

namespace torch_spyre {
namespace {

struct HostBlock {
	c10::DeviceIndex device;
	spyre_bo *bo;
	uintptr_t addr;
	size_t size; // a power of two
	bool allocated = false;
	std::vector<spyre_event *> events;
};

size_t round_pow2(size_t n)
{
	size_t s = 4096;
	while (s < n)
		s <<= 1;
	return s;
}

class SpyreHostAllocator final : public at::HostAllocator {
public:
	c10::DataPtr allocate(size_t nbytes) override
	{
		return alloc_on(current_device(), nbytes);
	}

	c10::DataPtr alloc_on(c10::DeviceIndex index, size_t nbytes)
	{
		if (nbytes == 0)
			return c10::DataPtr(nullptr, nullptr, &delete_ptr, c10::DeviceType::CPU);
		size_t size = round_pow2(nbytes);
		std::lock_guard<std::mutex> lock(mutex_);
		HostBlock *b = nullptr;
		for (auto it = free_.lower_bound(size); it != free_.end() && it->first == size;
		     ++it) {
			if (it->second->device == index && events_done(it->second)) {
				b = it->second;
				free_.erase(it);
				break;
			}
		}
		if (!b) {
			spyre_bo *bo = nullptr;
			SPYRE_CHECK(spyre_bo_create(device_handle(index), size, SPYRE_MEM_HOST, &bo));
			void *p = nullptr;
			int rc = spyre_bo_map(bo, &p);
			if (rc < 0) {
				spyre_bo_destroy(bo);
				throw_spyre_error(rc, "spyre_bo_map (pinned memory)");
			}
			b = new HostBlock{index, bo, reinterpret_cast<uintptr_t>(p), size};
			blocks_[b->addr] = b;
			stats_.num_host_alloc++;
			stats_.allocations.increase(1);
			stats_.allocated_bytes.increase(size);
		}
		b->allocated = true;
		stats_.active_requests.increase(1);
		stats_.active_bytes.increase(size);
		void *p = reinterpret_cast<void *>(b->addr);
		return c10::DataPtr(p, p, &delete_ptr, c10::DeviceType::CPU);
	}

	c10::DeleterFnPtr raw_deleter() const override
	{
		return &delete_ptr;
	}

	void copy_data(void *dest, const void *src, std::size_t count) const override
	{
		std::memcpy(dest, src, count);
	}

	bool record_event(void *ptr, void *, c10::Stream stream) override
	{
		record_use(ptr, stream);
		return true;
	}

	void empty_cache() override
	{
		std::lock_guard<std::mutex> lock(mutex_);
		for (auto it = free_.begin(); it != free_.end();) {
			HostBlock *b = it->second;
			if (!events_done(b)) {
				++it;
				continue;
			}
			it = free_.erase(it);
			blocks_.erase(b->addr);
			stats_.num_host_free++;
			stats_.allocations.decrease(1);
			stats_.allocated_bytes.decrease(b->size);
			spyre_bo_destroy(b->bo);
			delete b;
		}
	}

	at::HostStats get_stats() override
	{
		std::lock_guard<std::mutex> lock(mutex_);
		return stats_;
	}

	void reset_accumulated_stats() override
	{
		std::lock_guard<std::mutex> lock(mutex_);
		stats_.allocations.reset_accumulated();
		stats_.allocated_bytes.reset_accumulated();
		stats_.active_requests.reset_accumulated();
		stats_.active_bytes.reset_accumulated();
	}

	void reset_peak_stats() override
	{
		std::lock_guard<std::mutex> lock(mutex_);
		stats_.allocations.reset_peak();
		stats_.allocated_bytes.reset_peak();
		stats_.active_requests.reset_peak();
		stats_.active_bytes.reset_peak();
	}

	HostBlock *find(const void *ptr)
	{
		auto a = reinterpret_cast<uintptr_t>(ptr);
		auto it = blocks_.upper_bound(a);
		if (it == blocks_.begin())
			return nullptr;
		HostBlock *b = std::prev(it)->second;
		return a < b->addr + b->size ? b : nullptr;
	}

	bool resolve(const void *ptr, size_t nbytes, c10::DeviceIndex index, spyre_buf *out)
	{
		std::lock_guard<std::mutex> lock(mutex_);
		HostBlock *b = find(ptr);
		auto a = reinterpret_cast<uintptr_t>(ptr);
		if (!b || b->device != index || a + nbytes > b->addr + b->size)
			return false;
		*out = spyre_buf{b->bo, a - b->addr, nbytes};
		return true;
	}

	bool pinned(const void *ptr)
	{
		std::lock_guard<std::mutex> lock(mutex_);
		return find(ptr) != nullptr;
	}

	void record_use(const void *ptr, c10::Stream stream)
	{
		spyre_stream *s = native_stream(stream);
		spyre_event *ev = nullptr;
		SPYRE_CHECK(spyre_event_create(device_handle(stream.device_index()), 0, &ev));
		int rc = spyre_event_record(ev, s);
		if (rc < 0) {
			spyre_event_destroy(ev);
			throw_spyre_error(rc, "spyre_event_record (pinned memory use)");
		}
		std::lock_guard<std::mutex> lock(mutex_);
		HostBlock *b = find(ptr);
		if (!b) {
			spyre_event_destroy(ev);
			return;
		}
		b->events.push_back(ev);
	}

	void free_ptr(void *ptr)
	{
		std::lock_guard<std::mutex> lock(mutex_);
		HostBlock *b = find(ptr);
		if (!b)
			return;
		b->allocated = false;
		stats_.active_requests.decrease(1);
		stats_.active_bytes.decrease(b->size);
		free_.emplace(b->size, b);
	}

private:
	static void delete_ptr(void *ptr);

	// true when every copy that used the block has completed
	static bool events_done(HostBlock *b)
	{
		for (auto it = b->events.begin(); it != b->events.end();) {
			if (spyre_event_query(*it) == -EBUSY)
				return false;
			spyre_event_destroy(*it);
			it = b->events.erase(it);
		}
		return true;
	}

	std::mutex mutex_;
	std::map<uintptr_t, HostBlock *> blocks_;
	std::multimap<size_t, HostBlock *> free_;
	at::HostStats stats_;
};

SpyreHostAllocator *the_host_allocator()
{
	static auto *a = new SpyreHostAllocator();
	return a;
}

void SpyreHostAllocator::delete_ptr(void *ptr)
{
	if (ptr)
		the_host_allocator()->free_ptr(ptr);
}

} // namespace

at::HostAllocator *host_allocator()
{
	return the_host_allocator();
}

c10::DataPtr host_alloc_for(c10::DeviceIndex index, size_t nbytes)
{
	return the_host_allocator()->alloc_on(index, nbytes);
}

bool resolve_host_ptr(const void *ptr, size_t nbytes, c10::DeviceIndex index, spyre_buf *out)
{
	return the_host_allocator()->resolve(ptr, nbytes, index, out);
}

bool is_pinned_ptr(const void *ptr)
{
	return the_host_allocator()->pinned(ptr);
}

void record_host_use(const void *ptr, c10::Stream stream)
{
	the_host_allocator()->record_use(ptr, stream);
}

REGISTER_HOST_ALLOCATOR(at::kPrivateUse1, the_host_allocator())

} // namespace torch_spyre
