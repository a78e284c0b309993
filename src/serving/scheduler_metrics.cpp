#include "serving/scheduler_metrics.hpp"

#include <chrono>

namespace warden::serving {

namespace {

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

SchedulerObserver scheduler_observer(MetricsRegistry& registry) {
  Histogram& batch_inputs =
      registry.histogram("warden_batch_inputs", "Inputs in one engine batch", exponential_buckets(1, 2, 12));
  Histogram& batch_tokens =
      registry.histogram("warden_batch_tokens", "Tokens in one engine batch", exponential_buckets(16, 2, 13));
  Histogram& batch_requests = registry.histogram(
      "warden_batch_requests", "Requests merged into one engine batch", exponential_buckets(1, 2, 10));
  Histogram& batch_seconds = registry.histogram("warden_batch_duration_seconds", "Time one engine batch took",
                                                default_latency_buckets());
  Histogram& queue_seconds =
      registry.histogram("warden_queue_duration_seconds", "Time from admission request to the first batch",
                         default_latency_buckets());
  Histogram& inference_seconds =
      registry.histogram("warden_inference_duration_seconds", "Time in the batches that computed a request",
                         default_latency_buckets());
  Counter& rejected =
      registry.counter("warden_rejected_total", "Requests refused with 429: the wait queue was full");
  Counter& timed_out =
      registry.counter("warden_timed_out_total", "Requests answered 504: they waited past the queue timeout");
  Counter& dropped = registry.counter("warden_dropped_total",
                                      "Requests dropped without being computed: the client disconnected");
  Counter& failed = registry.counter("warden_failed_total", "Requests whose batch failed in the engine");

  SchedulerObserver observer;
  observer.on_batch = [&](const BatchStats& b) {
    batch_inputs.observe(static_cast<double>(b.inputs));
    batch_tokens.observe(static_cast<double>(b.tokens));
    batch_requests.observe(static_cast<double>(b.jobs));
    batch_seconds.observe(seconds(b.duration));
  };
  observer.on_outcome = [&](Outcome outcome, const Job& job) {
    switch (outcome) {
      case Outcome::Done:
        queue_seconds.observe(seconds(job.timings().queue));
        inference_seconds.observe(seconds(job.timings().inference));
        break;
      case Outcome::Rejected:
        rejected.inc();
        break;
      case Outcome::TimedOut:
        timed_out.inc();
        break;
      case Outcome::Cancelled:
        dropped.inc();
        break;
      case Outcome::Failed:
        failed.inc();
        break;
      case Outcome::Stopped:
        break;
    }
  };
  return observer;
}

void register_scheduler_gauges(MetricsRegistry& registry, const Scheduler& scheduler) {
  registry.gauge_callback("warden_queue_size", "Requests waiting for admission",
                          [&scheduler] { return static_cast<double>(scheduler.load().waiting_jobs); });
  registry.gauge_callback("warden_in_flight_inputs", "Inputs admitted and not yet answered",
                          [&scheduler] { return static_cast<double>(scheduler.load().admitted_inputs); });
  registry.gauge_callback("warden_in_flight_requests", "Requests admitted and not yet answered",
                          [&scheduler] { return static_cast<double>(scheduler.load().admitted_jobs); });
  registry.gauge_callback("warden_max_concurrent_inputs", "Admission limit (--max-concurrent-requests)",
                          [&scheduler] { return static_cast<double>(scheduler.options().max_concurrent); });
}

}  // namespace warden::serving
