#include "gpuadvisor/estimate/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "gpuadvisor/catalog/engine.h"
#include "gpuadvisor/util/json_sink.h"
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
    if (t == "q")
      attn += r * (h + qd);
    else if (t == "k" || t == "v")
      attn += r * (h + kvd);
    else if (t == "o")
      attn += r * (qd + h);
    else if ((t == "gate" && m.gated_mlp) || t == "up" || t == "down")
      mlp += r * (h + i);
  }
  const int layers = m.layers + m.encoder_layers;
  return layers * (attn + mlp * experts);
}

}  // namespace

double MemoryEstimate::line(MemoryLineId id) const {
  double bytes = 0;
  for (const auto& l : lines)
    if (l.id == id && !l.host) bytes += l.per_gpu_bytes;
  return bytes;
}

double MemoryEstimate::host_line(MemoryLineId id) const {
  double bytes = 0;
  for (const auto& l : lines)
    if (l.id == id && l.host) bytes += l.per_gpu_bytes;
  return bytes;
}

namespace {
MemoryLineId line_from(std::string_view id) {
  for (std::size_t i = 0; i < kMemoryLineCount; ++i)
    if (line_id(static_cast<MemoryLineId>(i)) == id) return static_cast<MemoryLineId>(i);
  throw Error(fmt::format("internal: no memory line {}", util::quote(id)), Exit::internal);
}
}  // namespace

double MemoryEstimate::line(std::string_view id) const { return line(line_from(id)); }
double MemoryEstimate::host_line(std::string_view id) const { return host_line(line_from(id)); }

// The names are compared as string_views: length first, then bytes (the std::string == literal
// of libstdc++ 12 measures the literal and compares bytes), and memory_inputs runs per candidate.
double kv_bytes_per_element(std::string_view kv) {
  if (kv == "fp32") return 4;
  if (kv == "fp8" || kv == "int8") return 1;
  if (kv == "int4") return 0.5;
  return 2;
}

double kv_bytes_per_token(const catalog::Model& m, std::string_view kv_precision) {
  using catalog::ModelKind;
  if (!m.is_transformer() || m.kind == ModelKind::encoder || m.kind == ModelKind::vision) return 0;
  const double e = kv_bytes_per_element(kv_precision);
  if (m.mla) return static_cast<double>(m.layers) * (m.mla->kv_lora_rank + m.mla->qk_rope_head_dim) * e;
  // 2 (K and V) x layers x kv_heads x head_dim x bytes; encoder-decoders also cache cross-attention.
  double per = 2.0 * m.layers * m.kv_heads * static_cast<double>(m.head_dim) * e;
  return m.kind == ModelKind::encoder_decoder ? 2 * per : per;
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

namespace {

// The matmuls of a transformer layer in forward order, each as (output width, parameters): q, k, v
// and the output projection, then gate, up and down (gated MLP) or up and down.
// No allocation: the memory estimate runs in the fit searches.
struct LayerMatmuls {
  std::array<std::pair<double, double>, 7> mm{};
  std::size_t count = 0;
};

LayerMatmuls layer_matmuls(const catalog::Model& m) {
  const double h = static_cast<double>(m.hidden);
  const double qd = static_cast<double>(m.heads) * static_cast<double>(m.head_dim);
  const double kvd = static_cast<double>(m.kv_heads) * static_cast<double>(m.head_dim);
  const double i = mlp_width(m);
  LayerMatmuls out;
  auto add = [&](double width, double params) { out.mm[out.count++] = {width, params}; };
  add(qd, h * qd);
  add(kvd, h * kvd);
  add(kvd, h * kvd);
  add(h, qd * h);
  if (m.gated_mlp) add(i, h * i);
  add(i, h * i);
  add(h, i * h);
  return out;
}

}  // namespace

double op_checkpoint_kept_per_token(const catalog::Model& m) {
  const double h = static_cast<double>(m.hidden);
  const double qd = static_cast<double>(m.heads) * static_cast<double>(m.head_dim);
  double kept = h + qd;  // the layer's input and the attention output
  const auto l = layer_matmuls(m);
  for (std::size_t k = 0; k < l.count; k += 2) kept += l.mm[k].first;  // the 1st, 3rd, ... matmul
  return kept;
}

double op_checkpoint_recomputed_params(const catalog::Model& m) {
  double again = 0;
  const auto l = layer_matmuls(m);
  for (std::size_t k = 1; k < l.count; k += 2) again += l.mm[k].second;  // the 2nd, 4th, ... matmul
  return static_cast<double>(m.layers + m.encoder_layers) * again;
}

double largest_tensor_params(const catalog::Model& m) {
  if (!m.is_transformer()) return m.params;
  const double h = static_cast<double>(m.hidden);
  const double i = m.moe ? static_cast<double>(m.moe->expert_intermediate) : static_cast<double>(m.intermediate);
  const double qd = static_cast<double>(m.heads) * static_cast<double>(m.head_dim);
  return std::max({static_cast<double>(m.vocab) * h, h * i, h * qd});
}

double layer_params(const catalog::Model& m) {
  const int layers = m.layers + m.encoder_layers;
  if (!m.is_transformer() || layers <= 0) return m.params;
  return std::max(0.0, m.params - m.embedding_params()) / layers;
}

namespace {

constexpr std::string_view kLineIds[kMemoryLineCount] = {"weights",         "quantization_constants",
                                                         "gradients",       "master_weights",
                                                         "optimizer_state", "adapters",
                                                         "activations",     "logits",
                                                         "kv_cache",        "gather_buffers",
                                                         "cuda_context",    "fragmentation"};

// What an estimate reads from the workload's names (precision, optimizer, recomputation, model
// kind, LoRA targets) and from the efficiency data, worked out once: a search evaluates many
// estimates of one workload, and the look-ups by name would cost more than the arithmetic.
struct MemoryInputs {
  const WeightFormat& format;
  const OptimizerInfo* optimizer;        ///< null when the workload names none (inference)
  const catalog::Factor* activation;     ///< training only
  const catalog::Factor* logits_factor;  ///< training only
  const catalog::Factor& context;
  const catalog::Factor& fragmentation;
  catalog::Checkpointing checkpointing;
  bool no_scores;         ///< no attention scores kept: flash attention or selective recomputation
  bool logits;            ///< the model has an LM head (decoder, encoder-decoder)
  double kv_per_token;    ///< kv_bytes_per_token at the workload's KV precision
  double adapter_params;  ///< LoRA and QLoRA only
};

MemoryInputs memory_inputs(const Workload& w, const catalog::Efficiency& eff) {
  using catalog::FactorId;
  const auto& m = w.model;
  const bool lora = w.task == Task::lora || w.task == Task::qlora;
  using catalog::ModelKind;
  return {w.format(),
          find_optimizer(w.optimizer),
          is_training(w.task) ? &eff.for_training_memory().get(FactorId::activation_memory) : nullptr,
          is_training(w.task) ? &eff.for_training_memory().get(FactorId::logits_memory) : nullptr,
          eff.get(FactorId::cuda_context),
          eff.get(FactorId::fragmentation),
          w.checkpointing,
          w.flash_attention || w.checkpointing == catalog::Checkpointing::selective,
          m.kind == ModelKind::decoder || m.kind == ModelKind::encoder_decoder,
          kv_bytes_per_token(m, w.kv_precision),
          lora ? adapter_params(w) : 0};
}

// The lines of the estimate, in order, for the workload at `batch` x `seq_len` (the searches vary
// those two without copying the workload). Each line with bytes goes to emit(id, label,
// per_gpu_bytes, formula), where `formula` is a callable that builds the line's text: the numbers
// are computed once, here, for both the explained estimate and the number-only one, and the text
// is only built when estimate_memory is asked to explain. Returns false when the activation
// memory is unknown (vision presets without a published figure).
template <class Emit>
bool memory_lines(const Workload& w, long long batch, long long seq_len, const MemoryInputs& in, Emit&& emit) {
  const auto& m = w.model;
  const auto& f = in.format;
  const double P = m.params;
  const double t = w.tp, p = w.pp, d = w.dp();
  const double shard = t * p;
  const bool training = is_training(w.task);
  const bool full = w.task == Task::train;
  const bool fp32_training = full && f.bits >= 32;
  double allocated = 0;  // the GPU lines so far, for the fragmentation reserve
  bool activations_known = true;
  auto add = [&](MemoryLineId id, std::string_view label, double per_gpu, auto&& formula) {
    if (per_gpu <= 0) return;
    allocated += per_gpu;
    emit(id, label, per_gpu, formula, false);
  };
  auto add_host = [&](MemoryLineId id, std::string_view label, double per_gpu, auto&& formula) {
    if (per_gpu > 0) emit(id, label, per_gpu, formula, true);
  };
  // A line on the GPU or, when `host`, in host RAM.
  auto put = [&](bool host, MemoryLineId id, std::string_view label, double per_gpu, auto&& formula) {
    if (host)
      add_host(id, label, per_gpu, formula);
    else
      add(id, label, per_gpu, formula);
  };
  auto split = [&] { return shard > 1 ? fmt::format(" / {} (tp x pp)", shard) : std::string(); };
  // llama.cpp -ngl N: N of the layers' weights and KV cache on the GPU, the rest in host RAM. Below
  // all the layers, the token embeddings and the output layer stay on the CPU too (llama.cpp
  // offloads the output layer only at -ngl n_layer + 1: "offloaded 20/33 layers to GPU").
  const bool partial = w.gpu_layers && m.layers > 0 && *w.gpu_layers < m.layers;
  const double on_gpu =
      w.gpu_layers && m.layers > 0 ? std::min(1.0, static_cast<double>(*w.gpu_layers) / m.layers) : 1.0;
  // llama.cpp --cpu-moe: the routed experts' weights in host RAM, everything else on the GPU.
  const double routed_share = w.cpu_experts && count_params(m) > 0
                                  ? std::min(1.0, catalog::routed_expert_params(m) / catalog::count_params(m))
                                  : 0.0;
  const double weights_on_gpu = w.cpu_experts      ? 1 - routed_share
                                : partial && P > 0 ? on_gpu * std::max(0.0, P - std::min(P, m.embedding_params())) / P
                                                   : on_gpu;
  auto layers_note = [&] {
    return w.gpu_layers ? fmt::format(" x {}/{} layers on the GPU (--gpu-layers){}", *w.gpu_layers, m.layers,
                                      partial ? ", embeddings and output layer on the CPU" : "")
                        : std::string();
  };
  auto weights_note = [&] {
    return w.cpu_experts ? fmt::format(" x {:.1f}% on the GPU: the routed experts on the CPU (--cpu-experts)",
                                       (1 - routed_share) * 100)
                         : layers_note();
  };
  auto host_note = [&] {
    if (w.cpu_experts) return fmt::format(" x {:.1f}% routed experts on the CPU (--cpu-experts)", routed_share * 100);
    return fmt::format(" x {}/{} layers on the CPU (--gpu-layers {})", m.layers - *w.gpu_layers, m.layers,
                       *w.gpu_layers);
  };
  const bool zero3 = full && w.zero >= 3;
  const bool offload_opt = full && w.offload != catalog::Offload::none;
  const bool offload_params = full && w.offload == catalog::Offload::optimizer_params;

  // Weights. Full training keeps 16-bit (or fp32) weights; inference and LoRA bases keep the
  // storage format, with embeddings and LM head in 16-bit where the quantizer leaves them so.
  if (m.tensors && !full) {
    const double bytes = m.tensors->bytes / shard;
    add(MemoryLineId::weights, "weights", bytes * weights_on_gpu, [&] {
      return fmt::format("{} bytes of {} read from {}{}{}", util::format_number(m.tensors->bytes), m.tensors->dtypes,
                         m.tensors->origin, split(), weights_note());
    });
    if (w.gpu_layers || w.cpu_experts)
      add_host(MemoryLineId::weights, "weights (host RAM)", bytes * (1 - weights_on_gpu),
               [&] { return fmt::format("{} bytes{}", util::format_number(m.tensors->bytes), host_note()); });
  } else if (full) {
    double bytes = fp32_training ? 4 : 2;
    // FSDP keeps no 16-bit shard: the fp32 shard (the master weights) is cast when gathered.
    if (!(zero3 && w.fsdp && w.master_weights && !fp32_training)) {
      double z = zero3 ? d : 1;
      put(offload_params, MemoryLineId::weights, offload_params ? "weights (host RAM)" : "weights",
          P * bytes / shard / z, [&] {
            return fmt::format("{} params x {} bytes{}{}", util::format_count(P), bytes, split(),
                               z > 1 ? fmt::format(" / {} (ZeRO-3)", d) : "");
          });
    }
  } else {
    const double e16 = f.embeddings_16bit ? std::min(P, m.embedding_params()) : 0;
    const double z = w.zero >= 3 ? d : 1;
    double payload = (P - e16) * f.payload_bits / 8 + e16 * 2;
    auto formula = [&] {
      std::string text = fmt::format("{} params x {} bits / 8", util::format_count(P - e16), f.payload_bits);
      if (e16 > 0) text += fmt::format(" + {} embedding params x 2 bytes", util::format_count(e16));
      return text + split();
    };
    add(MemoryLineId::weights, "weights", payload / shard / z * weights_on_gpu,
        [&] { return formula() + weights_note(); });
    double consts = (P - e16) * (f.bits - f.payload_bits) / 8;
    auto consts_formula = [&] {
      return fmt::format("{} params x {:.4g} bits / 8 ({})", util::format_count(P - e16), f.bits - f.payload_bits,
                         f.note);
    };
    add(MemoryLineId::quantization_constants, "quantization scales", consts / shard / z * weights_on_gpu,
        [&] { return consts_formula() + weights_note(); });
    if (w.gpu_layers || w.cpu_experts) {
      add_host(MemoryLineId::weights, "weights (host RAM)", payload * (1 - weights_on_gpu),
               [&] { return formula() + host_note(); });
      add_host(MemoryLineId::quantization_constants, "quantization scales (host RAM)", consts * (1 - weights_on_gpu),
               [&] { return consts_formula() + host_note(); });
    }
  }

  // Training state. ZeRO stages 1/2/3 divide optimizer state / +gradients / +weights by the
  // data-parallel degree (Rajbhandari et al. 2020, section 5). With mixed precision the gradients
  // reach the optimizer as an fp32 partition (DeepSpeed's single_partition_of_fp32_groups; FSDP's
  // fp32 sharded gradients): DeepSpeed's estimate_zero3_model_states_mem_needs counts 18 bytes per
  // parameter over the GPUs (2 param + 4 fp32 gradient + 12 Adam), plus 4 bytes per parameter of
  // the largest layer gathered.
  const auto* opt = in.optimizer;
  if (full) {
    const double gbytes = fp32_training || w.fp32_gradients ? 4 : 2;
    const bool master = w.master_weights && !fp32_training;
    const double zg = w.zero >= 2 ? d : 1, zo = w.zero >= 1 ? d : 1;
    if (w.optimizer_in_backward) {
      const double big = largest_tensor_params(m);
      add(MemoryLineId::gradients, "gradients (one tensor at a time)", big * gbytes / t, [&] {
        return fmt::format("optimizer in backward: the largest tensor's gradient, {} params x {} bytes{}",
                           util::format_count(big), gbytes, t > 1 ? " / tp" : "");
      });
    } else if (w.zero >= 2) {
      // Reduce-scattered into a partition as they are made: the partition, in fp32 with master weights.
      const double pb = master ? 4 : gbytes;
      put(offload_opt, MemoryLineId::gradients, offload_opt ? "gradient partition (host RAM)" : "gradient partition",
          P * pb / shard / zg, [&] {
            return fmt::format("{} params x {} bytes{} / {} (ZeRO-{}{})", util::format_count(P), pb, split(), d, w.zero,
                               master ? ", fp32 partition" : "");
          });
    } else {
      // ZeRO-1 adds the fp32 partition the optimizer steps on (in host RAM with ZeRO-Offload).
      const bool part = w.zero == 1 && master;
      const double part_bytes = part ? P * 4 / shard / d : 0;
      add(MemoryLineId::gradients, "gradients", P * gbytes / shard + (offload_opt ? 0 : part_bytes), [&] {
        return fmt::format("{} params x {} bytes{}{}", util::format_count(P), gbytes, split(),
                           part && !offload_opt ? fmt::format(" + fp32 partition x 4 bytes / {} (ZeRO-1)", d) : "");
      });
      if (offload_opt)
        add_host(MemoryLineId::gradients, "fp32 gradient partition (host RAM)", part_bytes,
                 [&] { return fmt::format("{} params x 4 bytes{} / {} (ZeRO-1)", util::format_count(P), split(), d); });
    }
    if (master)
      put(offload_opt, MemoryLineId::master_weights,
          offload_opt ? "fp32 master weights (host RAM)" : "fp32 master weights", P * opt->master_bytes / shard / zo,
          [&] {
            return fmt::format("{} params x {} bytes{}{}", util::format_count(P), opt->master_bytes, split(),
                               zo > 1 ? fmt::format(" / {} (ZeRO-{})", d, w.zero) : "");
          });
    // torch.optim keeps its states in the weights' dtype: 16-bit without master weights.
    const double state = opt->state_bytes * (master || opt->eight_bit || fp32_training ? 1.0 : gbytes / 4);
    const bool state_host = offload_opt || opt->paged;
    put(state_host, MemoryLineId::optimizer_state,
        offload_opt  ? "optimizer state (host RAM)"
        : opt->paged ? "optimizer state (paged to host RAM)"
                     : "optimizer state",
        P * state / shard / zo, [&] {
          return fmt::format("{} params x {} bytes ({}: {}){}{}{}", util::format_count(P), state, opt->id, opt->note,
                             master || opt->eight_bit || fp32_training ? "" : ", 16-bit like the weights", split(),
                             zo > 1 ? fmt::format(" / {} (ZeRO-{})", d, w.zero) : "");
        });
    // Gathered or bucketed parameters and gradients.
    if (zero3 && w.fsdp) {
      const double unit = layer_params(m) / t;
      add(MemoryLineId::gather_buffers, "gathered FSDP units", unit * 6, [&] {
        return fmt::format(
            "one layer unit of {} params gathered in 16-bit, the next prefetched, and its unsharded "
            "gradient: 3 x 2 bytes (FSDP FULL_SHARD)",
            util::format_count(unit));
      });
    } else if (zero3) {
      const double big = largest_tensor_params(m) / t;
      add(MemoryLineId::gather_buffers, "gathered largest layer", big * 4, [&] {
        return fmt::format(
            "largest layer {} params x 4 bytes (16-bit params + gradients; DeepSpeed "
            "estimate_zero3_model_states_mem_needs)",
            util::format_count(big));
      });
    }
  }
  if (w.task == Task::lora || w.task == Task::qlora) {
    const double a = in.adapter_params;
    double per = 4 + 4 + opt->state_bytes;  // fp32 weights and gradients + optimizer state
    add(MemoryLineId::adapters, "LoRA adapters + gradients + optimizer", a * per / shard, [&] {
      return fmt::format("{} adapter params (rank {} on {}) x {} bytes (fp32 weights, gradients, {} state)",
                         util::format_count(a), w.lora_rank, util::join(w.lora_targets, ","), per, opt->id);
    });
  }

  // Activations.
  const double s = static_cast<double>(seq_len), b = static_cast<double>(batch);
  if (m.is_transformer()) {
    const int layers = m.layers + m.encoder_layers;
    if (training) {
      const auto& act = *in.activation;
      const double scale = (fp32_training ? 2.0 : 1.0) * act.typical;
      const bool recompute = in.checkpointing == catalog::Checkpointing::full, no_scores = in.no_scores;
      const bool op_level = in.checkpointing == catalog::Checkpointing::selective_op;
      double per_gpu;
      if (op_level) {
        // The kept tensors of every layer plus one layer's activations, recomputed in its backward.
        per_gpu = (layers * 2.0 * s * b * op_checkpoint_kept_per_token(m) +
                   activation_bytes_per_layer(m, s, b, w.flash_attention)) *
                  scale / t;
      } else if (recompute) {
        // Full recomputation keeps each layer's input (2sbh in 16-bit) plus one layer's working set;
        // with activation offload the inputs wait in host RAM (Unsloth's offloaded checkpointing).
        double one = activation_bytes_per_layer(m, s, b, w.flash_attention);
        double inputs = layers * 2.0 * s * b * static_cast<double>(m.hidden);
        if (w.activation_offload) {
          add_host(MemoryLineId::activations, "checkpointed activations (host RAM)", inputs * scale / t, [&] {
            return fmt::format("{} layers x 2sbh x {:.2f} calibration{}", layers, act.typical, t > 1 ? " / tp" : "");
          });
          inputs = 2.0 * s * b * static_cast<double>(m.hidden);  // the one being moved
        }
        per_gpu = (inputs + one) * scale / t;
      } else {
        per_gpu = layers * activation_bytes_per_layer(m, s, b, no_scores) * scale / t;
      }
      add(MemoryLineId::activations, "activations", per_gpu, [&] {
        std::string formula =
            op_level ? fmt::format(
                           "op-level selective recomputation (torchtitan): {} layers x 2 bytes x s x b x {} "
                           "(input, attention output and every other matmul output) + one layer's activations",
                           layers, util::format_int(std::llround(op_checkpoint_kept_per_token(m))))
            : recompute
                ? (w.activation_offload
                       ? std::string(
                             "full recomputation, inputs offloaded: one layer's input 2sbh + one layer's activations")
                       : fmt::format("full recomputation: {} layers x 2sbh + one layer's activations", layers))
                : fmt::format("{} layers x sbh x (34-term{}), Korthikanti et al. 2022", layers,
                              no_scores ? ", no 5as/h scores: flash attention or selective recomputation" : " + 5as/h");
        formula += fmt::format(" x {:.2f} calibration", act.typical);
        if (t > 1) formula += fmt::format(" / {} (tensor + sequence parallel)", t);
        if (p > 1) formula += "; the first pipeline stage holds pp micro-batches of L/pp layers";
        return formula;
      });
      if (in.logits) {
        // 16-bit logits and their fp32 copy for the loss; a chunked loss holds one chunk of them.
        const double chunks = w.chunked_loss ? kLossChunks : 1;
        const double lf = in.logits_factor->typical;
        add(MemoryLineId::logits, w.chunked_loss ? "output logits (chunked loss)" : "output logits (loss)",
            s * b * static_cast<double>(m.vocab) * 6 * lf / t / chunks, [&] {
              return fmt::format(
                  "s x b x vocab {} x (2 bytes + 4-byte fp32 copy for the loss) x {:.3g} calibration{}{}", m.vocab, lf,
                  w.chunked_loss ? fmt::format(" / {:.0f} chunks", kLossChunks) : "", t > 1 ? " / tp" : "");
            });
      }
    } else {
      // Inference keeps no activations between layers; the peak is one layer's working set for
      // the tokens of one scheduler step. Serving engines cap those tokens over all sequences
      // together (vLLM's chunked prefill, max_num_batched_tokens; llama.cpp's n_batch): a step
      // holds at most 2,048 prompt tokens, however many sequences are batched. transformers'
      // generate() runs the whole prompt of every sequence at once.
      const bool whole = catalog::engine(w.engine).whole_prompt_prefill;
      // A layer split runs every token through each GPU's layers: the working set is not divided.
      const double ta = w.split == catalog::Split::layer ? 1.0 : t;
      double tokens = whole ? s * b : std::min(s * b, kPrefillChunk);
      double chunk = whole ? s : std::min(s, kPrefillChunk);
      double per_tok = 2.0 * (4.0 * static_cast<double>(m.hidden) + (m.gated_mlp ? 3 : 2) * mlp_width(m));
      double scores = w.flash_attention ? 0 : 2.0 * m.heads * chunk * s * std::max(1.0, tokens / chunk);
      add(MemoryLineId::activations, "activations (prefill working set)", (tokens * per_tok + scores) / ta, [&] {
        return fmt::format("{} x 2 bytes x (4h + {}i){}{}",
                           whole ? "b x s (the whole prompt at once)" : "min(b x s, 2048 tokens per step)",
                           m.gated_mlp ? 3 : 2, w.flash_attention ? "" : " + attention scores",
                           ta > 1 ? fmt::format(" / {:g} (tensor parallel)", ta) : "");
      });
    }
  } else if (m.vision) {
    if (m.vision->activation_bytes_per_image) {
      double per = *m.vision->activation_bytes_per_image * b * (training ? 1.0 : 0.5);
      add(MemoryLineId::activations, "activations", per, [&] {
        return fmt::format("{} per image x batch {}", util::format_bytes(*m.vision->activation_bytes_per_image), batch);
      });
    } else {
      activations_known = false;
    }
  }

  // KV cache (inference): 2 x layers x kv_heads x head_dim x context x batch x bytes. Layers with a
  // sliding window (or Llama 4's chunked attention) keep only the last `window` tokens: vLLM's
  // hybrid KV cache manager, llama.cpp's SWA cache and transformers' HybridCache all stop there.
  if (!training && m.is_transformer()) {
    const bool windowed = !m.mla && m.sliding_layers > 0 && m.sliding_window > 0 && m.layers > 0 &&
                          s > static_cast<double>(m.sliding_window);
    const double sliding = windowed ? static_cast<double>(m.sliding_layers) / m.layers : 0;
    const double kv_tokens = s * (1 - sliding) + std::min(s, static_cast<double>(m.sliding_window)) * sliding;
    double per_gpu = in.kv_per_token * kv_tokens * b / p;
    if (!m.mla && t > 1)
      per_gpu *=
          std::ceil(static_cast<double>(m.kv_heads) / t) / m.kv_heads;  // heads split, replicated when kv_heads < tp
    auto formula = [&] {
      return m.mla ? fmt::format("MLA latent: layers x (kv_lora_rank + rope dim) x {} bytes x {} tokens x batch {}",
                                 kv_bytes_per_element(w.kv_precision), seq_len, batch)
             : windowed ? fmt::format(
                              "2 x ({} layers x {} tokens + {} sliding-window layers x {} tokens) x {} kv heads x "
                              "{} head dim x {} bytes x batch {}{}",
                              m.layers - m.sliding_layers, seq_len, m.sliding_layers, m.sliding_window, m.kv_heads,
                              m.head_dim, kv_bytes_per_element(w.kv_precision), batch, shard > 1 ? " / tp x pp" : "")
                        : fmt::format("2 x {} layers x {} kv heads x {} head dim x {} bytes x {} tokens x batch {}{}",
                                      m.layers, m.kv_heads, m.head_dim, kv_bytes_per_element(w.kv_precision), seq_len,
                                      batch, shard > 1 ? " / tp x pp" : "");
    };
    add(MemoryLineId::kv_cache, "KV cache", per_gpu * on_gpu, [&] { return formula() + layers_note(); });
    if (w.gpu_layers)
      add_host(MemoryLineId::kv_cache, "KV cache (host RAM)", per_gpu * (1 - on_gpu),
               [&] { return formula() + host_note(); });
  }
  // Overheads: CUDA context and framework workspace per GPU; allocator fragmentation reserve.
  const double before_overheads = allocated;
  const auto& ctx = in.context;
  // An engine outside PyTorch (llama.cpp) loads no PyTorch kernels and allocates exact buffers:
  // the bare CUDA context (the factor's low, measured with lazy module loading) and no
  // fragmentation reserve.
  const bool bare = !training && !catalog::engine(w.engine).pytorch;
  if (bare)
    add(MemoryLineId::cuda_context, "CUDA context", ctx.low, [&] {
      return fmt::format("bare context per GPU, measured with lazy loading ({} runs no PyTorch)",
                         catalog::name(w.engine));
    });
  else
    add(MemoryLineId::cuda_context, "CUDA context + framework", ctx.typical, [&] {
      return fmt::format("measured per GPU (range {} to {})", util::format_bytes(ctx.low),
                         util::format_bytes(ctx.high));
    });
  const auto& frag = in.fragmentation;
  if (!bare)
    add(MemoryLineId::fragmentation, "allocator fragmentation reserve", before_overheads * frag.typical, [&] {
      return fmt::format("{:.0f}% of allocated bytes (measured {:.0f}%..{:.0f}%)", frag.typical * 100, frag.low * 100,
                         frag.high * 100);
    });
  return activations_known;
}

}  // namespace

std::string_view line_id(MemoryLineId id) { return kLineIds[static_cast<std::size_t>(id)]; }

namespace {

MemoryBytes memory_bytes_with(const Workload& w, long long batch, long long seq_len, const MemoryInputs& in) {
  MemoryBytes out;
  out.activations_known =
      memory_lines(w, batch, seq_len, in, [&](MemoryLineId id, std::string_view, double per_gpu, auto&&, bool host) {
        if (host) {
          out.host_bytes += per_gpu;
          out.host_lines[static_cast<std::size_t>(id)] += per_gpu;
          return;
        }
        out.lines[static_cast<std::size_t>(id)] += per_gpu;
        out.per_gpu_bytes += per_gpu;
      });
  return out;
}

}  // namespace

MemoryBytes memory_bytes(const Workload& w, long long batch, long long seq_len, const catalog::Efficiency& eff) {
  return memory_bytes_with(w, batch, seq_len, memory_inputs(w, eff));
}

MemoryBytes memory_bytes(const Workload& w, const catalog::Efficiency& eff) {
  return memory_bytes(w, w.batch, w.seq_len, eff);
}

MemoryEstimate estimate_memory(const Workload& w, const catalog::Efficiency& eff, bool explain) {
  MemoryEstimate out;
  const double N = w.gpus;
  out.lines.reserve(kMemoryLineCount);
  out.activations_known =
      memory_lines(w, w.batch, w.seq_len, memory_inputs(w, eff),
                   [&](MemoryLineId id, std::string_view label, double per_gpu, auto&& formula, bool host) {
                     out.lines.push_back({id, std::string(label), per_gpu, per_gpu * N,
                                          explain ? std::string(formula()) : std::string(), host});
                   });
  if (explain && is_training(w.task) && &eff.for_training_memory() != &eff)
    out.assumptions.push_back(eff.scope()->label +
                              ": its activation and logit memory factors, on every GPU (they describe the framework)");
  if (!out.activations_known) {
    const auto& m = w.model;
    out.assumptions.push_back(fmt::format("activation memory of {} is not included: no published per-image figure ({})",
                                          m.name,
                                          m.vision->activation_note.empty() ? "unknown" : m.vision->activation_note));
  }
  for (const auto& l : out.lines) {
    if (l.host) {
      out.per_gpu_host_bytes += l.per_gpu_bytes;
      out.host_bytes += l.total_bytes;
    } else {
      out.per_gpu_bytes += l.per_gpu_bytes;
      out.total_bytes += l.total_bytes;
    }
  }
  out.assumptions.insert(out.assumptions.begin(), w.assumptions.begin(), w.assumptions.end());
  return out;
}

namespace {

// A guess of the largest whole x in [lo, hi] for a search, from an estimate that may be anything.
long long guess_in(double x, long long lo, long long hi) {
  if (!(x > static_cast<double>(lo))) return lo;  // NaN too
  if (!(x < static_cast<double>(hi))) return hi;
  return static_cast<long long>(x);
}

// Where the parabola through three samples (x[i], y[i]) of an increasing function reaches
// `target`, for a guess. With u = x - x0 the parabola is y0 + b u + a u^2 (Newton's divided
// differences); the root is taken in the form -2c / (b + sqrt(b^2 - 4ac)), c = y0 - target, which
// stays exact when the curvature a is nil (a line) or tiny.
double parabola_root(const double (&x)[3], const double (&y)[3], double target) {
  const double d01 = (y[1] - y[0]) / (x[1] - x[0]), d12 = (y[2] - y[1]) / (x[2] - x[1]);
  const double a = (d12 - d01) / (x[2] - x[0]);
  const double b = d01 - a * (x[1] - x[0]), c = y[0] - target;
  if (c >= 0) return x[0];
  const double disc = b * b - 4 * a * c;
  if (disc < 0 || b + std::sqrt(disc) <= 0) return x[2];  // not increasing: no useful guess
  return x[0] - 2 * c / (b + std::sqrt(disc));
}

// The largest x in [lo, hi] with ok(x), nullopt when not even lo; ok must be monotone (true up to
// the answer, false after it). `guess` is an estimate of the answer: it and its neighbours are
// tried first, so a guess within a step or two costs two or three evaluations; when it is further
// off, a binary search of what is left of the range finishes. The answer is exact either way.
template <class Ok>
std::optional<long long> largest(long long lo, long long hi, long long guess, Ok&& ok) {
  constexpr int kSteps = 2;
  guess = std::clamp(guess, lo, hi);
  if (ok(guess)) {
    lo = guess;
    for (int i = 0; i < kSteps && lo < hi; ++i, ++lo)
      if (!ok(lo + 1)) return lo;
  } else {
    hi = guess - 1;
    for (int i = 0; i < kSteps && hi >= lo; ++i, --hi)
      if (ok(hi)) return hi;
    if (hi < lo || !ok(lo)) return std::nullopt;
  }
  while (lo < hi) {  // ok(lo) holds; the answer is in [lo, hi]
    long long mid = lo + (hi - lo + 1) / 2;
    if (ok(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

}  // namespace

FitResult fit(const Workload& w, const catalog::Gpu& gpu, const catalog::Efficiency& eff,
              std::optional<double> headroom_in) {
  const double headroom = headroom_in.value_or(headroom_of(w));
  FitResult r;
  r.capacity_bytes = gpu.memory_bytes;
  r.usable_bytes = gpu.memory_bytes * (1 - headroom);
  const auto in = memory_inputs(w, eff);
  const auto est = memory_bytes_with(w, w.batch, w.seq_len, in);
  double need = est.per_gpu_bytes;
  r.fits = need <= r.usable_bytes;
  r.activations_unknown = !est.activations_known;
  r.headroom_bytes = r.usable_bytes - need;
  auto need_at = [&](long long batch, long long seq) { return memory_bytes_with(w, batch, seq, in).per_gpu_bytes; };
  auto fits_at = [&](long long batch, long long seq) { return need_at(batch, seq) <= r.usable_bytes; };
  // Memory grows with the batch and the sequence length, so there is a largest of each that fits.
  // Rather than searching for it, solve for it from a few samples and check the answer.
  // Without an activation figure memory does not grow with the batch: no largest batch to give.
  if (!r.activations_unknown) {
    // Affine in the batch: need(b) = need(1) + (b - 1) x (bytes per sample).
    constexpr long long kMaxBatch = 1 << 20;
    const double one = w.batch == 1 ? need : need_at(1, w.seq_len), per_sample = need_at(2, w.seq_len) - one;
    const double guess =
        per_sample > 0 ? 1 + std::floor((r.usable_bytes - one) / per_sample) : static_cast<double>(kMaxBatch);
    r.max_batch =
        largest(1, kMaxBatch, guess_in(guess, 1, kMaxBatch), [&](long long b) { return fits_at(b, w.seq_len); });
  }
  // Serving capacity: the KV-cache tokens that the memory left after everything else holds, and
  // the sequences of this context that fit at once (vLLM logs both: "GPU KV cache size: N tokens",
  // "Maximum concurrency for S tokens per request: X"). KV blocks are paged in 16-token blocks.
  if (!is_training(w.task) && est[MemoryLineId::kv_cache] > 0 && w.seq_len > 0) {
    const double frag = catalog::engine(w.engine).pytorch ? eff.get(catalog::FactorId::fragmentation).typical : 0.0;
    const double kv = est[MemoryLineId::kv_cache];
    const double per_token = kv / (static_cast<double>(w.seq_len) * static_cast<double>(w.batch));
    const double others = need - kv * (1 + frag);
    const double free = (r.usable_bytes - others) / (1 + frag);
    const double tokens = free > 0 ? std::floor(free / per_token / 16) * 16 : 0;
    r.kv_capacity_tokens = static_cast<long long>(tokens);
    r.max_concurrency = tokens / static_cast<double>(w.seq_len);
  }
  if (w.model.is_transformer()) {
    long long cap = w.model.max_context > 0 ? w.model.max_context : (1LL << 24);
    // Quadratic in the context on each side of the prefill chunk: attention scores, where they
    // are kept, grow with s^2 (all of s in training, one chunk of it at inference). Solve the
    // parabola through three samples of the side the answer lies on.
    auto at = [&](double s) { return need_at(w.batch, static_cast<long long>(s)); };
    const double c = kPrefillChunk, at_chunk = at(c);
    const double guess = at_chunk > r.usable_bytes
                             ? parabola_root({1, c / 2, c}, {at(1), at(c / 2), at_chunk}, r.usable_bytes)
                             : parabola_root({c, 2 * c, 4 * c}, {at_chunk, at(2 * c), at(4 * c)}, r.usable_bytes);
    r.max_seq_len = largest(1, cap, guess_in(guess, 1, cap), [&](long long s) { return fits_at(w.batch, s); });
    r.max_seq_capped = r.max_seq_len && *r.max_seq_len == cap && w.model.max_context > 0;
  }
  return r;
}

namespace {

// "ZeRO-3, tensor parallel 2": the data-parallel part only when there are replicas.
std::string layout_name(const Workload& x) {
  std::vector<std::string> parts;
  if (x.dp() > 1) parts.push_back(x.zero ? fmt::format("ZeRO-{}", x.zero) : "plain data parallel");
  if (x.tp > 1) parts.push_back(fmt::format("tensor parallel {}", x.tp));
  if (x.pp > 1) parts.push_back(fmt::format("pipeline parallel {}", x.pp));
  return parts.empty() ? "one GPU" : util::join(parts, ", ");
}

// The layouts are tried on one workload, changed in place (a Workload holds its whole model).
Workload plan_layout_search(Workload x, const WorkloadSet& set, const catalog::Gpu& gpu, const catalog::Efficiency& eff,
                            double usable) {
  const catalog::Checkpointing own_ckpt = x.checkpointing;
  const int own_tp = x.tp, own_zero = x.zero;
  std::vector<catalog::Checkpointing> ckpts = {own_ckpt};
  if (!set.checkpointing) ckpts.push_back(catalog::Checkpointing::full);
  std::vector<int> tps = set.tp ? std::vector<int>{own_tp} : std::vector<int>{1, 2, 4, 8};
  std::vector<int> zeros = set.zero ? std::vector<int>{own_zero} : std::vector<int>{0, 1, 2, 3};
  // When nothing fits: the last layout tried with the user's recomputation, the most memory-saving.
  std::optional<std::pair<int, int>> last;  // tp, zero
  for (const auto& c : ckpts) {
    for (int tp : tps) {
      for (int z : zeros) {
        x.checkpointing = c;
        x.tp = tp;
        x.zero = z;
        if (!check_layout(x).empty()) continue;
        if (z > 0 && x.dp() < 2) continue;  // ZeRO shards across data-parallel replicas
        if (c == own_ckpt) last = {tp, z};
        if (memory_bytes(x, eff).per_gpu_bytes <= usable) {
          x.assumptions.push_back(fmt::format(
              "layout: {}{} on {} GPUs: the first that fits {} (set --zero, --tp, --checkpointing to choose)",
              layout_name(x), c == catalog::Checkpointing::full ? ", full activation recomputation" : "", x.gpus,
              gpu.id));
          return x;
        }
      }
    }
  }
  x.checkpointing = own_ckpt;
  x.tp = last ? last->first : own_tp;
  x.zero = last ? last->second : own_zero;
  if (last)
    x.assumptions.push_back(
        fmt::format("layout: no layout of {} GPUs fits {}; shown with the most memory-saving sharding tried ({})",
                    x.gpus, gpu.id, layout_name(x)));
  return x;
}

}  // namespace

Workload plan_layout(Workload w, const WorkloadSet& set, const catalog::Gpu& gpu, const catalog::Efficiency& eff,
                     std::optional<double> headroom) {
  const double usable = gpu.memory_bytes * (1 - headroom.value_or(headroom_of(w)));
  apply_gpu_defaults(w, set, gpu);
  if (!is_training(w.task) || memory_bytes(w, eff).per_gpu_bytes <= usable) return w;
  return plan_layout_search(std::move(w), set, gpu, eff, usable);
}

void write(util::JsonSink& o, const MemoryEstimate& m, bool detail) {
  std::string key;
  for (const auto& l : m.lines) {
    if (l.host) continue;
    key.assign(line_id(l.id)).append("_bytes");
    o(key, util::json_bytes(l.total_bytes));
  }
  o("total_bytes", util::json_bytes(m.total_bytes));
  o("per_gpu_total_bytes", util::json_bytes(m.per_gpu_bytes));
  o("host_bytes", util::json_bytes(m.host_bytes));
  o("per_gpu_host_bytes", util::json_bytes(m.per_gpu_host_bytes));
  o("activations_known", m.activations_known);
  if (!detail) return;
  o.objects("breakdown", m.lines.size(), [&](std::size_t i, util::JsonSink& x) {
    const auto& l = m.lines[i];
    x("id", line_id(l.id));
    x("label", l.label);
    x("bytes", util::json_bytes(l.total_bytes));
    x("per_gpu_bytes", util::json_bytes(l.per_gpu_bytes));
    x("device", l.host ? "host" : "gpu");
    x("formula", l.formula);
  });
  o("assumptions", m.assumptions);
}

util::Json to_json(const MemoryEstimate& m, bool detail) {
  return util::json_tree([&](util::JsonSink& o) { write(o, m, detail); });
}

}  // namespace gpuadvisor::estimate
