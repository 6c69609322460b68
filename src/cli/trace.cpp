#include "trace.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <map>

#include "context.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"
#include "html_pages.h"

namespace gpuadvisor::cli {

namespace {
bool on(spdlog::level::level_enum l) { return spdlog::default_logger()->should_log(l); }
std::string range(const estimate::Range& r) {
  return fmt::format("{} ({} to {})", util::format_number(r.typical), util::format_number(r.low),
                     util::format_number(r.high));
}
}  // namespace

void trace_workload(const estimate::Workload& w, const catalog::Gpu* gpu) {
  if (!on(spdlog::level::debug)) return;
  spdlog::debug("workload: {}", describe(w));
  spdlog::debug("layout: {} GPU{}{}: tensor parallel {}, pipeline {}, data parallel {}, ZeRO {}, checkpointing {}",
                w.gpus, w.gpus > 1 ? "s" : "", gpu ? " of " + gpu->id : "", w.tp, w.pp, w.dp(), w.zero,
                catalog::kCheckpointingNames.name(w.checkpointing));
}

void trace_memory(const estimate::MemoryEstimate& mem) {
  if (!on(spdlog::level::debug)) return;
  spdlog::debug("memory: {} per GPU, {} in all{}", util::format_bytes(mem.per_gpu_bytes),
                util::format_bytes(mem.total_bytes),
                mem.host_bytes > 0 ? ", host RAM " + util::format_bytes(mem.host_bytes) : "");
  for (const auto& l : mem.lines)
    spdlog::trace("memory line {}: {} per GPU{} = {}", estimate::line_id(l.id), util::format_bytes(l.per_gpu_bytes),
                  l.host ? " (host)" : "", l.formula.empty() ? "-" : l.formula);
}

void trace_perf(const estimate::PerfEstimate& p, const catalog::Gpu& gpu) {
  if (!on(spdlog::level::debug)) return;
  if (!p.available) {
    spdlog::debug("speed on {}: not estimated: {}", gpu.id, p.reason);
    return;
  }
  spdlog::debug(
      "speed on {}: bound by {}; utilisation {:.2f}, bandwidth efficiency {:.2f}, multi-GPU scaling {:.2f}; factors: "
      "{}",
      gpu.id, p.bound, p.mfu, p.bandwidth_efficiency, p.scaling,
      p.factors.empty() ? "none" : util::join(p.factors, ", "));
  if (p.tokens_per_s.typical > 0) spdlog::debug("training: {} tokens/s", range(p.tokens_per_s));
  if (p.decode_tokens_per_s.typical > 0)
    spdlog::debug("inference: decode {} tokens/s per sequence, prefill {} tokens/s", range(p.decode_tokens_per_s),
                  p.compute_known ? range(p.prefill_tokens_per_s) : "unknown");
  spdlog::trace("inputs: peak {} TFLOPS ({}), {} GB/s, {} read per decode step, {} FLOPs per token",
                util::format_number(p.peak_flops / 1e12), catalog::name(p.compute),
                util::format_number(gpu.memory_bandwidth_gbs), util::format_bytes(p.decode_bytes_per_step),
                util::format_number(p.flops_per_token));
}

void trace_recommend(const rules::Recommendation& rec) {
  if (!on(spdlog::level::debug)) return;
  std::size_t accepted = 0;
  for (const auto& c : rec.candidates) accepted += c.accepted;
  spdlog::debug("recommend: {} candidates evaluated, {} accepted, {} plans (one per GPU model)", rec.candidates.size(),
                accepted, rec.plans.size());
  for (std::size_t rank = 0; rank < rec.plans.size(); ++rank) {
    const auto& c = rec.candidates[rec.plans[rank]];
    // The score ranks (advice penalties taken); plans within 5% of a run's best are ordered by
    // fewer cards, then speed, so a later plan may score a little higher.
    spdlog::debug("plan {}: {} {}, score {} ({}, advice penalties taken); {}", rank + 1, c.label(),
                  c.value ? value_words(c, rec) : "value unknown", util::format_number(c.score), rec.score_unit,
                  c.reason);
  }
  // -v: how many candidates each constraint dropped; -vv: each dropped candidate and its rules.
  std::map<std::string, std::size_t> dropped_by;
  for (const auto& c : rec.candidates) {
    if (!c.accepted) {
      std::vector<std::string> why;
      for (const auto& o : c.outcomes)
        if (o.applicable && !o.passed && o.rule && o.rule->kind == rules::Kind::constraint) why.push_back(o.rule->id);
      for (const auto& id : why) ++dropped_by[id];
      spdlog::trace("dropped {}: {}{}", c.label(), why.empty() ? "no rule passed it" : util::join(why, ", "),
                    c.hint.empty() ? "" : " (" + c.hint + ")");
    }
    if (on(spdlog::level::trace))
      for (const auto& o : c.outcomes)
        if (o.rule)
          spdlog::trace("  {} {}: {} = {}{}", c.label(), o.rule->id, o.rule->metric, rules::to_string(o.value),
                        !o.applicable ? " (n/a)"
                        : o.passed    ? ""
                                      : " FAIL");
  }
  std::vector<std::string> counts;
  for (const auto& [id, n] : dropped_by) counts.push_back(fmt::format("{} {}", id, n));
  spdlog::debug("dropped {} candidates; failed constraints (a candidate may fail several): {}",
                rec.candidates.size() - accepted, counts.empty() ? "none" : util::join(counts, ", "));
}

}  // namespace gpuadvisor::cli
