// Model descriptions users already have: Hugging Face config.json, and the headers of safetensors
// and GGUF weight files. Headers only: weights are never read, every length is checked against the
// real file size before anything is read or allocated.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/util/json.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::catalog {
namespace {

namespace fs = std::filesystem;
using util::Fields;
using util::quote;

// ------------------------------------------------------------------------------------------------
// config.json

/// What a model type's transformers class does where its config.json has no key for it. Types not
/// in the table are read as Llama-style decoders (the layout of most 2024-26 decoders), and the
/// model says so in its assumptions.
struct Layout {
  std::string_view type;
  bool gated = true;       ///< gate, up and down projections (SwiGLU, GeGLU)
  char bias = 'n';         ///< 'n' none unless attention_bias says so, 'q' q/k/v only, 'a' every linear layer
  bool layernorm = false;  ///< LayerNorm (weight and bias) instead of RMSNorm
  bool tied = false;       ///< the class default of tie_word_embeddings
  std::string_view position = "rope";
  std::string_view family = {};  ///< the docs/data-format.md family when it is not the type
};

const std::vector<Layout>& layouts() {
  static const std::vector<Layout> table = {
      {"llama"},
      {"llama4_text"},
      {"mistral"},
      {"mixtral"},
      {"ministral"},
      {"qwen2", true, 'q'},
      {"qwen2_moe", true, 'q', false, false, "rope", "qwen2"},
      {"qwen3"},
      {"qwen3_moe"},
      {"gemma", true, 'n', false, true},
      {"gemma2", true, 'n', false, true},
      {"gemma3_text", true, 'n', false, true, "rope", "gemma3"},
      {"phi3"},
      {"phimoe", true, 'a', true},
      {"phi", false, 'a', true},
      {"deepseek_v2", true, 'n', false, false, "rope", "deepseek-v3"},
      {"deepseek_v3", true, 'n', false, false, "rope", "deepseek-v3"},
      {"granite"},
      {"granitemoe"},
      {"olmo"},
      {"olmo2"},
      {"olmo3"},
      {"olmoe"},
      {"internlm2"},
      {"internlm3"},
      {"minicpm"},
      {"baichuan"},
      {"exaone"},
      {"hunyuan_v1_dense"},
      {"seed_oss"},
      {"smollm3"},
      {"cohere", true, 'n', true, true},
      {"cohere2", true, 'n', true, true},
      {"starcoder2", false, 'a', true, true},
      {"stablelm", true, 'n', true},
      {"gpt_neox", false, 'a', true},
      {"gptj", false, 'a', true},
      {"gpt_bigcode", false, 'a', true, true, "learned"},
      {"bloom", false, 'a', true, true, "alibi"},
      {"mpt", false, 'n', true, true, "alibi"},
      {"opt", false, 'a', true, true, "learned"},
      {"chatglm", true, 'q'},
      {"glm", true, 'q'},
      {"glm4", true, 'q'},
      {"glm4_moe"},
      {"gpt_oss", true, 'a'},
      {"ernie4_5"},
      {"ernie4_5_moe"},
      {"dots1"},
      {"bailing_moe"},
  };
  return table;
}

const Layout* find_layout(std::string_view type) {
  for (const auto& l : layouts())
    if (l.type == type) return &l;
  return nullptr;
}

/// Vision-language wrappers: the text backbone's model type when text_config does not name it.
std::string_view text_type_of(std::string_view outer) {
  static const std::map<std::string_view, std::string_view> types = {
      {"llava", "llama"},        {"llava_next", "llama"},     {"mistral3", "mistral"},
      {"gemma3", "gemma3_text"}, {"paligemma", "gemma"},      {"qwen2_vl", "qwen2"},
      {"qwen2_5_vl", "qwen2"},   {"qwen3_vl", "qwen3"},       {"qwen3_vl_moe", "qwen3_moe"},
      {"llama4", "llama4_text"}, {"gemma3n", "gemma3n_text"}, {"kimi_vl", "deepseek_v3"}};
  auto it = types.find(outer);
  return it == types.end() ? std::string_view{} : it->second;
}

// Generous bounds: they only stop nonsense (negative, zero, absurd) from reaching the estimators.
constexpr std::int64_t kMaxLayers = 100'000;
constexpr std::int64_t kMaxWidth = 1 << 24;
constexpr std::int64_t kMaxHeads = 1 << 16;
constexpr std::int64_t kMaxVocab = std::int64_t{1} << 31;
constexpr std::int64_t kMaxContext = std::int64_t{1} << 40;
constexpr std::int64_t kMaxExperts = 1 << 16;

/// The first of `keys` present in the config, as a whole number in [lo, hi].
std::optional<std::int64_t> first_int(const Fields& f, std::initializer_list<const char*> keys, std::int64_t lo,
                                      std::int64_t hi) {
  for (const char* k : keys)
    if (f.has(k)) return f.integer(k, lo, hi);
  return std::nullopt;
}

/// Like first_int, but a config without any of `keys` is an error naming all of them.
std::int64_t need_int(const Fields& f, std::initializer_list<const char*> keys, std::int64_t lo, std::int64_t hi,
                      std::string_view what) {
  if (auto v = first_int(f, keys, lo, hi)) return *v;
  std::string also;
  for (auto it = keys.begin() + 1; it != keys.end(); ++it) also += fmt::format("{}'{}'", also.empty() ? "" : ", ", *it);
  f.fail(*keys.begin(),
         fmt::format("missing{}; {} is required", also.empty() ? "" : " (also looked for " + also + ")", what));
}

/// Narrows a value that the k-limits above already bound to well within int.
int as_int(std::int64_t v) { return static_cast<int>(v); }

/// A list of whole numbers, each in [lo, hi].
std::vector<std::int64_t> int_list(const Fields& f, const std::string& key, std::int64_t lo, std::int64_t hi) {
  const auto& list = f.raw(key);
  if (!list.is_array()) f.fail(key, "expected a list of whole numbers, got " + util::json_snippet(list));
  std::vector<std::int64_t> out;
  for (const auto& v : list) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
      f.fail(key, fmt::format("expected whole numbers from {} to {}, got {}", lo, hi, util::json_snippet(v)));
    out.push_back(v.get<std::int64_t>());
  }
  return out;
}

std::int64_t max_context_of(const Fields& f) {
  return first_int(f, {"max_position_embeddings", "n_positions", "seq_length", "max_sequence_length", "n_ctx"}, 1,
                   kMaxContext)
      .value_or(0);
}

/// Which layers have a routed-expert MLP, from the usual keys: first_k_dense_replace and
/// moe_layer_freq (DeepSeek, GLM-4.5, Kimi), decoder_sparse_step and mlp_only_layers (Qwen MoE),
/// interleave_moe_layer_step and moe_layers (Llama 4). Every layer otherwise.
std::vector<bool> moe_layers(const Fields& f, int layers) {
  std::vector<bool> sparse(static_cast<std::size_t>(layers), true);
  if (f.has("moe_layers")) {
    std::fill(sparse.begin(), sparse.end(), false);
    for (auto i : int_list(f, "moe_layers", 0, layers - 1)) sparse[static_cast<std::size_t>(i)] = true;
    return sparse;
  }
  const std::int64_t first_dense = first_int(f, {"first_k_dense_replace"}, 0, layers).value_or(0);
  const std::int64_t freq = first_int(f, {"moe_layer_freq"}, 1, kMaxLayers).value_or(1);
  const std::int64_t step =
      first_int(f, {"decoder_sparse_step", "interleave_moe_layer_step"}, 1, kMaxLayers).value_or(1);
  std::set<std::int64_t> dense_only;
  if (f.has("mlp_only_layers"))
    for (auto i : int_list(f, "mlp_only_layers", 0, layers - 1)) dense_only.insert(i);
  for (int i = 0; i < layers; ++i)
    sparse[static_cast<std::size_t>(i)] =
        i >= first_dense && (i - first_dense) % freq == 0 && (i + 1) % step == 0 && !dense_only.count(i);
  return sparse;
}

/// The attention kind of every layer, from layer_types or the type's own rule; a layer kind that
/// is not attention (linear attention, Mamba, ...) is an error naming it, since its parameters and
/// state follow rules of its own.
struct AttentionLayout {
  int sliding_layers = 0;
  std::int64_t window = 0;
  std::string note;
};

AttentionLayout attention_layout(const Fields& f, std::string_view type, int layers) {
  AttentionLayout a;
  for (const char* key : {"hybrid_override_pattern", "layers_block_type", "attn_layer_indices", "full_attn_idxs"})
    if (f.has(key))
      f.fail(key, fmt::format("a hybrid layer layout ({}): gpuadvisor counts attention layers only, and the "
                              "parameters and state of the other layers are not known",
                              key));
  std::optional<std::int64_t> window;
  if (f.has("sliding_window") && f.raw("sliding_window").is_number())
    window = f.integer("sliding_window", 1, kMaxContext);
  if (f.has("layer_types")) {
    const auto& list = f.raw("layer_types");
    if (!list.is_array() || list.size() != static_cast<std::size_t>(layers))
      f.fail("layer_types", fmt::format("expected a list of {} layer kinds, got {}", layers, util::json_snippet(list)));
    int full = 0;
    for (const auto& v : list) {
      std::string kind = v.is_string() ? v.get<std::string>() : util::json_snippet(v);
      if (kind == "full_attention" || kind == "attention")
        ++full;
      else if (kind == "sliding_attention" || kind == "chunked_attention")
        ++a.sliding_layers;
      else
        f.fail("layer_types",
               fmt::format("layer kind {} is not attention: gpuadvisor counts attention layers only, and the "
                           "parameters and state of {} layers are not known",
                           util::quote(kind), util::quote(kind)));
    }
    if (a.sliding_layers > 0) {
      if (!window && f.has("attention_chunk_size")) window = f.integer("attention_chunk_size", 1, kMaxContext);
      if (!window) f.fail("sliding_window", "missing; layer_types lists sliding-window layers");
      a.window = *window;
      a.note = fmt::format("{} of {} layers attend to the last {} tokens only (layer_types)", a.sliding_layers, layers,
                           a.window);
    }
    return a;
  }
  if (type == "llama4_text" && f.has("attention_chunk_size")) {
    // Llama 4: every fourth layer is global (no RoPE), the others attend within 8,192-token chunks.
    a.window = f.integer("attention_chunk_size", 1, kMaxContext);
    a.sliding_layers = layers - layers / 4;
  } else if (!window) {
    return a;
  } else if (type == "gemma2") {
    a.window = *window;  // alternating, the first layer local (Gemma 2 technical report)
    a.sliding_layers = (layers + 1) / 2;
  } else if (type == "gemma3_text" || type == "cohere2") {
    std::int64_t pattern =
        first_int(f, {"sliding_window_pattern"}, 1, kMaxLayers).value_or(type == "gemma3_text" ? 6 : 4);
    a.window = *window;
    a.sliding_layers = layers - as_int(layers / pattern);
  } else if (f.opt_bool("use_sliding_window")
                 .value_or(type == "mistral" || type == "mixtral" || type == "phi3" || type == "starcoder2")) {
    // Qwen configs carry a sliding_window but leave it off (use_sliding_window false); from
    // max_window_layers on the layers would use it.
    int from = as_int(first_int(f, {"max_window_layers"}, 0, layers).value_or(0));
    if (type.substr(0, 4) != "qwen") from = 0;
    a.window = *window;
    a.sliding_layers = layers - from;
  } else {
    return a;
  }
  if (a.sliding_layers > 0 && max_context_of(f) > 0 && a.window >= max_context_of(f)) a.sliding_layers = 0;
  if (a.sliding_layers > 0)
    a.note = fmt::format("{} of {} layers attend to the last {} tokens only ({} rule)", a.sliding_layers, layers,
                         a.window, type);
  return a;
}

/// Parameters of a vision tower and its projector into the text model (vision_config): a ViT of
/// `depth` layers (attention with biases, an MLP, two norms), the patch embedding and position
/// table, and the projector of the wrapper type. Norms and biases are a few parameters in a
/// million; the layer matrices and the projector are what counts.
double vision_params(const Fields& v, std::string_view outer, std::int64_t text_hidden,
                     std::vector<std::string>& notes) {
  const std::string vt = v.opt_str("model_type").value_or(std::string(outer));
  const double layers = static_cast<double>(
      need_int(v, {"depth", "num_hidden_layers", "num_layers"}, 1, kMaxLayers, "the vision tower depth"));
  const double h =
      static_cast<double>(need_int(v, {"embed_dim", "hidden_size", "width"}, 1, kMaxWidth, "the vision tower width"));
  double inner = 4 * h;
  if (auto i = first_int(v, {"intermediate_size"}, 1, kMaxWidth))
    inner = static_cast<double>(*i);
  else if (auto r = v.opt_num("mlp_ratio"))
    inner = *r * h;
  const bool pixtral = vt == "pixtral";
  const bool gated = pixtral || vt == "qwen2_5_vl" || vt == "mllama";
  const bool bias = !pixtral;
  double layer = 4 * h * h + (gated ? 3 : 2) * h * inner + 4 * h;  // matrices and two norms
  if (bias) layer += 4 * h + (gated ? 2 : 1) * inner + h;
  const double p = static_cast<double>(first_int(v, {"patch_size"}, 1, 4096).value_or(14));
  const double channels =
      static_cast<double>(first_int(v, {"num_channels", "in_channels", "in_chans"}, 1, 64).value_or(3));
  const double temporal = static_cast<double>(first_int(v, {"temporal_patch_size"}, 1, 64).value_or(1));
  double total = layers * layer + channels * temporal * p * p * h + 4 * h;  // patch embedding, pre/post norms
  // Learned position table: (image / patch)^2 entries (CLIP and Llama 4 add a class token);
  // Qwen2-VL and Qwen2.5-VL use rotary positions, Qwen3-VL a table of num_position_embeddings.
  if (auto n = first_int(v, {"num_position_embeddings"}, 1, kMaxContext)) {
    total += static_cast<double>(*n) * h;
  } else if (auto image = first_int(v, {"image_size"}, 1, 1 << 20); image && !pixtral && vt.rfind("qwen", 0) != 0) {
    double side = static_cast<double>(*image) / p;
    bool cls = vt == "clip_vision_model" || vt == "llama4_vision_model";
    total += (side * side + (cls ? 1 : 0)) * h + (cls ? h : 0);
  }
  const double t = static_cast<double>(text_hidden);
  const double merge = static_cast<double>(first_int(v, {"spatial_merge_size"}, 1, 64).value_or(2));
  if (outer == "llava" || outer == "llava_next") {
    total += h * t + t + t * t + t;  // two-layer GELU MLP with biases
    notes.push_back("vision tower and the two-layer LLaVA projector counted from vision_config");
  } else if (outer == "mistral3") {
    total += h + merge * merge * h * h + h * t + t * t;  // norm, patch merger, two linear layers
    notes.push_back("Pixtral vision tower, patch merger and projector counted from vision_config");
  } else if (outer == "gemma3" || outer == "paligemma") {
    total += h * t + h;
    notes.push_back("SigLIP vision tower and its projection counted from vision_config");
  } else if (outer == "qwen2_vl" || outer == "qwen2_5_vl" || outer == "qwen3_vl" || outer == "qwen3_vl_moe") {
    const double wide = h * merge * merge;
    const double out = static_cast<double>(first_int(v, {"out_hidden_size"}, 1, kMaxWidth).value_or(text_hidden));
    double merger = 2 * h + wide * wide + wide + wide * out + out;
    double mergers = 1;
    if (v.has("deepstack_visual_indexes"))
      mergers += static_cast<double>(int_list(v, "deepstack_visual_indexes", 0, kMaxLayers).size());
    total += mergers * merger;
    notes.push_back("vision tower and patch merger counted from vision_config");
  } else if (outer == "llama4") {
    // Pixel-shuffle MLP (hidden / ratio^2 -> projector dims, no biases), then the projection
    // into the text width.
    const double ratio = v.opt_num("pixel_shuffle_ratio").value_or(0.5);
    const double in = static_cast<double>(first_int(v, {"projector_input_dim"}, 1, kMaxWidth).value_or(4096));
    const double mid = static_cast<double>(first_int(v, {"projector_output_dim"}, 1, kMaxWidth).value_or(4096));
    const double vout = static_cast<double>(first_int(v, {"vision_output_dim"}, 1, kMaxWidth).value_or(4096));
    total += h / (ratio * ratio) * in + in * mid + vout * t;
    notes.push_back("vision tower, pixel-shuffle adapter and projector counted from vision_config");
  } else {
    notes.push_back(
        fmt::format("vision tower counted from vision_config as a ViT; the {} projector is not counted", outer));
  }
  return total;
}

/// The mixture of experts of a decoder, from its usual keys; nullopt for a dense model.
std::optional<MoE> read_moe(const Fields& f, std::string_view type, Model& m) {
  auto experts =
      first_int(f, {"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"}, 0, kMaxExperts);
  if (!experts || *experts <= 1) return std::nullopt;
  MoE moe;
  moe.experts = as_int(*experts);
  moe.experts_per_token =
      as_int(need_int(f, {"num_experts_per_tok", "num_experts_per_token", "experts_per_token", "moe_top_k", "top_k"}, 1,
                      moe.experts, "the experts per token"));
  // Per-expert width: its own key where the dense layers differ (DeepSeek, Qwen MoE, GLM-4.5),
  // else intermediate_size (Mixtral, gpt-oss, Llama 4, OLMoE, Granite MoE).
  auto expert_width = first_int(f, {"moe_intermediate_size", "expert_intermediate_size"}, 1, kMaxWidth);
  moe.expert_intermediate =
      expert_width ? *expert_width : need_int(f, {"intermediate_size"}, 1, kMaxWidth, "the expert MLP width");
  if (auto shared = first_int(f, {"n_shared_experts", "num_shared_experts"}, 0, kMaxExperts)) {
    moe.shared_experts = as_int(*shared);
  } else if (auto width = first_int(f, {"shared_expert_intermediate_size"}, 0, kMaxWidth); width && *width > 0) {
    // Qwen MoE has one shared expert of its own width; the struct counts shared experts in units
    // of the routed width, which the published models are a whole multiple of.
    moe.shared_experts = as_int((*width + moe.expert_intermediate / 2) / moe.expert_intermediate);
    if (*width % moe.expert_intermediate != 0)
      m.assumptions.push_back(
          fmt::format("shared expert width {} counted as {} routed-width experts", *width, moe.shared_experts));
  } else if (type == "llama4_text") {
    moe.shared_experts = 1;  // Llama 4: one shared expert beside the routed ones in every MoE layer
  }
  auto sparse = moe_layers(f, m.layers);
  moe.dense_layers = as_int(std::count(sparse.begin(), sparse.end(), false));
  if (moe.dense_layers > 0) {
    moe.dense_intermediate =
        type == "llama4_text" ? need_int(f, {"intermediate_size_mlp"}, 1, kMaxWidth, "the dense-layer MLP width")
        : expert_width        ? need_int(f, {"intermediate_size"}, 1, kMaxWidth, "the dense-layer MLP width")
                              : moe.expert_intermediate;
  }
  return moe;
}

/// Reads the decoder (or BERT/T5) of a config: `f` is the text part (the whole config, or
/// text_config of a vision-language model), `type` its model type.
Model read_text_model(const Fields& f, std::string type) {
  // Early Falcon checkpoints carry their pre-release model type names.
  if (type == "RefinedWeb" || type == "RefinedWebModel") type = "falcon";
  const bool gpt2 = type == "gpt2", bert = type == "bert", t5 = type == "t5", falcon = type == "falcon";
  const Layout* named = find_layout(type);
  if (!named && type.size() > 5 && type.ends_with("_text")) named = find_layout(type.substr(0, type.size() - 5));
  const Layout generic{};
  const Layout& lay = named ? *named : generic;

  Model m;
  m.family = !lay.family.empty() ? std::string(lay.family) : type;
  m.kind = bert ? ModelKind::encoder : t5 ? ModelKind::encoder_decoder : ModelKind::decoder;
  if (!named && !gpt2 && !bert && !t5 && !falcon)
    m.assumptions.push_back(
        fmt::format("model type {} read as a Llama-style decoder from its standard keys: gated MLP, "
                    "RMSNorm, rotary positions, biases only where attention_bias says so",
                    util::quote(type)));

  // Shape.
  if (t5) {
    m.encoder_layers = as_int(need_int(f, {"num_layers"}, 1, kMaxLayers, "the number of encoder layers"));
    m.layers = as_int(first_int(f, {"num_decoder_layers"}, 1, kMaxLayers).value_or(m.encoder_layers));
    m.hidden = need_int(f, {"d_model"}, 1, kMaxWidth, "the model width");
    m.heads = as_int(need_int(f, {"num_heads"}, 1, kMaxHeads, "the number of attention heads"));
  } else if (gpt2) {
    m.layers = as_int(need_int(f, {"n_layer", "num_hidden_layers"}, 1, kMaxLayers, "the number of layers"));
    m.hidden = need_int(f, {"n_embd", "hidden_size"}, 1, kMaxWidth, "the model width");
    m.heads = as_int(need_int(f, {"n_head", "num_attention_heads"}, 1, kMaxHeads, "the number of attention heads"));
  } else {
    m.layers = as_int(
        need_int(f, {"num_hidden_layers", "n_layer", "num_layers", "n_layers"}, 1, kMaxLayers, "the number of layers"));
    m.hidden = need_int(f, {"hidden_size", "n_embd", "d_model"}, 1, kMaxWidth, "the model width");
    m.heads = as_int(need_int(f, {"num_attention_heads", "n_head", "num_heads", "n_heads"}, 1, kMaxHeads,
                              "the number of attention heads"));
  }
  // ChatGLM's embedding is padded_vocab_size rows; vocab_size there is the tokenizer's.
  m.vocab = need_int(f, {"padded_vocab_size", "vocab_size"}, 1, kMaxVocab, "the vocabulary size");

  // Key/value heads: GQA configs say so; Falcon has its own keys and defaults (multi-query unless
  // the new decoder architecture gives num_kv_heads); GPT-BigCode and ChatGLM flag multi-query.
  std::string kv_key = "num_key_value_heads";
  if (falcon) {
    bool new_arch = f.opt_bool("new_decoder_architecture").value_or(false);
    kv_key = "num_kv_heads";
    if (new_arch) {
      m.kv_heads = as_int(first_int(f, {"num_kv_heads"}, 1, kMaxHeads).value_or(m.heads));
    } else if (f.opt_bool("multi_query").value_or(true)) {
      m.kv_heads = 1;
      kv_key = "multi_query";
    } else {
      m.kv_heads = m.heads;
    }
  } else if (type == "gpt_bigcode") {
    m.kv_heads = f.opt_bool("multi_query").value_or(true) ? 1 : m.heads;
    kv_key = "multi_query";
  } else if (f.has("multi_query_group_num") && f.opt_bool("multi_query_attention").value_or(true)) {
    m.kv_heads = as_int(f.integer("multi_query_group_num", 1, kMaxHeads));
    kv_key = "multi_query_group_num";
  } else {
    m.kv_heads =
        as_int(first_int(f, {"num_key_value_heads", "num_kv_heads", "n_head_kv"}, 1, kMaxHeads).value_or(m.heads));
  }
  if (m.heads % m.kv_heads != 0)
    f.fail(kv_key, fmt::format("{} key/value heads do not divide the {} attention heads", m.kv_heads, m.heads));

  // Multi-head latent attention (DeepSeek, Kimi): the query/key head is the no-RoPE part plus the RoPE part.
  if (f.has("kv_lora_rank")) {
    Mla mla;
    mla.kv_lora_rank = as_int(need_int(f, {"kv_lora_rank"}, 1, kMaxWidth, "the latent KV rank"));
    mla.q_lora_rank = as_int(first_int(f, {"q_lora_rank"}, 1, kMaxWidth).value_or(0));
    mla.qk_rope_head_dim = as_int(need_int(f, {"qk_rope_head_dim"}, 1, kMaxWidth, "the RoPE head dimension"));
    mla.qk_nope_head_dim = as_int(need_int(f, {"qk_nope_head_dim"}, 1, kMaxWidth, "the non-RoPE head dimension"));
    mla.v_head_dim = as_int(need_int(f, {"v_head_dim"}, 1, kMaxWidth, "the value head dimension"));
    m.mla = mla;
    m.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
  } else if (type.starts_with("deepseek")) {
    need_int(f, {"kv_lora_rank"}, 1, kMaxWidth, "the latent KV rank");
  } else if (auto hd =
                 first_int(f,
                           t5 ? std::initializer_list<const char*>{"d_kv"}
                              : std::initializer_list<const char*>{"head_dim", "kv_channels", "attention_head_dim"},
                           1, kMaxWidth)) {
    m.head_dim = *hd;
  } else {
    if (m.hidden % m.heads != 0)
      f.fail(t5     ? "num_heads"
             : gpt2 ? "n_head"
                    : "num_attention_heads",
             fmt::format("{} heads do not divide the model width {}, and the config gives no {}", m.heads, m.hidden,
                         t5 ? "d_kv" : "head_dim"));
    m.head_dim = m.hidden / m.heads;
  }

  // MLP width and mixture of experts.
  if (t5) {
    m.intermediate = need_int(f, {"d_ff"}, 1, kMaxWidth, "the MLP width");
  } else if (auto moe = read_moe(f, type, m)) {
    m.intermediate = moe->expert_intermediate;
    m.moe = moe;
  } else if (auto v = first_int(f, {"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim"}, 1, kMaxWidth)) {
    m.intermediate = *v;
  } else if (gpt2 || falcon || !lay.gated) {
    m.intermediate = 4 * m.hidden;
    m.assumptions.push_back(fmt::format("no MLP width in the config: the {} default 4 x hidden size", type));
  } else {
    m.intermediate = need_int(f, {"intermediate_size", "ffn_hidden_size"}, 1, kMaxWidth, "the MLP width");
  }
  if (type == "mpt" && f.has("expansion_ratio"))
    m.intermediate = std::llround(f.num("expansion_ratio") * static_cast<double>(m.hidden));

  // Embeddings: the transformers class defaults apply when the key is absent.
  bool tied_default = gpt2 || bert || t5 || falcon || lay.tied;
  m.tied_embeddings = f.opt_bool("tie_word_embeddings").value_or(tied_default);

  if (t5) {
    std::string proj = f.opt_str("feed_forward_proj").value_or("relu");
    m.gated_mlp = util::starts_with(proj, "gated-");
  } else {
    m.gated_mlp = !(gpt2 || bert || falcon) && lay.gated;
  }

  if (gpt2 || bert || lay.bias == 'a') {
    m.bias = type == "gptj" ? false : f.opt_bool("use_bias").value_or(f.opt_bool("attention_bias").value_or(true));
    if (type == "gpt_oss") m.bias = true;
  } else if (falcon) {
    m.bias = f.opt_bool("bias").value_or(false);
  } else if (t5 || lay.bias == 'q') {
    // Q/K/V biases (Qwen2 counts them from its family); ChatGLM says so in add_qkv_bias.
    m.bias = false;
    m.qkv_bias = type == "qwen2" || type == "qwen2_moe" ||
                 f.opt_bool("add_qkv_bias").value_or(f.opt_bool("attention_bias").value_or(!t5));
  } else if (f.has("use_qkv_bias") || f.has("qkv_bias")) {
    m.qkv_bias = f.opt_bool("use_qkv_bias").value_or(f.opt_bool("qkv_bias").value_or(false));
  } else {
    m.bias = f.opt_bool("attention_bias").value_or(false);
    if (auto mlp_bias = f.opt_bool("mlp_bias"); mlp_bias && *mlp_bias != m.bias)
      m.assumptions.push_back(
          fmt::format("attention_bias {} and mlp_bias {} differ: bias taken from attention_bias", m.bias, *mlp_bias));
  }

  m.norm = gpt2 || bert || falcon || lay.layernorm ? "layernorm" : "rmsnorm";
  if (gpt2) {
    m.position = "learned";
  } else if (bert) {
    std::string pos = f.opt_str("position_embedding_type").value_or("absolute");
    m.position = pos == "absolute" ? "learned" : "relative";
  } else if (t5) {
    m.position = "relative";
  } else if (falcon) {
    m.position = f.opt_bool("alibi").value_or(false) ? "alibi" : "rope";
  } else if (type == "baichuan" && !f.has("rope_theta") && m.layers == 40) {
    m.position = "alibi";  // Baichuan 13B models use ALiBi, the 7B ones RoPE
  } else {
    m.position = std::string(lay.position);
  }

  if (gpt2) {
    m.max_context = first_int(f, {"n_positions", "n_ctx"}, 1, kMaxContext).value_or(0);
  } else if (t5) {
    m.max_context = first_int(f, {"n_positions"}, 1, kMaxContext).value_or(0);
  } else {
    m.max_context = max_context_of(f);
  }
  if (m.position == "learned" && m.max_context == 0)
    f.fail(gpt2 ? "n_positions" : "max_position_embeddings", "missing; learned positions need the table size");
  if (m.max_context == 0) m.assumptions.push_back("context length unknown: the config gives none");

  if (!t5 && !bert) {
    auto a = attention_layout(f, type, m.layers);
    m.sliding_layers = a.sliding_layers;
    m.sliding_window = a.window;
    if (!a.note.empty()) m.assumptions.push_back(a.note);
  }
  if (auto mtp = first_int(f, {"num_nextn_predict_layers"}, 0, kMaxLayers); mtp && *mtp > 0)
    m.assumptions.push_back(
        fmt::format("{} multi-token-prediction layer{} (num_nextn_predict_layers) not counted: "
                    "inference engines load {} only for speculative decoding",
                    *mtp, *mtp == 1 ? "" : "s", *mtp == 1 ? "it" : "them"));
  m.params = 0;  // the caller counts them (count_params)
  return m;
}

}  // namespace

Model model_from_hf_config(const util::JsonDoc& doc) {
  Fields root(doc, doc.root(), "", "");
  if (!root.has("model_type")) {
    root.fail("model_type", "missing; a Hugging Face config.json names its model_type (llama, qwen3, gemma3, ...)");
  }
  const std::string outer = root.str("model_type");
  // Vision-language models: the text backbone is text_config (or, in Qwen2-VL and Qwen2.5-VL,
  // the top level), the vision tower vision_config.
  const bool wrapped = root.has("text_config");
  std::string type = outer;
  if (wrapped) {
    Fields t(doc, root.raw("text_config"), "/text_config", "text_config");
    type = t.opt_str("model_type").value_or("");
  }
  if (type.empty() || type == outer) {
    if (auto t = text_type_of(outer); !t.empty()) type = std::string(t);
  }
  // A text_config leaves out what equals its class defaults: google/gemma-3-4b-it gives neither
  // heads nor vocabulary (Gemma3TextConfig), llava-hf/llava-1.5-7b-hf no sizes at all (LlamaConfig).
  // Those defaults fill the gaps, and the model says so.
  util::Json text_json = wrapped ? root.raw("text_config") : util::Json::object();
  std::vector<std::string> defaulted;
  using Defaults = std::vector<std::pair<const char*, std::int64_t>>;
  static const std::map<std::string_view, Defaults> class_defaults = {
      {"gemma3_text",
       {{"num_attention_heads", 8},
        {"num_key_value_heads", 4},
        {"head_dim", 256},
        {"vocab_size", 262208},
        {"max_position_embeddings", 131072}}},
      {"llama",
       {{"hidden_size", 4096},
        {"intermediate_size", 11008},
        {"num_hidden_layers", 32},
        {"num_attention_heads", 32},
        {"vocab_size", 32000},
        {"max_position_embeddings", 2048}}},
  };
  if (auto it = class_defaults.find(type); wrapped && it != class_defaults.end() && text_json.is_object())
    for (const auto& [key, value] : it->second)
      if (!text_json.contains(key)) {
        text_json[key] = value;
        defaulted.push_back(fmt::format("{} {}", key, value));
      }
  std::optional<Fields> text;
  if (wrapped) text.emplace(doc, text_json, "/text_config", "text_config");
  const Fields& f = wrapped ? *text : root;
  if (wrapped && type.empty())
    f.fail("model_type",
           fmt::format("missing; the text backbone of a {} config needs its model type", util::quote(outer)));

  Model m;
  try {
    m = read_text_model(f, type);
  } catch (const Error& e) {
    // A type read by the generic path names itself when a key is missing: it may be a typo.
    if (find_layout(type) || type == "gpt2" || type == "bert" || type == "t5" || type == "falcon") throw;
    std::vector<std::string> names;
    for (const auto& l : layouts()) names.emplace_back(l.type);
    throw Error(fmt::format("{} (model type {} is not one gpuadvisor knows{}, so it was read from the standard keys)",
                            e.what(), util::quote(type), util::did_you_mean(type, names)),
                e.code());
  }
  m.origin = doc.origin();
  if (!defaulted.empty())
    m.assumptions.push_back(
        fmt::format("text_config leaves out {}: the transformers {} defaults", util::join(defaulted, ", "), type));
  if (type != outer) m.family = m.family == type ? outer : m.family;
  if (root.has("vision_config")) {
    // Qwen2-VL configs give only what differs from Qwen2VLVisionConfig's defaults (the 7B and
    // 72B releases: none of the tower's sizes); those defaults fill the gaps, and the model says so.
    util::Json vision_json = root.raw("vision_config");
    if (outer == "qwen2_vl" && vision_json.is_object()) {
      static const std::vector<std::pair<const char*, std::int64_t>> defaults = {
          {"depth", 32},      {"embed_dim", 1280},       {"mlp_ratio", 4},          {"num_heads", 16},
          {"patch_size", 14}, {"spatial_merge_size", 2}, {"temporal_patch_size", 2}};
      std::vector<std::string> filled;
      for (const auto& [key, value] : defaults)
        if (!vision_json.contains(key) &&
            !(std::string_view(key) == "patch_size" && vision_json.contains("spatial_patch_size"))) {
          vision_json[key] = value;
          filled.push_back(fmt::format("{} {}", key, value));
        }
      if (!filled.empty())
        m.assumptions.push_back(fmt::format(
            "vision_config leaves out {}: the transformers Qwen2VLVisionConfig defaults", util::join(filled, ", ")));
      if (!vision_json.contains("patch_size") && vision_json.contains("spatial_patch_size"))
        vision_json["patch_size"] = vision_json["spatial_patch_size"];
    }
    Fields v(doc, vision_json, "/vision_config", "vision_config");
    m.extra_params = vision_params(v, outer, m.hidden, m.assumptions);
  }
  if (auto p = root.opt_str("_name_or_path"); p && !p->empty()) {
    m.id = *p;
    m.name = *p;
  } else {
    m.id = "config";
    m.name = fmt::format("{} model from {}", outer, doc.origin());
  }
  return m;
}

// ------------------------------------------------------------------------------------------------
// Weight file headers

namespace {

constexpr std::uint64_t kMaxSafetensorsHeader = 100'000'000;  // the safetensors library's own limit
constexpr std::uint64_t kMaxGgufCount = 1'000'000;
constexpr std::uint64_t kMaxGgufString = 1u << 20;
// Totals over a whole GGUF header (docs/limits.md): real files hold one tokenizer of at most a few
// hundred thousand tokens and merges, a few MB of text, and tensor names of under 64 bytes
// (GGML_MAX_NAME).
constexpr std::uint64_t kMaxGgufElements = std::uint64_t{1} << 24;       // array elements, all arrays
constexpr std::uint64_t kMaxGgufStringBytes = std::uint64_t{256} << 20;  // keys, string values, names
constexpr std::uint64_t kMaxGgufTensorName = 256;
// safetensors headers: tensors per file (real checkpoints hold tens of thousands at most).
constexpr std::size_t kMaxSafetensorsTensors = 500'000;
constexpr std::uint32_t kMaxGgufDims = 4;  // GGML_MAX_DIMS
constexpr int kMaxGgufArrayDepth = 4;
// Element counts beyond 2^62 are nonsense; the bound also keeps every product below overflow.
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 62;

/// a * b, or nullopt when it exceeds `limit` (no overflow on the way).
std::optional<std::uint64_t> mul_capped(std::uint64_t a, std::uint64_t b, std::uint64_t limit = kMaxElements) {
  if (a != 0 && b > limit / a) return std::nullopt;
  return a * b;
}

/// A file read front to back in which every read is checked against the real file size first, so
/// a lying length field gives a clean error instead of a huge allocation or a short read.
class Reader {
 public:
  Reader(std::string path, std::string what) : path_(std::move(path)), what_(std::move(what)) {
    std::error_code ec;
    auto st = fs::status(path_, ec);
    if (st.type() == fs::file_type::not_found) throw Error(fmt::format("{}: no such file", path_));
    if (ec) throw Error(fmt::format("{}: cannot open file: {}", path_, util::os_error(ec.value())));
    if (fs::is_directory(st)) throw Error(fmt::format("{}: is a directory, expected a model file", path_));
    // Lengths are checked against the file's size, and a pipe or device has none (a named pipe
    // with no writer would also block the open).
    if (!fs::is_regular_file(st))
      throw Error(fmt::format("{}: not a regular file ({}), expected a model file", path_,
                              fs::is_fifo(st)             ? "a named pipe"
                              : fs::is_character_file(st) ? "a device"
                                                          : "a special file"));
    size_ = fs::file_size(path_, ec);
    if (ec) throw Error(fmt::format("{}: cannot read file size: {}", path_, util::os_error(ec.value())));
    errno = 0;
    in_.open(path_, std::ios::binary);
    if (!in_) throw Error(fmt::format("{}: cannot open file: {}", path_, util::os_error(errno ? errno : EACCES)));
  }

  const std::string& path() const { return path_; }
  std::uint64_t size() const { return size_; }
  std::uint64_t pos() const { return pos_; }
  std::uint64_t left() const { return size_ - pos_; }

  /// Throws "truncated <what> at byte N" unless `n` more bytes are there.
  void need(std::uint64_t n) const {
    if (n > left()) truncated();
  }
  [[noreturn]] void truncated() const { throw Error(fmt::format("{}: truncated {} at byte {}", path_, what_, pos_)); }
  void read(void* dst, std::uint64_t n) {
    need(n);
    in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
    if (!in_) throw Error(fmt::format("{}: cannot read byte {}", path_, pos_));
    pos_ += n;
  }
  void skip(std::uint64_t n) {
    need(n);
    // Small skips read through the stream's buffer; a seek would drop it on every string of a
    // tokenizer array (150,000 of them in a real file).
    if (n <= scratch_.size()) {
      read(scratch_.data(), n);
      return;
    }
    in_.seekg(static_cast<std::streamoff>(n), std::ios::cur);
    if (!in_) throw Error(fmt::format("{}: cannot read byte {}", path_, pos_));
    pos_ += n;
  }
  std::string bytes(std::uint64_t n) {
    need(n);
    std::string s(static_cast<std::size_t>(n), '\0');
    read(s.data(), n);
    return s;
  }
  /// Little-endian unsigned integer of sizeof(T) bytes, whatever the host byte order.
  template <typename T>
  T le() {
    std::array<unsigned char, sizeof(T)> b{};
    read(b.data(), b.size());
    T v = 0;
    for (std::size_t i = b.size(); i-- > 0;) v = static_cast<T>((v << 8) | b[i]);
    return v;
  }

 private:
  std::string path_;
  std::string what_;
  std::ifstream in_;
  std::uint64_t size_ = 0;
  std::uint64_t pos_ = 0;
  std::array<char, 4096> scratch_{};

 public:
  /// Work done on metadata so far, against the caps of a format (GGUF arrays and strings).
  std::uint64_t elements = 0;
  std::uint64_t string_bytes = 0;
};

/// One file's (or several shards') tensors, before they become a TensorStats.
struct Tally {
  double params = 0;
  double bytes = 0;
  std::map<std::string, int> dtypes;
  std::set<std::string> names;
  int packed = 0;  ///< GPTQ/AWQ .qweight tensors

  void add(const Tally& o) {
    packed += o.packed;
    params += o.params;
    bytes += o.bytes;
    for (const auto& [d, n] : o.dtypes) dtypes[d] += n;
    names.insert(o.names.begin(), o.names.end());
  }
  /// "BF16 x 291, F32 x 65": most common first, ties by name so the text is stable.
  std::string summary() const {
    std::vector<std::pair<std::string, int>> v(dtypes.begin(), dtypes.end());
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string out;
    for (const auto& [d, n] : v) out += fmt::format("{}{} x {}", out.empty() ? "" : ", ", d, n);
    if (packed > 0) out += fmt::format(" ({} GPTQ/AWQ qweight tensors counted as 4-bit, 8 weights per int32)", packed);
    return out;
  }
};

/// A tensor's byte range in the data section, for the overlap check.
struct Span {
  std::string name;
  std::uint64_t begin;
  std::uint64_t end;
};

void check_no_overlap(const std::string& path, std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  for (std::size_t i = 1; i < spans.size(); ++i) {
    const Span& a = spans[i - 1];
    const Span& b = spans[i];
    if (b.begin < a.end)
      throw Error(fmt::format("{}: tensors {} (bytes {}-{}) and {} (bytes {}-{}) overlap", path, quote(a.name), a.begin,
                              a.end, quote(b.name), b.begin, b.end));
  }
}

std::string pointer_escape(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

util::JsonDoc json_or_throw(const std::string& path, std::optional<std::string> text) {
  auto doc = text ? util::JsonDoc::parse(std::move(*text), path) : util::JsonDoc::load(path);
  if (!doc) throw Error(doc.error());
  return std::move(doc).value();
}

using util::ends_with;

/// What a Git LFS pointer file says ("version https://git-lfs.github.com/spec/v1", "oid sha256:...",
/// "size N"): the file a clone without git-lfs leaves in place of the weights. nullopt otherwise.
std::optional<std::string> lfs_pointer(const std::string& path) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec || size > 1024) return std::nullopt;  // pointers are about 130 bytes
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  if (!util::starts_with(text, "version https://git-lfs.github.com/spec/")) return std::nullopt;
  std::string bytes;
  if (auto at = text.find("\nsize "); at != std::string::npos) {
    auto end = text.find('\n', at + 6);
    bytes = text.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
    if (bytes.empty() || bytes.size() > 20 || bytes.find_first_not_of("0123456789") != std::string::npos) bytes.clear();
  }
  if (bytes.empty()) return std::string("a Git LFS pointer");
  return fmt::format("a Git LFS pointer to {} bytes ({})", util::format_number(std::stod(bytes)),
                     util::format_bytes(std::stod(bytes)));
}

[[noreturn]] void lfs_error(const std::string& path, const std::string& what) {
  throw Error(
      fmt::format("{}: {}, not the weights (the clone was made without git-lfs): run 'git lfs pull' there, "
                  "or give the .safetensors.index.json, whose metadata.total_size is read",
                  path, what));
}

// ---- safetensors

std::optional<std::uint64_t> safetensors_dtype_size(const std::string& dtype) {
  static const std::map<std::string, std::uint64_t, std::less<>> sizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},  {"I32", 4},     {"I16", 2},     {"I8", 1},
      {"U64", 8}, {"U32", 4}, {"U16", 2}, {"U8", 1},   {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"F8_E8M0", 1}};
  auto it = sizes.find(dtype);
  if (it == sizes.end()) return std::nullopt;
  return it->second;
}

std::string dims_text(const std::vector<std::uint64_t>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", dims[i]);
  return s + "]";
}

// A list of whole numbers >= 0 from a safetensors header field.
std::vector<std::uint64_t> uint_list(const Fields& t, const std::string& key) {
  const util::Json& v = t.raw(key);
  if (!v.is_array()) t.fail(key, "expected a list of whole numbers, got " + util::json_snippet(v));
  std::vector<std::uint64_t> out;
  for (const auto& x : v) {
    if (!x.is_number_unsigned() && !(x.is_number_integer() && x.get<std::int64_t>() >= 0))
      t.fail(key, "expected whole numbers >= 0, got " + util::json_snippet(x));
    out.push_back(x.get<std::uint64_t>());
  }
  return out;
}

Tally read_safetensors(const std::string& path) {
  Reader in(path, "safetensors header");
  if (in.size() == 0) throw Error(fmt::format("{}: empty file, expected a safetensors header", path));
  auto n = in.le<std::uint64_t>();
  if (n > kMaxSafetensorsHeader)
    throw Error(fmt::format("{}: safetensors header length {} is over the 100 MB limit", path, n));
  if (n > in.left())
    throw Error(
        fmt::format("{}: safetensors header length {} runs past the end of the file ({} bytes)", path, n, in.size()));
  std::string text = in.bytes(n);
  const std::uint64_t data_size = in.left();

  auto doc = json_or_throw(path, std::move(text));
  Fields root(doc, doc.root(), "", "safetensors header");  // throws unless the header is an object

  if (doc.root().size() > kMaxSafetensorsTensors)
    throw Error(fmt::format("{}: the safetensors header lists {} tensors, over the limit of {}", path,
                            doc.root().size(), kMaxSafetensorsTensors));
  Tally tally;
  std::vector<Span> spans;
  for (const auto& [name, value] : doc.root().items()) {
    if (name == "__metadata__") continue;
    Fields t(doc, value, "/" + pointer_escape(name), "tensor " + quote(name));
    std::string dtype = t.str("dtype");
    auto esize = safetensors_dtype_size(dtype);
    if (!esize)
      t.fail("dtype", fmt::format("unknown dtype {} (expected F64, F32, F16, BF16, F8_E4M3, F8_E5M2, I64, I32, I16, "
                                  "I8, U8 or BOOL)",
                                  quote(dtype)));
    auto shape = uint_list(t, "shape");
    if (shape.size() > 16) t.fail("shape", fmt::format("{} dimensions, at most 16 expected", shape.size()));
    std::optional<std::uint64_t> count = 1;
    for (auto d : shape)
      if (count) count = mul_capped(*count, d);
    std::optional<std::uint64_t> need = count ? mul_capped(*count, *esize) : std::nullopt;
    if (!need) t.fail("shape", fmt::format("{} has too many elements", dims_text(shape)));
    auto offsets = uint_list(t, "data_offsets");
    if (offsets.size() != 2)
      t.fail("data_offsets", fmt::format("expected [begin, end], got {} numbers", offsets.size()));
    auto [begin, end] = std::pair{offsets[0], offsets[1]};
    if (begin > end) t.fail("data_offsets", fmt::format("begin {} is after end {}", begin, end));
    if (end > data_size)
      t.fail("data_offsets",
             fmt::format("end {} is past the end of the file ({} data bytes after the header)", end, data_size));
    if (end - begin != *need)
      t.fail("data_offsets",
             fmt::format("spans {} bytes, but {} {} needs {}", end - begin, dtype, dims_text(shape), *need));
    // GPTQ and AWQ pack eight 4-bit weights into each int32 of a .qweight; their .qzeros, .scales
    // and .g_idx are quantization state, not weights.
    const bool packed = dtype == "I32" && ends_with(name, ".qweight");
    const bool quant_state = ends_with(name, ".qzeros") || ends_with(name, ".scales") || ends_with(name, ".g_idx");
    if (packed) {
      tally.params += 8.0 * static_cast<double>(*count);
      tally.packed += 1;
    } else if (!quant_state) {
      tally.params += static_cast<double>(*count);
    }
    tally.bytes += static_cast<double>(*need);
    tally.dtypes[dtype] += 1;
    tally.names.insert(name);
    spans.push_back({name, begin, end});
  }
  if (spans.empty()) throw Error(fmt::format("{}: the safetensors header lists no tensors", path));
  check_no_overlap(path, std::move(spans));
  return tally;
}

// ---- model.safetensors.index.json

TensorStats read_index(const std::string& path) {
  auto doc = json_or_throw(path, std::nullopt);
  Fields root(doc, doc.root(), "", "");
  const util::Json& weight_map = root.raw("weight_map");
  Fields map(doc, weight_map, "/weight_map", "weight_map");
  std::optional<std::uint64_t> total_size, total_parameters;
  if (root.has("metadata")) {
    Fields meta(doc, root.raw("metadata"), "/metadata", "metadata");
    if (auto v = meta.opt_integer("total_size", 0, std::numeric_limits<std::int64_t>::max()))
      total_size = static_cast<std::uint64_t>(*v);
    // Written by newer huggingface_hub / transformers (mistralai/Devstral-Small-2507).
    if (auto v = meta.opt_integer("total_parameters", 1, std::int64_t{1} << 52))
      total_parameters = static_cast<std::uint64_t>(*v);
  }

  // Shards in the order they first appear, each with the tensors the index puts there.
  std::vector<std::string> shards;
  std::map<std::string, std::vector<std::string>> mapped;
  for (const auto& [name, value] : weight_map.items()) {
    std::string shard = map.str(name);
    fs::path p(shard);
    bool escapes = p.is_absolute() || shard.empty() ||
                   std::any_of(p.begin(), p.end(), [](const fs::path& c) { return c == ".."; });
    if (escapes) map.fail(name, fmt::format("shard {} must be a file name beside the index", quote(shard)));
    if (!mapped.count(shard)) shards.push_back(shard);
    mapped[shard].push_back(name);
  }
  if (shards.empty()) throw Error(fmt::format("{}: weight_map lists no tensors", path));

  fs::path dir = fs::path(path).parent_path();
  std::size_t missing = 0, pointers = 0;
  for (const auto& s : shards) {
    std::error_code ec;
    if (!fs::is_regular_file(dir / s, ec))
      ++missing;
    else if (lfs_pointer((dir / s).string()))
      ++pointers;
  }

  TensorStats stats;
  stats.origin = path;
  if (missing + pointers > 0) {
    // Only the index came down (or Git LFS pointers in place of the shards): its total is the
    // weight bytes; the parameter count is unknown.
    std::string why = missing > 0 && pointers > 0 ? fmt::format("{} of {} shards absent and {} Git LFS pointers",
                                                                missing, shards.size(), pointers)
                      : missing > 0 ? fmt::format("{} of {} shards not beside the index", missing, shards.size())
                                    : fmt::format("{} of {} shards are Git LFS pointers", pointers, shards.size());
    if (!total_size) throw Error(fmt::format("{}: {} and the index has no metadata.total_size", path, why));
    stats.params = total_parameters ? static_cast<double>(*total_parameters) : 0;
    stats.bytes = static_cast<double>(*total_size);
    // The dtype from bytes per parameter where it is a whole 4, 2 or 1; unknown otherwise.
    const double per = total_parameters ? stats.bytes / stats.params : 0;
    stats.dtypes = per == 4 ? "F32" : per == 2 ? "BF16 or F16" : per == 1 ? "8-bit" : "unknown dtypes";
    stats.note = fmt::format("{}: weight bytes from the index's metadata.total_size, {}", why,
                             total_parameters ? "parameters from its metadata.total_parameters" : "parameters unknown");
    return stats;
  }

  Tally all;
  for (const auto& s : shards) {
    std::string shard_path = (dir / s).string();
    if (!ends_with(util::lower(s), ".safetensors"))
      throw Error(fmt::format("{}: shard {} is not a .safetensors file", path, quote(s)));
    Tally t = read_safetensors(shard_path);
    for (const auto& name : mapped[s])
      if (!t.names.count(name))
        throw Error(
            fmt::format("{}: tensor {} is mapped to {}, whose header does not list it", path, quote(name), quote(s)));
    all.add(t);
  }
  stats.params = all.params;
  stats.bytes = all.bytes;
  stats.dtypes = all.summary();
  return stats;
}

// ---- GGUF

/// A ggml tensor type: elements per block and bytes per block (ggml-common.h block structs).
struct GgmlType {
  const char* name;
  std::uint32_t block;
  std::uint32_t bytes;
};

/// Indexed by ggml_type id (ggml.h); ids 4, 5 and 31-33, 36-38 were removed from GGUF files.
std::optional<GgmlType> ggml_type(std::uint32_t id) {
  static const std::map<std::uint32_t, GgmlType> types = {
      {0, {"F32", 1, 4}},         {1, {"F16", 1, 2}},         {2, {"Q4_0", 32, 18}},      {3, {"Q4_1", 32, 20}},
      {6, {"Q5_0", 32, 22}},      {7, {"Q5_1", 32, 24}},      {8, {"Q8_0", 32, 34}},      {9, {"Q8_1", 32, 36}},
      {10, {"Q2_K", 256, 84}},    {11, {"Q3_K", 256, 110}},   {12, {"Q4_K", 256, 144}},   {13, {"Q5_K", 256, 176}},
      {14, {"Q6_K", 256, 210}},   {15, {"Q8_K", 256, 292}},   {16, {"IQ2_XXS", 256, 66}}, {17, {"IQ2_XS", 256, 74}},
      {18, {"IQ3_XXS", 256, 98}}, {19, {"IQ1_S", 256, 50}},   {20, {"IQ4_NL", 32, 18}},   {21, {"IQ3_S", 256, 110}},
      {22, {"IQ2_S", 256, 82}},   {23, {"IQ4_XS", 256, 136}}, {24, {"I8", 1, 1}},         {25, {"I16", 1, 2}},
      {26, {"I32", 1, 4}},        {27, {"I64", 1, 8}},        {28, {"F64", 1, 8}},        {29, {"IQ1_M", 256, 56}},
      {30, {"BF16", 1, 2}},       {34, {"TQ1_0", 256, 54}},   {35, {"TQ2_0", 256, 66}},   {39, {"MXFP4", 32, 17}}};
  auto it = types.find(id);
  if (it == types.end()) return std::nullopt;
  return it->second;
}

enum GgufValue : std::uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

std::optional<std::uint64_t> gguf_fixed_size(std::uint32_t type) {
  switch (type) {
    case kU8:
    case kI8:
    case kBool:
      return 1;
    case kU16:
    case kI16:
      return 2;
    case kU32:
    case kI32:
    case kF32:
      return 4;
    case kU64:
    case kI64:
    case kF64:
      return 8;
    default:
      return std::nullopt;
  }
}

/// The length of the string at the reader, checked against the per-string and total caps.
std::uint64_t gguf_string_length(Reader& in, std::uint64_t limit = kMaxGgufString) {
  std::uint64_t at = in.pos();
  auto n = in.le<std::uint64_t>();
  if (n > limit)
    throw Error(fmt::format("{}: GGUF string at byte {} is {} bytes long, over the {} limit", in.path(), at, n,
                            limit == kMaxGgufString ? std::string("1 MiB") : fmt::format("{}-byte", limit)));
  in.string_bytes += n;
  if (in.string_bytes > kMaxGgufStringBytes)
    throw Error(fmt::format("{}: GGUF strings at byte {} add up to more than 256 MiB", in.path(), at));
  return n;
}

std::string gguf_string(Reader& in, std::uint64_t limit = kMaxGgufString) {
  return in.bytes(gguf_string_length(in, limit));
}

void skip_gguf_string(Reader& in) { in.skip(gguf_string_length(in)); }

void count_gguf_elements(Reader& in, std::uint64_t count, const std::string& key) {
  in.elements += count;
  if (in.elements > kMaxGgufElements)
    throw Error(fmt::format("{}: GGUF key {}: metadata arrays add up to more than {} elements", in.path(), quote(key),
                            kMaxGgufElements));
}

std::uint64_t skip_gguf_array(Reader& in, const std::string& key, int depth);

void skip_gguf_value(Reader& in, std::uint32_t type, const std::string& key, int depth) {
  if (auto size = gguf_fixed_size(type)) {
    in.skip(*size);
  } else if (type == kString) {
    skip_gguf_string(in);
  } else if (type == kArray) {
    skip_gguf_array(in, key, depth);
  } else {
    throw Error(
        fmt::format("{}: GGUF key {}: unknown value type {} at byte {}", in.path(), quote(key), type, in.pos() - 4));
  }
}

/// Skips an array value (after its type), returning its element count.
std::uint64_t skip_gguf_array(Reader& in, const std::string& key, int depth) {
  if (depth >= kMaxGgufArrayDepth)
    throw Error(
        fmt::format("{}: GGUF key {}: arrays nested deeper than {}", in.path(), quote(key), kMaxGgufArrayDepth));
  auto elem = in.le<std::uint32_t>();
  auto count = in.le<std::uint64_t>();
  if (auto esize = gguf_fixed_size(elem)) {
    // count * esize can overflow; comparing count with what is left cannot.
    if (count > in.left() / *esize) in.truncated();
    in.skip(count * *esize);
  } else if (elem == kString || elem == kArray) {
    // Every string is at least its 8-byte length, every array its 12-byte prefix; and the elements
    // of all arrays together are capped, so a file of many tiny strings ends early.
    if (count > in.left() / 8) in.truncated();
    count_gguf_elements(in, count, key);
    for (std::uint64_t i = 0; i < count; ++i) skip_gguf_value(in, elem, key, depth + 1);
  } else {
    throw Error(fmt::format("{}: GGUF key {}: unknown array element type {} at byte {}", in.path(), quote(key), elem,
                            in.pos() - 12));
  }
  return count;
}

TensorStats read_gguf(const std::string& path) {
  Reader in(path, "GGUF header");
  if (in.size() == 0) throw Error(fmt::format("{}: empty file, expected a GGUF header", path));
  std::string magic = in.bytes(4);
  if (magic != "GGUF")
    throw Error(fmt::format("{}: not a GGUF file (starts with {}, expected \"GGUF\")", path, quote(magic)));
  auto version = in.le<std::uint32_t>();
  if (version != 2 && version != 3) {
    std::uint32_t swapped =
        ((version & 0xffu) << 24) | ((version & 0xff00u) << 8) | ((version >> 8) & 0xff00u) | (version >> 24);
    if (swapped == 2 || swapped == 3) throw Error(fmt::format("{}: big-endian GGUF files are not supported", path));
    throw Error(fmt::format("{}: unsupported GGUF version {} (expected 2 or 3)", path, version));
  }
  auto tensor_count = in.le<std::uint64_t>();
  if (tensor_count > kMaxGgufCount)
    throw Error(fmt::format("{}: GGUF tensor count {} is over the limit of {}", path, tensor_count, kMaxGgufCount));
  auto kv_count = in.le<std::uint64_t>();
  if (kv_count > kMaxGgufCount)
    throw Error(fmt::format("{}: GGUF metadata count {} is over the limit of {}", path, kv_count, kMaxGgufCount));

  std::uint64_t alignment = 32;  // GGUF_DEFAULT_ALIGNMENT
  std::string architecture;
  std::map<std::string, std::uint64_t> numbers;  // whole-number metadata, by key
  std::uint64_t tokens = 0;
  for (std::uint64_t i = 0; i < kv_count; ++i) {
    std::string key = gguf_string(in);
    auto type = in.le<std::uint32_t>();
    if (key == "general.architecture" && type == kString) {
      architecture = gguf_string(in);
    } else if (type == kU32 || type == kI32 || type == kU64 || type == kI64 || type == kU16 || type == kI16) {
      std::uint64_t v = type == kU16 || type == kI16   ? in.le<std::uint16_t>()
                        : type == kU32 || type == kI32 ? in.le<std::uint32_t>()
                                                       : in.le<std::uint64_t>();
      // Negative values (signed types) are no shape: leave them out.
      bool negative =
          (type == kI16 && (v & 0x8000u)) || (type == kI32 && (v & 0x80000000u)) || (type == kI64 && (v >> 63));
      if (key == "general.alignment") {
        if (type != kU32)
          throw Error(
              fmt::format("{}: GGUF key \"general.alignment\" has value type {}, expected 4 (uint32)", path, type));
        alignment = v;
        if (alignment == 0 || (alignment & (alignment - 1)) != 0)
          throw Error(fmt::format("{}: GGUF general.alignment {} is not a power of two", path, alignment));
      } else if (!negative) {
        numbers[key] = v;
      }
    } else if (key == "tokenizer.ggml.tokens" && type == kArray) {
      tokens = skip_gguf_array(in, key, 0);
    } else if (key == "general.alignment") {
      if (type != kU32)
        throw Error(
            fmt::format("{}: GGUF key \"general.alignment\" has value type {}, expected 4 (uint32)", path, type));
      alignment = in.le<std::uint32_t>();
      if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        throw Error(fmt::format("{}: GGUF general.alignment {} is not a power of two", path, alignment));
    } else {
      skip_gguf_value(in, type, key, 0);
    }
  }

  struct Info {
    std::string name;
    std::string type;
    std::uint64_t elements;
    std::uint64_t bytes;
    std::uint64_t offset;
  };
  std::vector<Info> infos;
  for (std::uint64_t i = 0; i < tensor_count; ++i) {
    Info t;
    t.name = gguf_string(in, kMaxGgufTensorName);
    auto n_dims = in.le<std::uint32_t>();
    if (n_dims == 0 || n_dims > kMaxGgufDims)
      throw Error(
          fmt::format("{}: tensor {} has {} dimensions, expected 1 to {}", path, quote(t.name), n_dims, kMaxGgufDims));
    std::vector<std::uint64_t> dims;
    std::optional<std::uint64_t> count = 1;
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      dims.push_back(in.le<std::uint64_t>());
      if (count) count = mul_capped(*count, dims.back());
    }
    if (!count)
      throw Error(fmt::format("{}: tensor {} shape {} has too many elements", path, quote(t.name), dims_text(dims)));
    auto type_id = in.le<std::uint32_t>();
    auto type = ggml_type(type_id);
    if (!type) throw Error(fmt::format("{}: tensor {}: unsupported GGUF tensor type {}", path, quote(t.name), type_id));
    // ggml quantizes along rows: the first dimension holds whole blocks.
    if (dims[0] % type->block != 0)
      throw Error(fmt::format("{}: tensor {}: first dimension {} is not a multiple of the {} block size {}", path,
                              quote(t.name), dims[0], type->name, type->block));
    auto nbytes = mul_capped(*count / type->block, type->bytes);
    if (!nbytes)
      throw Error(fmt::format("{}: tensor {} shape {} has too many elements", path, quote(t.name), dims_text(dims)));
    t.type = type->name;
    t.elements = *count;
    t.bytes = *nbytes;
    t.offset = in.le<std::uint64_t>();
    infos.push_back(std::move(t));
  }
  if (infos.empty())
    throw Error(
        fmt::format("{}: the GGUF file lists no tensors (a vocabulary-only file, as llama.cpp's tokenizer "
                    "tests use?): no weights to count",
                    path));

  // Tensor data starts at the next multiple of the alignment after the header.
  std::uint64_t header_end = in.pos();
  std::uint64_t data_start = header_end + (alignment - header_end % alignment) % alignment;
  std::uint64_t data_size = data_start <= in.size() ? in.size() - data_start : 0;

  Tally tally;
  std::vector<Span> spans;
  for (const auto& t : infos) {
    if (t.offset > data_size || t.bytes > data_size - t.offset)
      throw Error(
          fmt::format("{}: tensor {} data ({} bytes at offset {} after the header) runs past the end of the "
                      "file ({} bytes)",
                      path, quote(t.name), t.bytes, t.offset, in.size()));
    tally.params += static_cast<double>(t.elements);
    tally.bytes += static_cast<double>(t.bytes);
    tally.dtypes[t.type] += 1;
    spans.push_back({t.name, t.offset, t.offset + t.bytes});
  }
  check_no_overlap(path, std::move(spans));

  TensorStats stats;
  stats.params = tally.params;
  stats.bytes = tally.bytes;
  stats.dtypes = tally.summary();
  stats.origin = path;
  if (!architecture.empty()) {
    // llama.cpp's key names (gguf-py constants.py): "{arch}.block_count", "{arch}.attention.head_count", ...
    auto get = [&](const std::string& suffix) -> std::int64_t {
      auto it = numbers.find(architecture + "." + suffix);
      return it == numbers.end() || it->second > (std::uint64_t{1} << 40) ? 0 : static_cast<std::int64_t>(it->second);
    };
    GgufShape g;
    g.architecture = architecture;
    g.layers = get("block_count");
    g.hidden = get("embedding_length");
    g.heads = get("attention.head_count");
    g.kv_heads = get("attention.head_count_kv");
    g.head_dim = get("attention.key_length");
    g.context = get("context_length");
    g.intermediate = get("feed_forward_length");
    g.experts = get("expert_count");
    g.experts_used = get("expert_used_count");
    g.kv_lora_rank = get("attention.kv_lora_rank");
    g.rope_dim = get("rope.dimension_count");
    g.sliding_window = get("attention.sliding_window");
    g.vocab = get("vocab_size") ? get("vocab_size")
                                : static_cast<std::int64_t>(std::min<std::uint64_t>(tokens, kMaxGgufElements));
    stats.shape = g;
  }
  if (auto it = numbers.find("split.count"); it != numbers.end() && it->second > 1) {
    stats.note = fmt::format("split {} of {}", numbers.count("split.no") ? numbers["split.no"] + 1 : 0, it->second);
  }
  return stats;
}

}  // namespace

namespace {

/// "model-00001-of-00003.gguf" -> the prefix, this part and the count; nullopt for other names.
struct SplitName {
  std::string prefix;
  int part = 0;
  int count = 0;
};
std::optional<SplitName> split_gguf_name(const std::string& path) {
  // llama.cpp's gguf-split names its parts PREFIX-%05d-of-%05d.gguf.
  std::string name = fs::path(path).filename().string();
  const std::string tail = ".gguf";
  if (name.size() < 15 + tail.size() || util::lower(name.substr(name.size() - tail.size())) != tail)
    return std::nullopt;
  std::string core = name.substr(0, name.size() - tail.size());
  auto digits = [](const std::string& t) {
    return t.size() == 5 && t.find_first_not_of("0123456789") == std::string::npos;
  };
  std::string of = core.substr(core.size() - 15);  // "-00001-of-00003"
  if (of[0] != '-' || of.substr(6, 4) != "-of-" || !digits(of.substr(1, 5)) || !digits(of.substr(10, 5)))
    return std::nullopt;
  SplitName s{(fs::path(path).parent_path() / core.substr(0, core.size() - 15)).string(), std::stoi(of.substr(1, 5)),
              std::stoi(of.substr(10, 5))};
  if (s.part < 1 || s.count < 1 || s.part > s.count) return std::nullopt;
  return s;
}

TensorStats read_split_gguf(const std::string& path, const SplitName& split) {
  TensorStats all;
  std::map<std::string, int> dtypes;
  for (int i = 1; i <= split.count; ++i) {
    std::string part = fmt::format("{}-{:05d}-of-{:05d}.gguf", split.prefix, i, split.count);
    std::error_code ec;
    if (!fs::is_regular_file(part, ec))
      throw Error(fmt::format("{}: part {} of the split GGUF set ({}) is not beside it", path, i, part));
    if (auto p = lfs_pointer(part)) lfs_error(part, *p);
    TensorStats t = read_gguf(part);
    all.params += t.params;
    all.bytes += t.bytes;
    if (t.shape && !all.shape) all.shape = t.shape;
    // Each part's summary is "TYPE x N, ..."; add them up by type.
    for (const auto& item : util::split(t.dtypes, ',')) {
      std::string one = std::string(util::trim(item));
      auto x = one.rfind(" x ");
      if (x != std::string::npos) dtypes[one.substr(0, x)] += std::stoi(one.substr(x + 3));
    }
  }
  std::vector<std::pair<std::string, int>> v(dtypes.begin(), dtypes.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [d, n] : v) all.dtypes += fmt::format("{}{} x {}", all.dtypes.empty() ? "" : ", ", d, n);
  all.origin = path;
  all.note = fmt::format("the {} parts of a split GGUF set", split.count);
  return all;
}

}  // namespace

TensorStats read_model_file(const std::string& path) {
  std::string low = util::lower(path);
  if (auto p = lfs_pointer(path)) lfs_error(path, *p);
  if (ends_with(low, ".index.json")) return read_index(path);
  if (ends_with(low, ".safetensors")) {
    Tally t = read_safetensors(path);
    TensorStats stats;
    stats.params = t.params;
    stats.bytes = t.bytes;
    stats.dtypes = t.summary();
    stats.origin = path;
    return stats;
  }
  if (ends_with(low, ".gguf")) {
    if (auto split = split_gguf_name(path); split && split->count > 1) return read_split_gguf(path, *split);
    return read_gguf(path);
  }
  throw Error(fmt::format("{}: expected a .safetensors, .safetensors.index.json or .gguf file", path));
}

Result<Model> model_from_gguf(const TensorStats& stats) {
  if (!stats.shape)
    return Result<Model>::fail(fmt::format("{}: the GGUF metadata names no general.architecture", stats.origin));
  const GgufShape& g = *stats.shape;
  std::vector<std::string> missing;
  if (g.layers <= 0) missing.push_back(g.architecture + ".block_count");
  if (g.hidden <= 0) missing.push_back(g.architecture + ".embedding_length");
  if (g.heads <= 0) missing.push_back(g.architecture + ".attention.head_count");
  if (!missing.empty())
    return Result<Model>::fail(fmt::format("{}: the GGUF metadata lacks {}: no shape for the KV cache", stats.origin,
                                           util::join(missing, ", ")));
  Model m;
  m.kind = ModelKind::decoder;
  m.family = g.architecture;
  m.layers = static_cast<int>(std::min<std::int64_t>(g.layers, kMaxLayers));
  m.hidden = std::min<std::int64_t>(g.hidden, kMaxWidth);
  m.heads = static_cast<int>(std::min<std::int64_t>(g.heads, kMaxHeads));
  m.kv_heads =
      g.kv_heads > 0 && g.kv_heads <= m.heads && m.heads % g.kv_heads == 0 ? static_cast<int>(g.kv_heads) : m.heads;
  m.head_dim = g.head_dim > 0 ? std::min<std::int64_t>(g.head_dim, kMaxWidth) : m.hidden / m.heads;
  m.intermediate = std::min<std::int64_t>(g.intermediate, kMaxWidth);
  m.vocab = std::min<std::int64_t>(g.vocab, kMaxVocab);
  m.max_context = std::min<std::int64_t>(g.context, kMaxContext);
  m.gated_mlp = true;
  m.norm = "rmsnorm";
  m.position = "rope";
  if (g.kv_lora_rank > 0) {
    Mla mla;
    mla.kv_lora_rank = static_cast<int>(std::min<std::int64_t>(g.kv_lora_rank, kMaxWidth));
    mla.qk_rope_head_dim = static_cast<int>(std::min<std::int64_t>(g.rope_dim, kMaxWidth));
    m.mla = mla;
  }
  if (g.experts > 1) {
    MoE moe;
    moe.experts = static_cast<int>(std::min<std::int64_t>(g.experts, kMaxExperts));
    moe.experts_per_token = static_cast<int>(std::clamp<std::int64_t>(g.experts_used, 1, moe.experts));
    moe.expert_intermediate = m.intermediate;
    m.moe = moe;
  }
  if (g.sliding_window > 0 && (m.max_context == 0 || g.sliding_window < m.max_context))
    m.assumptions.push_back(
        fmt::format("{}.attention.sliding_window {}: every layer's KV cache counted in full (the "
                    "metadata does not say which layers slide)",
                    g.architecture, g.sliding_window));
  m.params = stats.params;
  m.origin = stats.origin;
  m.assumptions.push_back(fmt::format(
      "architecture from the GGUF metadata ({}): {} blocks, hidden {}, {} heads, {} KV heads of {}, context {}",
      g.architecture, m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim,
      m.max_context ? util::format_number(static_cast<double>(m.max_context)) : std::string("unknown")));
  return m;
}

}  // namespace gpuadvisor::catalog
