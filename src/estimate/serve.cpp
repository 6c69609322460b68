#include "gpuadvisor/estimate/serve.h"

#include <algorithm>
#include <cmath>

#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/estimate/perf.h"

namespace gpuadvisor::estimate {

Workload serve_workload(const Workload& base, int tp, long long streams, const ServeTarget& t) {
  Workload w = base;
  w.gpus = tp;
  w.tp = tp;
  w.pp = 1;
  w.batch = std::max<long long>(1, streams);
  w.seq_len = t.prompt_tokens + t.output_tokens;
  return w;
}

namespace {

struct Rates {
  bool known = false;
  double decode = 0;   ///< steps/s at the batch: tokens/s per stream
  double prefill = 0;  ///< prompt tokens/s of one replica
};

// Decode at the mean context of a stream (the prompt and half the output) and prefill, for one
// replica at `streams` sequences.
Rates rates(const Workload& base, const catalog::Gpu& gpu, int tp, long long streams, const ServeTarget& t,
            const catalog::Efficiency& eff) {
  Workload w = serve_workload(base, tp, streams, t);
  w.seq_len = t.prompt_tokens + t.output_tokens / 2;
  const auto p = estimate_perf(w, gpu, eff, false);
  Rates r;
  r.known = p.available && p.compute_known && p.decode_tokens_per_s.typical > 0 && p.prefill_tokens_per_s.typical > 0;
  r.decode = p.decode_tokens_per_s.typical;
  r.prefill = p.prefill_tokens_per_s.typical;
  return r;
}

}  // namespace

ServeMetrics serve_metrics(const Workload& base, const catalog::Gpu& gpu, int tp, int replicas, const ServeTarget& t,
                           const catalog::Efficiency& eff, double headroom) {
  ServeMetrics m;
  m.tp = tp;
  m.replicas = replicas;
  const double P = static_cast<double>(t.prompt_tokens), O = static_cast<double>(t.output_tokens);
  // Users: a closed loop of `users` streams. Requests per second: streams = arrivals x time in
  // the system (Little's law), found by iterating from one stream.
  long long streams = t.users ? static_cast<long long>(std::ceil(*t.users / replicas - 1e-9)) : 1;
  const double lambda_rps = t.rps ? *t.rps / replicas : 0;
  Rates r;
  double rho = 0, tpot = 0, ttft = 0;
  for (int round = 0; round < 30; ++round) {
    r = rates(base, gpu, tp, streams, t, eff);
    if (!r.known) {
      m.streams_per_replica = streams;
      m.why_not = "no compute peak to time prefill with";
      return m;
    }
    // Prefill load, decode slowed by it, and the wait for the first token; iterated, as each
    // depends on the time a request takes.
    double request_s = P / r.prefill + O / r.decode;
    for (int k = 0; k < 50; ++k) {
      const double lambda = t.users ? static_cast<double>(streams) / request_s : lambda_rps;
      rho = lambda * P / r.prefill;
      if (rho >= 1) break;
      tpot = 1 / (r.decode * (1 - rho));
      const double service = P / r.prefill;
      ttft = service + rho * service / (2 * (1 - rho)) + 1 / r.decode;
      const double next = ttft + O * tpot;
      if (std::fabs(next - request_s) < 1e-9 * next) break;
      request_s = next;
    }
    if (rho >= 1) {
      m.streams_per_replica = streams;
      m.prefill_load = 1;
      m.why_not = "prefill cannot keep up with the requests";
      return m;
    }
    if (t.users) break;
    // Requests per second: the streams in flight at that rate; again at that batch until stable.
    const auto in_flight = std::max<long long>(1, static_cast<long long>(std::ceil(lambda_rps * (ttft + O * tpot))));
    if (in_flight == streams) break;
    streams = in_flight;
  }
  m.streams_per_replica = streams;
  m.tokens_per_user_s = 1 / tpot;
  m.ttft_s = ttft;
  m.prefill_load = rho;
  m.requests_per_s = (t.users ? static_cast<double>(streams) / (ttft + O * tpot) : lambda_rps) * replicas;
  const auto f = fit(serve_workload(base, tp, streams, t), gpu, eff, headroom);
  m.kv_streams = f.max_concurrency.value_or(0);
  m.feasible = f.fits;
  if (!f.fits) m.why_not = f.max_batch ? "the KV cache does not hold the streams" : "the model does not fit";
  return m;
}

}  // namespace gpuadvisor::estimate
