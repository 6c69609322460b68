#pragma once
/// Serving many users: continuous batching on replicas of a tensor-parallel group, from the memory
/// model (how many sequences the KV cache holds) and the performance model (decode step at that
/// batch, prefill rate), with prefill interfering with decode and queueing for the first token
/// (docs/methodology.md, "Serving").
#include <optional>
#include <string>

#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/estimate/workload.h"

namespace gpuadvisor::estimate {

/// What the service must do. Either `users` (concurrent streams, each sending its next request
/// when the last ends) or `rps` (requests per second, Poisson arrivals).
struct ServeTarget {
  std::optional<double> users;
  std::optional<double> rps;
  long long prompt_tokens = 1024;
  long long output_tokens = 256;
  std::optional<double> ttft_s;             ///< time to first token, at most (mean, about p50)
  std::optional<double> tokens_per_user_s;  ///< decode rate each stream sees, at least (1 / TPOT)
};

/// One plan's service: `replicas` copies of the model, each over `tp` GPUs.
struct ServeMetrics {
  int tp = 1;
  int replicas = 1;
  bool feasible = false;              ///< the KV cache holds the streams and prefill keeps up
  std::string why_not;                ///< when not feasible, in a few words
  long long streams_per_replica = 0;  ///< concurrent sequences one replica decodes
  double kv_streams = 0;              ///< sequences of prompt + output tokens the KV cache holds per replica
  double tokens_per_user_s = 0;       ///< each stream's decode rate, prefill interference included
  double ttft_s = 0;                  ///< mean time to first token: queueing + prefill + one step
  double prefill_load = 0;            ///< share of each replica's time spent on prefill
  double requests_per_s = 0;          ///< all replicas
};

/// The service of `replicas` copies over `tp` GPUs each, at the target's load. `base` gives the
/// model, precision and engine settings; its batch, context and GPU counts are set here. Prefill is
/// an M/D/1 queue (Poisson arrivals, a fixed prefill time): the mean wait is rho S / (2 (1 - rho)).
ServeMetrics serve_metrics(const Workload& base, const catalog::Gpu& gpu, int tp, int replicas, const ServeTarget& t,
                           const catalog::Efficiency& eff, double headroom);

/// The workload of one replica serving `streams` sequences: batch = streams, context = prompt +
/// output tokens, `tp` GPUs.
Workload serve_workload(const Workload& base, int tp, long long streams, const ServeTarget& t);

}  // namespace gpuadvisor::estimate
