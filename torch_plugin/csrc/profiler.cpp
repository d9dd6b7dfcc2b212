// SPDX-License-Identifier: MIT
/*
 * The card's work in torch.profiler: a Kineto child profiler registered with
 * REGISTER_PRIVATEUSE1_PROFILER (torch 2.13). With
 * ProfilerActivity.PrivateUse1 among the activities, Kineto asks it for a
 * session; the session runs an in-memory libspyre trace on every card
 * (spyre_trace_start(dev, NULL)) and, at stop, turns each submission into
 * a device activity: a kernel (CONCURRENT_KERNEL) on the compute engine, a
 * memcpy (GPU_MEMCPY) on a DMA lane, named after the aten op that issued it
 * (trace.h), lasting its modelled device time. torch shows them as SPYRE
 * events (prof.events(), key_averages()'s "SPYRE" columns, the Chrome
 * trace's device rows).
 *
 * Placement on the host clock: the card's clock is modelled (on the sim it
 * only advances with work; on the VM's card it also runs while waiting for
 * the host), so device times are kept relative to each other and shifted
 * forward wherever that would put a span before its host submit: a span
 * starts at max(its submit time, the previous span's start + their device
 * clock distance). Durations and overlaps within a busy period are the
 * card's own.
 */
#include "device.h"
#include "trace.h"

// libtorch is built with Kineto (the CPU wheel too); its headers hide the
// PrivateUse1 registry unless USE_KINETO is set, which extension builds do
// not set. Only this file includes them.
#ifndef USE_KINETO
#define USE_KINETO
#endif
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>
#include <libkineto.h>
#include <output_base.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

namespace torch_spyre {
namespace {

using libkineto::ActivityType;

int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

class SpyreSession : public libkineto::IActivityProfilerSession {
public:
	void start() override
	{
		int n = 0;

		try {
			n = device_count();
			for (int i = 0; i < n; i++) {
				int rc = spyre_trace_start(device_handle(c10::DeviceIndex(i)), nullptr);

				if (rc < 0)
					errors_.push_back(std::string("spyre:") + std::to_string(i) + ": " +
							  spyre_last_error());
				else
					traced_.push_back(i);
			}
		} catch (const std::exception &e) {
			errors_.push_back(e.what());
		}
		if (!traced_.empty())
			trace_labels_on();
		start_ns_ = clock_ns(CLOCK_REALTIME);
		status_ = libkineto::TraceStatus::RECORDING;
	}

	void stop() override
	{
		if (!traced_.empty())
			trace_labels_off();
		// libspyre's submit times are CLOCK_MONOTONIC, Kineto's Unix time
		const int64_t to_unix = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
		buf_->span = libkineto::TraceSpan(start_ns_, clock_ns(CLOCK_REALTIME), "spyre");
		for (int i : traced_) {
			struct spyre_trace_span *v = nullptr;
			unsigned int n = 0;

			// the devices were opened in start(): device_handle cannot throw here
			if (spyre_trace_stop_spans(device_handle(c10::DeviceIndex(i)), &v, &n) < 0) {
				errors_.push_back(std::string("spyre:") + std::to_string(i) + ": " +
						  spyre_last_error());
				continue;
			}
			add_device(i, v, n, to_unix);
			free(v);
		}
		traced_.clear();
		status_ = libkineto::TraceStatus::PROCESSING;
	}

	std::vector<std::string> errors() override
	{
		return errors_;
	}

	void processTrace(libkineto::ActivityLogger &logger) override
	{
		for (const auto &a : buf_->activities)
			logger.handleActivity(*a);
	}

	std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override
	{
		return std::make_unique<libkineto::DeviceInfo>(
			libkineto::DeviceInfo{0, 0, "spyre:0", "Spyre"});
	}

	std::vector<libkineto::ResourceInfo> getResourceInfos() override
	{
		return resources_;
	}

	std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override
	{
		return std::move(buf_);
	}

private:
	void add_device(int index, struct spyre_trace_span *v, unsigned int n, int64_t to_unix)
	{
		std::vector<unsigned int> order(n);
		bool seen[64] = {};

		for (unsigned int k = 0; k < n; k++)
			order[k] = k;
		std::stable_sort(order.begin(), order.end(), [v](unsigned int a, unsigned int b) {
			return v[a].start_ns < v[b].start_ns;
		});
		int64_t at = 0;
		uint64_t prev = 0;
		for (unsigned int k : order) {
			const struct spyre_trace_span &s = v[k];
			int64_t host = int64_t(s.host_ns) + to_unix;

			at = k == order[0] ? host : std::max(host, at + int64_t(s.start_ns - prev));
			prev = s.start_ns;
			buf_->emplace_activity(buf_->span,
					       s.engine == SPYRE_ENGINE_COMPUTE ?
						       ActivityType::CONCURRENT_KERNEL :
						       ActivityType::GPU_MEMCPY,
					       std::string(s.name));
			auto &a = *buf_->activities.back();
			a.startTime = at;
			a.endTime = at + int64_t(s.end_ns - s.start_ns);
			a.device = index;
			a.resource = int32_t(s.track);
			a.addMetadataQuoted("device", "spyre:" + std::to_string(index));
			a.addMetadataQuoted("call", s.call);
			// addMetadata formats with fmt, which libtorch does not export
			a.addMetadataQuoted("cmds", std::to_string(s.cmds));
			a.addMetadataQuoted("device clock ns",
					    std::to_string(s.start_ns) + ".." + std::to_string(s.end_ns));
			if (s.track < 64 && !seen[s.track]) {
				seen[s.track] = true;
				resources_.push_back(libkineto::ResourceInfo{
					int64_t(s.track), int64_t(s.track), index,
					s.track == 1 ? std::string("compute") :
						       "dma " + std::to_string(s.track - 2)});
			}
		}
	}

	std::unique_ptr<libkineto::CpuTraceBuffer> buf_ =
		std::make_unique<libkineto::CpuTraceBuffer>();
	std::vector<libkineto::ResourceInfo> resources_;
	std::vector<std::string> errors_;
	std::vector<int> traced_;
	int64_t start_ns_ = 0;
};

class SpyreActivityProfiler : public libkineto::IActivityProfiler {
public:
	const std::string &name() const override
	{
		return name_;
	}

	const std::set<ActivityType> &availableActivities() const override
	{
		return activities_;
	}

	std::unique_ptr<libkineto::IActivityProfilerSession>
	configure(const std::set<ActivityType> &types, const libkineto::Config &) override
	{
		// only when the card's activities were asked for (ProfilerActivity.PrivateUse1)
		if (!types.count(ActivityType::CONCURRENT_KERNEL) &&
		    !types.count(ActivityType::GPU_MEMCPY))
			return nullptr;
		return std::make_unique<SpyreSession>();
	}

	std::unique_ptr<libkineto::IActivityProfilerSession>
	configure(int64_t, int64_t, const std::set<ActivityType> &types,
		  const libkineto::Config &config) override
	{
		return configure(types, config);
	}

private:
	std::string name_{"spyre"};
	std::set<ActivityType> activities_{ActivityType::CONCURRENT_KERNEL,
					   ActivityType::GPU_MEMCPY};
};

REGISTER_PRIVATEUSE1_PROFILER(SpyreActivityProfiler);

} // namespace
} // namespace torch_spyre
