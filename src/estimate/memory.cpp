#include "gpuadvisor/estimate/memory.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::estimate {
namespace {

// MLP inner width that one token's activations pass through: the dense MLP, or for MoE the
// routed experts it is sent to plus the shared experts.
double mlp_width(const catalog::Model& m) {
  if (!m.moe) return static_cast<double>(m.intermediate);
  return static_cast<double>(m.moe->experts_per_token + m.moe->shared_experts) *
         static_cast<double>(m.moe->expert_intermediate);
}

// LoRA adapter parameters: r x (d_in + d_out) per adapted matrix (Hu et al. 2021, section 4.1).
double adapter_params(const Workload& w) {
  const auto& m = w.model;
  if (!m.is_transformer()) return 0;
  const double h = static_cast<double>(m.hidden), r = w.lora_rank;
  const double qd = static_cast<double>(m.heads) * static_cast<double>(m.head_dim);
  const double kvd = static_cast<double>(m.kv_heads) * static_cast<double>(m.head_dim);
  const double i = m.moe ? static_cast<double>(m.moe->expert_intermediate) : static_cast<double>(m.intermediate);
  const double experts = m.moe ? m.moe->experts + m.moe->shared_experts : 1;
  double attn = 0, mlp = 0;
  for (const auto& t : w.lora_targets) {
    if (t == "q") attn += r * (h + qd);
    else if (t == "k" || t == "v") attn += r * (h + kvd);
    else if (t == "o") attn += r * (qd + h);
    else if ((t == "gate" && m.gated_mlp) || t == "up" || t == "down") mlp += r * (h + i);
  }
  const int layers = m.layers + m.encoder_layers;
  return layers * (attn + mlp * experts);
}

}  // namespace

double MemoryEstimate::line(const std::string& id) const {
  for (const auto& l : lines)
    if (l.id == id) return l.per_gpu_bytes;
  return 0;
}

double kv_bytes_per_element(const std::string& kv) {
  if (kv == "fp32") return 4;
  if (kv == "fp8" || kv == "int8") return 1;
  if (kv == "int4") return 0.5;
  return 2;
}

double kv_bytes_per_token(const catalog::Model& m, const std::string& kv_precision) {
  if (!m.is_transformer() || m.kind == "encoder" || m.kind == "vision") return 0;
  const double e = kv_bytes_per_element(kv_precision);
  if (m.mla) return static_cast<double>(m.layers) * (m.mla->kv_lora_rank + m.mla->qk_rope_head_dim) * e;
  // 2 (K and V) x layers x kv_heads x head_dim x bytes; encoder-decoders also cache cross-attention.
  double per = 2.0 * m.layers * m.kv_heads * static_cast<double>(m.head_dim) * e;
  return m.kind == "encoder-decoder" ? 2 * per : per;
}

double activation_bytes_per_layer(const catalog::Model& m, double s, double b, bool flash) {
  const double h = static_cast<double>(m.hidden);
  const double qd = static_cast<double>(m.heads) * static_cast<double>(m.head_dim);
  const double kvd = static_cast<double>(m.kv_heads) * static_cast<double>(m.head_dim);
  const double i = mlp_width(m);
  // Attention block: QKV input 2h, Q 2qd, K and V 2kvd each, output-projection input 2qd, dropout
  // mask h (GPT: 11 sbh). Two layer norms 4h. MLP: input 2h, dropout mask h, and the inner
  // activations: plain 2i (activation input) + 2i (second linear input); gated 2i gate + 2i up +
  // 2i product (GPT with i = 4h: 19 sbh). Scores, softmax and dropout: 5 a s^2 b.
  double per_token = 2 * h + 2 * qd + 4 * kvd + 2 * qd + h + 4 * h + 2 * h + h + (m.gated_mlp ? 6 : 4) * i;
  double bytes = s * b * per_token;
  if (!flash) bytes += 5.0 * m.heads * s * s * b;
  return bytes;
}

MemoryEstimate estimate_memory(const Workload& w, const catalog::Efficiency& eff, bool explain) {
  MemoryEstimate out;
  const auto& m = w.model;
  const auto& f = w.format();
  const double P = m.params;
  const double t = w.tp, p = w.pp, d = w.dp(), N = w.gpus;
  const double shard = t * p;
  const bool training = is_training(w.task);
  const bool full = w.task == Task::train;
  const bool fp32_training = full && f.bits >= 32;
  // Formulas are built only when asked for: `formula` is a callable returning the text.
  auto add = [&](std::string id, std::string label, double per_gpu, auto&& formula) {
    if (per_gpu <= 0) return;
    out.lines.push_back({std::move(id), std::move(label), per_gpu, per_gpu * N, explain ? std::string(formula()) : std::string()});
  };
  const std::string split = shard > 1 ? fmt::format(" / {} (tp x pp)", shard) : "";

  // Weights. Full training keeps 16-bit (or fp32) weights; inference and LoRA bases keep the
  // storage format, with embeddings and LM head in 16-bit where the quantizer leaves them so.
  if (m.tensors && !full) {
    add("weights", "weights", m.tensors->bytes / shard, [&] { return std::string(fmt::format("{} bytes of {} read from {}{}", util::format_number(m.tensors->bytes), m.tensors->dtypes,
                    m.tensors->origin, split)); });
  } else if (full) {
    double bytes = fp32_training ? 4 : 2;
    double z = w.zero >= 3 ? d : 1;
    add("weights", "weights", P * bytes / shard / z, [&] { return std::string(fmt::format("{} params x {} bytes{}{}", util::format_count(P), bytes, split, z > 1 ? fmt::format(" / {} (ZeRO-3)", d) : "")); });
  } else {
    const double e16 = f.embeddings_16bit ? std::min(P, m.embedding_params()) : 0;
    const double z = w.zero >= 3 ? d : 1;
    double payload = (P - e16) * f.payload_bits / 8 + e16 * 2;
    std::string formula = fmt::format("{} params x {} bits / 8", util::format_count(P - e16), f.payload_bits);
    if (e16 > 0) formula += fmt::format(" + {} embedding params x 2 bytes", util::format_count(e16));
    add("weights", "weights", payload / shard / z, [&] { return std::string(formula + split); });
    double consts = (P - e16) * (f.bits - f.payload_bits) / 8;
    add("quantization_constants", "quantization scales", consts / shard / z, [&] { return std::string(fmt::format("{} params x {:.4g} bits / 8 ({})", util::format_count(P - e16), f.bits - f.payload_bits, f.note)); });
  }

  // Training state (ZeRO stages 1/2/3 divide optimizer / +gradients / +weights by the
  // data-parallel degree; Rajbhandari et al. 2020).
  const auto* opt = find_optimizer(w.optimizer);
  if (full) {
    double gbytes = fp32_training ? 4 : 2;
    double zg = w.zero >= 2 ? d : 1, zo = w.zero >= 1 ? d : 1;
    add("gradients", "gradients", P * gbytes / shard / zg, [&] { return std::string(fmt::format("{} params x {} bytes{}{}", util::format_count(P), gbytes, split, zg > 1 ? fmt::format(" / {} (ZeRO-2)", d) : "")); });
    if (!fp32_training)
      add("master_weights", "fp32 master weights", P * opt->master_bytes / shard / zo, [&] { return std::string(fmt::format("{} params x {} bytes{}{}", util::format_count(P), opt->master_bytes, split,
                      zo > 1 ? fmt::format(" / {} (ZeRO-1)", d) : "")); });
    add("optimizer_state", "optimizer state", P * opt->state_bytes / shard / zo, [&] { return std::string(fmt::format("{} params x {} bytes ({}: {}){}{}", util::format_count(P), opt->state_bytes, opt->id, opt->note, split,
                    zo > 1 ? fmt::format(" / {} (ZeRO-1)", d) : "")); });
  }
  if (w.task == Task::lora || w.task == Task::qlora) {
    double a = adapter_params(w);
    double per = 4 + 4 + opt->state_bytes;  // fp32 weights and gradients + optimizer state
    add("adapters", "LoRA adapters + gradients + optimizer", a * per / shard, [&] { return std::string(fmt::format("{} adapter params (rank {} on {}) x {} bytes (fp32 weights, gradients, {} state)", util::format_count(a),
                    w.lora_rank, util::join(w.lora_targets, ","), per, opt->id)); });
  }

  // Activations.
  const double s = static_cast<double>(w.seq_len), b = static_cast<double>(w.batch);
  if (m.is_transformer()) {
    const int layers = m.layers + m.encoder_layers;
    if (training) {
      const auto& act = eff.get("activation-memory-factor");
      const double scale = (fp32_training ? 2.0 : 1.0) * act.typical;
      double per_gpu;
      std::string formula;
      if (w.checkpointing == "full") {
        // Full recomputation keeps each layer's input (2sbh in 16-bit) plus one layer's working set.
        double one = activation_bytes_per_layer(m, s, b, w.flash_attention);
        per_gpu = (layers * 2.0 * s * b * static_cast<double>(m.hidden) + one) * scale / t;
        formula = fmt::format("full recomputation: {} layers x 2sbh + one layer's activations", layers);
      } else {
        bool no_scores = w.flash_attention || w.checkpointing == "selective";
        per_gpu = layers * activation_bytes_per_layer(m, s, b, no_scores) * scale / t;
        formula = fmt::format("{} layers x sbh x (34-term{}), Korthikanti et al. 2022", layers,
                              no_scores ? ", no 5as/h scores: flash attention or selective recomputation" : " + 5as/h");
      }
      formula += fmt::format(" x {:.2f} calibration", act.typical);
      if (t > 1) formula += fmt::format(" / {} (tensor + sequence parallel)", t);
      if (p > 1) formula += "; the first pipeline stage holds pp micro-batches of L/pp layers";
      add("activations", "activations", per_gpu, [&] { return std::string(formula); });
      if (m.kind == "decoder" || m.kind == "encoder-decoder") {
        add("logits", "output logits (loss)", s * b * static_cast<double>(m.vocab) * 6 / t, [&] { return std::string(fmt::format("s x b x vocab {} x (2 bytes + 4-byte fp32 copy for the loss){}", m.vocab, t > 1 ? " / tp" : "")); });
      }
    } else {
      // Inference keeps no activations between layers; the peak is one layer's working set for
      // a prefill chunk (vLLM and llama.cpp process prompts in chunks of ~2,048 tokens).
      double chunk = std::min(s, 2048.0);
      double per_tok = 2.0 * (4.0 * static_cast<double>(m.hidden) + (m.gated_mlp ? 3 : 2) * mlp_width(m));
      double scores = w.flash_attention ? 0 : 2.0 * m.heads * chunk * s;
      add("activations", "activations (prefill working set)", (b * chunk * per_tok + b * scores) / t, [&] { return std::string(fmt::format("b x min(s, 2048) x 2 bytes x (4h + {}i){}", m.gated_mlp ? 3 : 2, w.flash_attention ? "" : " + attention scores")); });
    }
  } else if (m.vision) {
    if (m.vision->activation_bytes_per_image) {
      double per = *m.vision->activation_bytes_per_image * b * (training ? 1.0 : 0.5);
      add("activations", "activations", per, [&] { return std::string(fmt::format("{} per image x batch {}", util::format_bytes(*m.vision->activation_bytes_per_image), w.batch)); });
    } else {
      out.activations_known = false;
      out.assumptions.push_back(fmt::format(
          "activation memory of {} is not included: no published per-image figure ({})", m.name,
          m.vision->activation_note.empty() ? "unknown" : m.vision->activation_note));
    }
  }

  // KV cache (inference): 2 x layers x kv_heads x head_dim x context x batch x bytes.
  if (!training && m.is_transformer()) {
    double per_token = kv_bytes_per_token(m, w.kv_precision);
    double per_gpu = per_token * s * b / p;
    if (!m.mla && t > 1) per_gpu *= std::ceil(static_cast<double>(m.kv_heads) / t) / m.kv_heads;  // heads split, replicated when kv_heads < tp
    add("kv_cache", "KV cache", per_gpu, [&] { return std::string(m.mla ? fmt::format("MLA latent: layers x (kv_lora_rank + rope dim) x {} bytes x {} tokens x batch {}",
                            kv_bytes_per_element(w.kv_precision), w.seq_len, w.batch)
              : fmt::format("2 x {} layers x {} kv heads x {} head dim x {} bytes x {} tokens x batch {}{}", m.layers,
                            m.kv_heads, m.head_dim, kv_bytes_per_element(w.kv_precision), w.seq_len, w.batch,
                            shard > 1 ? " / tp x pp" : "")); });
  }

  // Overheads: CUDA context and framework workspace per GPU; allocator fragmentation reserve.
  double allocated = 0;
  for (const auto& l : out.lines) allocated += l.per_gpu_bytes;
  const auto& ctx = eff.get("cuda-context-bytes");
  add("cuda_context", "CUDA context + framework", ctx.typical, [&] { return std::string(fmt::format("measured per GPU (range {} to {})", util::format_bytes(ctx.low), util::format_bytes(ctx.high))); });
  const auto& frag = eff.get("allocator-fragmentation");
  add("fragmentation", "allocator fragmentation reserve", allocated * frag.typical, [&] { return std::string(fmt::format("{:.0f}% of allocated bytes (measured {:.0f}%..{:.0f}%)", frag.typical * 100, frag.low * 100, frag.high * 100)); });

  for (const auto& l : out.lines) {
    out.per_gpu_bytes += l.per_gpu_bytes;
    out.total_bytes += l.total_bytes;
  }
  out.assumptions.insert(out.assumptions.begin(), w.assumptions.begin(), w.assumptions.end());
  return out;
}

FitResult fit(const Workload& w, const catalog::Gpu& gpu, const catalog::Efficiency& eff, double headroom) {
  FitResult r;
  r.capacity_bytes = gpu.memory_bytes;
  r.usable_bytes = gpu.memory_bytes * (1 - headroom);
  auto est = estimate_memory(w, eff, false);
  double need = est.per_gpu_bytes;
  r.fits = need <= r.usable_bytes;
  r.activations_unknown = !est.activations_known;
  r.headroom_bytes = r.usable_bytes - need;
  auto fits_with = [&](long long batch, long long seq) {
    Workload x = w;
    x.batch = batch;
    x.seq_len = seq;
    return estimate_memory(x, eff, false).per_gpu_bytes <= r.usable_bytes;
  };
  // Memory grows with batch and sequence length, so binary search finds the largest that fit.
  auto largest = [&](long long lo, long long hi, auto&& ok) -> std::optional<long long> {
    if (!ok(lo)) return std::nullopt;
    while (lo < hi) {
      long long mid = lo + (hi - lo + 1) / 2;
      if (ok(mid)) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  // Without an activation figure memory does not grow with the batch: no largest batch to give.
  if (!r.activations_unknown) r.max_batch = largest(1, 1 << 20, [&](long long b) { return fits_with(b, w.seq_len); });
  if (w.model.is_transformer()) {
    long long cap = w.model.max_context > 0 ? w.model.max_context : (1LL << 24);
    r.max_seq_len = largest(1, cap, [&](long long s) { return fits_with(w.batch, s); });
    r.max_seq_capped = r.max_seq_len && *r.max_seq_len == cap && w.model.max_context > 0;
  }
  return r;
}

namespace {

Workload plan_layout_search(const Workload& w, const WorkloadSet& set, const catalog::Gpu& gpu,
                            const catalog::Efficiency& eff, double usable) {
  std::vector<std::string> ckpts = set.checkpointing ? std::vector<std::string>{w.checkpointing}
                                                     : std::vector<std::string>{w.checkpointing, "full"};
  std::vector<int> tps = set.tp ? std::vector<int>{w.tp} : std::vector<int>{1, 2, 4, 8};
  std::vector<int> zeros = set.zero ? std::vector<int>{w.zero} : std::vector<int>{0, 1, 2, 3};
  Workload last = w;
  for (const auto& c : ckpts) {
    for (int tp : tps) {
      for (int z : zeros) {
        Workload x = w;
        x.checkpointing = c;
        x.tp = tp;
        x.zero = z;
        if (!check_layout(x).empty()) continue;
        if (z > 0 && x.dp() < 2) continue;  // ZeRO shards across data-parallel replicas
        if (c == w.checkpointing) {  // when nothing fits, keep the user's recomputation
          last = x;
          last.assumptions.push_back(fmt::format(
              "layout: no layout of {} GPUs fits {}; shown with the most memory-saving sharding tried ({}{})", x.gpus, gpu.id,
              z ? fmt::format("ZeRO-{}", z) : "plain data parallel", tp > 1 ? fmt::format(", tensor parallel {}", tp) : ""));
        }
        if (estimate_memory(x, eff, false).per_gpu_bytes <= usable) {
          x.assumptions.push_back(fmt::format(
              "layout: {}{}{} on {} GPUs: the first that fits {} (set --zero, --tp, --checkpointing to choose)",
              z ? fmt::format("ZeRO-{}", z) : "plain data parallel", tp > 1 ? fmt::format(", tensor parallel {}", tp) : "",
              c == "full" ? ", full activation recomputation" : "", x.gpus, gpu.id));
          return x;
        }
      }
    }
  }
  return last;
}

}  // namespace

Workload plan_layout(const Workload& w, const WorkloadSet& set, const catalog::Gpu& gpu, const catalog::Efficiency& eff,
                     double headroom) {
  const double usable = gpu.memory_bytes * (1 - headroom);
  Workload base = w;
  apply_gpu_defaults(base, set, gpu);
  if (!is_training(base.task) || estimate_memory(base, eff, false).per_gpu_bytes <= usable) return base;
  return plan_layout_search(base, set, gpu, eff, usable);
}

util::Json to_json(const MemoryEstimate& m, bool detail) {
  util::Json j;
  for (const auto& l : m.lines) j[l.id + "_bytes"] = util::json_bytes(l.total_bytes);
  j["total_bytes"] = util::json_bytes(m.total_bytes);
  j["per_gpu_total_bytes"] = util::json_bytes(m.per_gpu_bytes);
  j["activations_known"] = m.activations_known;
  if (!detail) return j;
  util::Json arr = util::Json::array();
  for (const auto& l : m.lines) {
    util::Json x;
    x["id"] = l.id;
    x["label"] = l.label;
    x["bytes"] = util::json_bytes(l.total_bytes);
    x["per_gpu_bytes"] = util::json_bytes(l.per_gpu_bytes);
    x["formula"] = l.formula;
    arr.push_back(x);
  }
  j["breakdown"] = arr;
  j["assumptions"] = m.assumptions;
  return j;
}

}  // namespace gpuadvisor::estimate
