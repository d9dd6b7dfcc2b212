// SPDX-License-Identifier: MIT
#include "stream.h"

#include "device.h"

#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace torch_spyre {
namespace {

// Streams beyond the default one that one device hands out before reuse.
constexpr size_t kPoolSize = 8;

struct StreamTable {
	std::mutex mutex;
	// per device: slot 0 = default stream
	std::unordered_map<c10::DeviceIndex, std::vector<spyre_stream *>> streams;
	std::unordered_map<c10::DeviceIndex, size_t> next_id;
	std::unordered_map<c10::DeviceIndex, std::vector<spyre_stream *>> transfer;
	std::unordered_map<c10::DeviceIndex, size_t> next_transfer;
};

StreamTable &table()
{
	static auto *t = new StreamTable();
	return *t;
}

thread_local std::unordered_map<c10::DeviceIndex, c10::StreamId> tls_current;

spyre_stream *create_native(c10::DeviceIndex index, spyre_engine engine = SPYRE_ENGINE_COMPUTE)
{
	spyre_stream *s = nullptr;
	SPYRE_CHECK(spyre_stream_create(device_handle(index), engine, &s));
	return s;
}

// -1 (a device without index) means the current device
c10::DeviceIndex or_current(c10::DeviceIndex index)
{
	return index < 0 ? current_device() : index;
}

} // namespace

c10::Stream default_stream(c10::DeviceIndex index)
{
	index = or_current(index);
	check_device_index(index);
	return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, index), 0);
}

c10::Stream new_stream(c10::DeviceIndex index)
{
	index = or_current(index);
	check_device_index(index);
	auto &t = table();
	std::lock_guard<std::mutex> lock(t.mutex);
	auto &v = t.streams[index];
	if (v.empty())
		v.push_back(nullptr); // default stream, created lazily
	c10::StreamId id;
	if (v.size() <= kPoolSize) {
		v.push_back(create_native(index));
		id = static_cast<c10::StreamId>(v.size() - 1);
	} else {
		id = static_cast<c10::StreamId>(1 + t.next_id[index]++ % kPoolSize);
	}
	return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, index), id);
}

c10::Stream new_transfer_stream(c10::DeviceIndex index)
{
	index = or_current(index);
	check_device_index(index);
	auto &t = table();
	std::lock_guard<std::mutex> lock(t.mutex);
	auto &v = t.transfer[index];
	size_t k;
	if (v.size() < kPoolSize / 2) {
		v.push_back(create_native(index, SPYRE_ENGINE_DMA));
		k = v.size() - 1;
	} else {
		k = t.next_transfer[index]++ % v.size();
	}
	return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, index),
			   kTransferStreamBase + static_cast<c10::StreamId>(k));
}

c10::Stream current_stream(c10::DeviceIndex index)
{
	index = or_current(index);
	check_device_index(index);
	auto it = tls_current.find(index);
	c10::StreamId id = it == tls_current.end() ? 0 : it->second;
	return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, index), id);
}

c10::Stream exchange_stream(c10::Stream s)
{
	auto old = current_stream(s.device_index());
	native_stream(s); // validates the id
	tls_current[s.device_index()] = s.id();
	return old;
}

spyre_stream *native_stream(c10::Stream s)
{
	auto index = s.device_index();
	check_device_index(index);
	auto &t = table();
	std::lock_guard<std::mutex> lock(t.mutex);
	if (s.id() >= kTransferStreamBase) {
		auto &tv = t.transfer[index];
		size_t k = static_cast<size_t>(s.id() - kTransferStreamBase);
		TORCH_CHECK(k < tv.size(), "spyre: unknown stream id ", s.id(), " on spyre:",
			    int(index));
		return tv[k];
	}
	auto &v = t.streams[index];
	if (v.empty())
		v.push_back(nullptr);
	TORCH_CHECK(s.id() >= 0 && static_cast<size_t>(s.id()) < v.size(),
		    "spyre: unknown stream id ", s.id(), " on spyre:", int(index));
	if (!v[s.id()])
		v[s.id()] = create_native(index);
	return v[s.id()];
}

void synchronize_device(c10::DeviceIndex index)
{
	index = or_current(index);
	check_device_index(index);
	std::vector<spyre_stream *> v;
	{
		auto &t = table();
		std::lock_guard<std::mutex> lock(t.mutex);
		v = t.streams[index];
		v.insert(v.end(), t.transfer[index].begin(), t.transfer[index].end());
	}
	for (auto *s : v)
		if (s)
			sync_stream(s);
}

void sync_stream(spyre_stream *s)
{
	int rc = spyre_stream_synchronize(s);

	if (rc < 0) {
		// Keep the message: clearing the error must not replace it.
		std::string msg = spyre_last_error();
		spyre_stream_clear_error(s);
		TORCH_CHECK(false, "spyre: spyre_stream_synchronize failed: ",
			    msg.empty() ? std::strerror(-rc) : msg);
	}
}

} // namespace torch_spyre
