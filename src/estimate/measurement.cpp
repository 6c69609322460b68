#include "gpuadvisor/estimate/measurement.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/util/error.h"
#include "gpuadvisor/util/text.h"

namespace gpuadvisor::estimate {
namespace {

// Training and inference frameworks that are not inference engines: the record's engine names
// how it was run, and for training it does not enter the estimate.
bool inference_engine(std::string_view e) { return catalog::kEngineNames.parse(e).has_value(); }

std::string text_of(const util::Fields& f, const std::string& key) {
  if (!f.has(key)) return {};
  const auto& v = f.raw(key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number()) return fmt::format("{:g}", v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  f.fail(key, "expected a string or a number, got " + util::json_snippet(v));
}

// How a factor of each kind is fitted: its bounds (utilisations cannot pass 1, latencies stay
// within what a GPU step can take) and the neutral value every fit starts from. The scaling
// factors are not among them: the training records at 8 or more GPUs all share one scaling value,
// which they cannot tell apart from MFU.
struct KindFit {
  std::string_view kind;
  double lo, hi, start;
};
constexpr KindFit kKindFits[] = {
    {"mfu", 0.02, 1.0, 0.5},
    {"bandwidth_efficiency", 0.02, 1.0, 0.5},
    {"multiplier", 0.1, 2.0, 1.0},
    {"exponent", 0.005, 1.5, 0.1},
    {"seconds_per_layer", 1e-7, 1e-2, 1e-5},
    {"seconds", 1e-7, 1e-2, 1e-5},
    {"seconds_per_pass", 1e-6, 0.1, 1e-3},
};

const KindFit* kind_fit(std::string_view kind) {
  for (const auto& k : kKindFits)
    if (k.kind == kind) return &k;
  return nullptr;
}

double loss(const std::vector<const Prepared*>& records, const catalog::Efficiency& eff) {
  double sum = 0;
  for (const auto* p : records)
    if (auto got = predict(*p, eff)) {
      const double e = std::log(got->value / p->m->expected);
      sum += e * e;
    }
  return sum;
}

// Bytes per unit of a memory figure, as the record states it (after deciding whether the source's
// "GB" is GiB).
constexpr std::pair<std::string_view, double> kMemoryUnits[] = {
    {"GB", 1e9}, {"GiB", 1073741824.0}, {"MB", 1e6}, {"MiB", 1048576.0}};

template <class E, std::size_t N>
E parse_field(const util::Fields& f, const std::string& key, const util::Names<E, N>& names, E fallback) {
  const auto text = f.opt_str(key);
  if (!text) return fallback;
  auto v = names.parse(*text);
  if (!v) f.fail(key, names.expected(*text));
  return *v;
}

// A memory record: the whole workload of the run (recipe, optimizer, adapters, offload, engine),
// and what its figure counts.
void read_memory_fields(const util::Fields& f, Measurement& m) {
  auto& in = m.in;
  using Field = std::string WorkloadInput::*;
  static constexpr std::pair<const char*, Field> kFields[] = {
      {"batch", &WorkloadInput::batch},
      {"seq_len", &WorkloadInput::seq_len},
      {"tp", &WorkloadInput::tp},
      {"pp", &WorkloadInput::pp},
      {"zero", &WorkloadInput::zero},
      {"checkpointing", &WorkloadInput::checkpointing},
      {"recipe", &WorkloadInput::recipe},
      {"optimizer", &WorkloadInput::optimizer},
      {"master_weights", &WorkloadInput::master_weights},
      {"optimizer_in_backward", &WorkloadInput::optimizer_in_backward},
      {"chunked_loss", &WorkloadInput::chunked_loss},
      {"activation_offload", &WorkloadInput::activation_offload},
      {"lora_rank", &WorkloadInput::lora_rank},
      {"lora_targets", &WorkloadInput::lora_targets},
      {"offload", &WorkloadInput::offload},
      {"gpu_layers", &WorkloadInput::gpu_layers},
      {"host_bandwidth_gbs", &WorkloadInput::host_bandwidth},
  };
  for (const auto& [key, field] : kFields) in.*field = text_of(f, key);
  if (const std::string engine = text_of(f, "engine"); inference_engine(engine)) in.engine = engine;
  const bool training = m.kind == MeasureKind::train_memory;
  if (training && in.task == "inference") f.fail("task", "a train_memory record needs task train, lora or qlora");
  if (!training && in.task != "inference" && !in.task.empty())
    f.fail("task", "an inference_memory record needs task inference");
  if (!training) {
    // The context a generation ends at: prompt and every generated token.
    m.prompt_tokens = f.opt_integer("prompt_tokens", 0, 100'000'000).value_or(0);
    m.generated_tokens = f.opt_integer("generated_tokens", 0, 100'000'000).value_or(0);
    if (m.prompt_tokens + m.generated_tokens > 0) in.seq_len = std::to_string(m.prompt_tokens + m.generated_tokens);
  }
  auto& mm = m.memory;
  const std::string unit = f.str("unit");
  const auto* u =
      std::find_if(std::begin(kMemoryUnits), std::end(kMemoryUnits), [&](const auto& x) { return x.first == unit; });
  if (u == std::end(kMemoryUnits))
    f.fail("unit", fmt::format("expected GB, GiB, MB or MiB, got {}", util::quote(unit)));
  mm.unit_bytes = u->second;
  mm.counts = parse_field(f, "counts", kMemoryCountsNames, MemoryCounts::allocated);
  if (f.opt_bool("states_only").value_or(false)) mm.part = MemoryPart::states;
  if (f.opt_bool("weights_only").value_or(false)) mm.part = MemoryPart::weights;
  if (f.opt_bool("kv_only").value_or(false)) mm.part = MemoryPart::kv_cache;
  const std::string per = f.opt_str("per").value_or("gpu");
  if (per != "gpu" && per != "job") f.fail("per", fmt::format("expected gpu or job, got {}", util::quote(per)));
  mm.per_job = per == "job";
}

// The estimator's figure for a memory record, in the record's unit, and the factors it used.
std::optional<Predicted> predict_memory(const Prepared& p, const catalog::Efficiency& eff) {
  using catalog::FactorId;
  const auto& mm = p.m->memory;
  const auto b = memory_bytes(p.w, eff);
  auto sum = [&](std::initializer_list<MemoryLineId> ids) {
    double s = 0;
    for (auto id : ids) s += b[id];
    return s;
  };
  Predicted out;
  double bytes = 0;
  switch (mm.part) {
    case MemoryPart::weights:
      bytes = sum({MemoryLineId::weights, MemoryLineId::quantization_constants});
      break;
    case MemoryPart::kv_cache:
      bytes = b[MemoryLineId::kv_cache];
      break;
    case MemoryPart::states:
      bytes = sum({MemoryLineId::weights, MemoryLineId::quantization_constants, MemoryLineId::gradients,
                   MemoryLineId::master_weights, MemoryLineId::optimizer_state, MemoryLineId::adapters});
      break;
    case MemoryPart::all:
      if (!b.activations_known) return std::nullopt;
      bytes = b.per_gpu_bytes;
      if (mm.counts != MemoryCounts::device) bytes -= b[MemoryLineId::cuda_context];
      if (mm.counts == MemoryCounts::allocated) bytes -= b[MemoryLineId::fragmentation];
      if (is_training(p.w.task) && b[MemoryLineId::activations] > 0)
        out.factors.push_back(catalog::factor_name(FactorId::activation_memory));
      if (is_training(p.w.task) && b[MemoryLineId::logits] > 0)
        out.factors.push_back(catalog::factor_name(FactorId::logits_memory));
      break;
  }
  if (mm.per_job) bytes *= p.w.gpus;
  out.value = out.low = out.high = bytes / mm.unit_bytes;
  if (!(out.value > 0) || !std::isfinite(out.value)) return std::nullopt;
  return out;
}

}  // namespace

catalog::Efficiency with_typical(const catalog::Efficiency& eff, const std::string& id, double v) {
  catalog::Factor f = eff.get(id);
  f.typical = v;
  f.low = std::min(f.low, v);
  f.high = std::max(f.high, v);
  return eff.with(std::move(f));
}

std::vector<std::string> speed_factor_ids(const catalog::Efficiency& eff) {
  std::vector<std::string> ids;
  for (const auto& [id, f] : eff.all())
    if (kind_fit(f.kind)) ids.push_back(id);
  return ids;
}

catalog::Efficiency neutral_start(const catalog::Efficiency& eff, const std::vector<std::string>& ids) {
  catalog::Efficiency out = eff;
  for (const auto& id : ids)
    if (const auto* k = kind_fit(eff.get(id).kind)) out = with_typical(out, id, k->start);
  return out;
}

std::vector<Measurement> read_measurements(const util::JsonDoc& doc) {
  const auto& root = doc.root();
  if (!root.is_array()) throw Error(fmt::format("{}: expected an array of measurement records", doc.where("")));
  std::vector<Measurement> out;
  for (std::size_t i = 0; i < root.size(); ++i) {
    util::Fields f(doc, root[i], "/" + std::to_string(i), "");
    if (f.opt_bool("usable") == false) continue;
    Measurement m;
    m.id = f.str("id");
    m.where = doc.where(f.pointer("id"));
    const std::string kind = f.str("kind");
    auto k = kMeasureKindNames.parse(kind);
    if (!k)
      f.fail("kind", fmt::format("expected one of {}, got {}{}", kMeasureKindNames.join_or(), util::quote(kind),
                                 kMeasureKindNames.suggest(kind)));
    m.kind = *k;
    m.expected = f.num("expected");
    if (!(m.expected > 0)) f.fail("expected", "must be positive");
    m.gpu = f.str("gpu");
    auto& in = m.in;
    in.model = f.str("model");
    in.task = text_of(f, "task");
    in.precision = text_of(f, "precision");
    in.kv_precision = text_of(f, "kv_precision");
    in.gpus = text_of(f, "gpus");
    const bool training = in.task != "inference";
    const bool vision = m.kind == MeasureKind::images || m.kind == MeasureKind::diffusion_steps;
    if (is_memory(m.kind)) {
      read_memory_fields(f, m);
    } else if (vision) {
      in.batch = text_of(f, "batch");
      in.steps = text_of(f, "steps");
      m.image_size = f.opt_num("image_size").value_or(0);
    } else if (training) {
      in.batch = text_of(f, "batch");
      in.seq_len = text_of(f, "seq_len");
      in.tp = text_of(f, "tp");
      in.pp = text_of(f, "pp");
      in.zero = text_of(f, "zero");
      in.checkpointing = text_of(f, "checkpointing");
    } else {
      const std::string engine = text_of(f, "engine");
      if (inference_engine(engine)) in.engine = engine;
      in.batch = text_of(f, "batch");
      m.prompt_tokens = f.opt_integer("prompt_tokens", 0, 100'000'000).value_or(0);
      m.generated_tokens = f.opt_integer("generated_tokens", 0, 100'000'000).value_or(0);
      // Decode reads the KV cache at the mean context: the prompt and half the generated tokens.
      long long ctx = m.prompt_tokens + m.generated_tokens / 2;
      if (m.kind == MeasureKind::prefill) ctx = m.prompt_tokens;
      const std::string seq = text_of(f, "seq_len");
      if (ctx > 0)
        in.seq_len = std::to_string(ctx);
      else if (!seq.empty())
        in.seq_len = seq;
      else
        in.seq_len = "256";
      if (const std::string tp = text_of(f, "tp"); !tp.empty()) in.tp = tp;
      if (const std::string sm = text_of(f, "split_mode"); !sm.empty()) in.split = sm;
      in.gpu_layers = text_of(f, "gpu_layers");
      in.host_bandwidth = text_of(f, "host_bandwidth_gbs");
    }
    const std::string fa = text_of(f, "flash_attention");
    if (!fa.empty()) in.flash_attention = fa;
    out.push_back(std::move(m));
  }
  return out;
}

Prepared prepare(const Measurement& m, const catalog::Catalog& cat, const catalog::ModelSet& models) {
  Prepared p;
  p.m = &m;
  p.gpu = cat.find(m.gpu);
  if (!p.gpu) {
    p.skip = fmt::format("GPU {} is not in the catalog", util::quote(m.gpu));
    return p;
  }
  WorkloadSet set;
  try {
    p.w = make_workload(m.in, models, &set);
  } catch (const Error& e) {
    p.skip = e.what();
    return p;
  }
  if (m.kind == MeasureKind::decode_total && m.in.batch.empty()) {
    p.skip = "throughput at the engine's own batch size (the record states no concurrency)";
    return p;
  }
  if (m.image_size > 0 && p.w.model.vision && p.w.model.vision->image_size &&
      m.image_size != *p.w.model.vision->image_size) {
    p.skip = fmt::format("run at {} pixels; {}'s FLOPs are published at {}", m.image_size, p.w.model.name,
                         *p.w.model.vision->image_size);
    return p;
  }
  apply_gpu_defaults(p.w, set, *p.gpu);
  return p;
}

std::optional<Predicted> predict(const Prepared& p, const catalog::Efficiency& eff) {
  if (!p.skip.empty()) return std::nullopt;
  if (is_memory(p.m->kind)) return predict_memory(p, eff);
  const auto perf = estimate_perf(p.w, *p.gpu, eff, false);
  if (!perf.available) return std::nullopt;
  Predicted out;
  out.factors = perf.factors;
  auto set = [&](const Range& r) {
    out.value = r.typical;
    out.low = r.low;
    out.high = r.high;
  };
  const double gpus = p.w.gpus;
  switch (p.m->kind) {
    case MeasureKind::decode: {
      const long long in = p.m->prompt_tokens, gen = p.m->generated_tokens;
      if (in > 1 && gen > 0 && perf.compute_known) {
        // A timed generate() counts the prompt's prefill in its time.
        auto rate = [&](double prefill, double decode) { return gen / (in / prefill + gen / decode); };
        out.value = rate(perf.prefill_tokens_per_s.typical, perf.decode_tokens_per_s.typical);
        out.low = rate(perf.prefill_tokens_per_s.low, perf.decode_tokens_per_s.low);
        out.high = rate(perf.prefill_tokens_per_s.high, perf.decode_tokens_per_s.high);
      } else {
        set(perf.decode_tokens_per_s);
      }
      break;
    }
    case MeasureKind::decode_total:
      set(perf.decode_total_tokens_per_s);
      break;
    case MeasureKind::images:
      if (!perf.images_per_s) return std::nullopt;
      set(*perf.images_per_s);
      break;
    case MeasureKind::diffusion_steps:
      if (!perf.steps_per_s) return std::nullopt;
      set(*perf.steps_per_s);
      break;
    case MeasureKind::prefill:
      if (!perf.compute_known) return std::nullopt;
      set(perf.prefill_tokens_per_s);
      break;
    case MeasureKind::train_per_gpu:
      set(perf.tokens_per_s.scaled(1 / gpus));
      break;
    case MeasureKind::train_memory:
    case MeasureKind::inference_memory:
      return std::nullopt;  // predict_memory
    case MeasureKind::train_mfu:
    case MeasureKind::train_tflops: {
      if (!perf.compute_known || perf.flops_per_token <= 0) return std::nullopt;
      // MFU counts the model's FLOPs (no recomputation); TFLOP/s as Megatron publishes them count
      // the recomputed forward pass too.
      const double model_flops = perf.flops_per_token - perf.recompute_flops_per_token;
      const double per =
          p.m->kind == MeasureKind::train_mfu ? model_flops / perf.peak_flops : perf.flops_per_token / 1e12;
      set(perf.tokens_per_s.scaled(per / gpus));
      break;
    }
  }
  if (!(out.value > 0) || !std::isfinite(out.value)) return std::nullopt;
  return out;
}

catalog::Efficiency fit_factors(const std::vector<const Prepared*>& records, const catalog::Efficiency& start,
                                const std::vector<std::string>& factor_ids, std::vector<FactorFit>* fits) {
  catalog::Efficiency eff = start;
  // Which records each factor moves.
  std::map<std::string, std::vector<const Prepared*>, std::less<>> uses;
  for (const auto* p : records)
    if (auto got = predict(*p, eff))
      for (auto id : got->factors) uses[std::string(id)].push_back(p);
  std::vector<std::string> active;
  for (const auto& id : factor_ids)
    if (auto it = uses.find(id); it != uses.end() && static_cast<int>(it->second.size()) >= kMinRecordsPerFactor)
      active.push_back(id);
  constexpr double kGolden = 0.6180339887498949;
  for (int sweep = 0; sweep < 6; ++sweep) {
    double moved = 0;
    for (const auto& id : active) {
      const auto& subset = uses[id];
      const auto* k = kind_fit(eff.get(id).kind);
      const double lo_v = k ? k->lo : 0.02, hi_v = k ? k->hi : 1.0;
      auto at = [&](double x) { return loss(subset, with_typical(eff, id, std::exp(x))); };
      // A coarse scan first (the loss over one factor need not have a single dip: an additive
      // per-step term is flat where it is negligible), then golden section around the best point.
      constexpr int kScan = 48;
      const double lo = std::log(lo_v), hi = std::log(hi_v), stepx = (hi - lo) / kScan;
      int best = 0;
      double best_loss = HUGE_VAL;
      for (int i = 0; i <= kScan; ++i)
        if (const double l = at(lo + i * stepx); l < best_loss) {
          best_loss = l;
          best = i;
        }
      double a = std::max(lo, lo + (best - 1) * stepx), b = std::min(hi, lo + (best + 1) * stepx);
      double c = b - kGolden * (b - a), d = a + kGolden * (b - a);
      double fc = at(c), fd = at(d);
      for (int it = 0; it < 24; ++it) {
        if (fc < fd) {
          b = d;
          d = c;
          fd = fc;
          c = b - kGolden * (b - a);
          fc = at(c);
        } else {
          a = c;
          c = d;
          fc = fd;
          d = a + kGolden * (b - a);
          fd = at(d);
        }
      }
      const double before = eff.get(id).typical;
      const double after = std::exp((a + b) / 2);
      moved = std::max(moved, std::fabs(std::log(after / before)));
      eff = with_typical(eff, id, after);
    }
    if (moved < 1e-4) break;
  }
  if (fits)
    for (const auto& id : active)
      fits->push_back({id, start.get(id).typical, eff.get(id).typical, static_cast<int>(uses[id].size())});
  return eff;
}

std::string implausible(const Prepared& p) {
  const bool training = p.m->kind == MeasureKind::train_per_gpu || p.m->kind == MeasureKind::train_mfu ||
                        p.m->kind == MeasureKind::train_tflops;
  if (!training || !p.skip.empty()) return {};
  auto w = p.w;
  w.mfu = 1.0;  // the GPU's whole peak
  const auto perf = estimate_perf(w, *p.gpu, catalog::Efficiency::embedded(), false);
  if (!perf.available || !perf.compute_known) return {};
  const double at_peak = perf.tokens_per_s.typical / w.gpus;
  double measured = p.m->expected;
  if (p.m->kind == MeasureKind::train_mfu) measured = p.m->expected * at_peak;
  if (p.m->kind == MeasureKind::train_tflops) measured = p.m->expected * 1e12 / perf.flops_per_token;
  if (measured > at_peak * 1.02)
    return fmt::format(
        "{:.0f} tokens/s per GPU is more than {} reaches at its whole {} peak under the FLOP count "
        "used ({:.0f}): the source counts differently",
        measured, p.gpu->id, catalog::name(perf.compute), at_peak);
  return {};
}

int fold_of(const std::string& id, int folds) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : id) h = (h ^ c) * 1099511628211ull;
  return static_cast<int>(h % static_cast<std::uint64_t>(folds));
}

std::vector<HeldOut> cross_validate(const std::vector<const Prepared*>& records, const catalog::Efficiency& start,
                                    const std::vector<std::string>& factor_ids, int folds) {
  std::vector<HeldOut> out;
  for (int k = 0; k < folds; ++k) {
    std::vector<const Prepared*> train, test;
    for (const auto* p : records) (fold_of(p->m->id, folds) == k ? test : train).push_back(p);
    const auto eff = fit_factors(train, start, factor_ids);
    for (const auto* p : test)
      if (auto got = predict(*p, eff)) {
        got->factors.clear();  // they name factors of this fold's fit, which ends here
        out.push_back({p, *got, k});
      }
  }
  return out;
}

}  // namespace gpuadvisor::estimate
