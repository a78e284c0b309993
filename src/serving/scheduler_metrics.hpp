#pragma once
// The scheduler's Prometheus series: batch sizes and durations, queue and in-flight
// gauges, and counters for the requests it refused (429), timed out (504) or dropped
// (client gone).

#include "serving/metrics.hpp"
#include "serving/scheduler.hpp"

namespace warden::serving {

// An observer that records batches and outcomes into `registry` (which must outlive it).
SchedulerObserver scheduler_observer(MetricsRegistry& registry);

// Gauges read from `scheduler` at render time; both must outlive the registry's use.
void register_scheduler_gauges(MetricsRegistry& registry, const Scheduler& scheduler);

}  // namespace warden::serving
