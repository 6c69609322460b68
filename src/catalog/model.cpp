#include "gpuadvisor/catalog/model.h"

#include <fmt/format.h>

#include <cmath>

#include "gpuadvisor/catalog/embedded.h"
#include "gpuadvisor/catalog/snapshot.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::catalog {
namespace {

// Parameters of one attention block (projections, their biases).
double attention_params(const Model& m) {
  const double h = static_cast<double>(m.hidden);
  if (m.mla) {
    // DeepSeek-V2/V3 multi-head latent attention (DeepSeek-V3 technical report, section 2.1.1).
    const auto& a = *m.mla;
    const double qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    double q = a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * m.heads * qk : h * m.heads * qk;
    double kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank +
                a.kv_lora_rank * m.heads * (a.qk_nope_head_dim + a.v_head_dim);
    double o = static_cast<double>(m.heads) * a.v_head_dim * h;
    return q + kv + o;
  }
  const double q_dim = static_cast<double>(m.heads) * static_cast<double>(m.head_dim);
  const double kv_dim = static_cast<double>(m.kv_heads) * static_cast<double>(m.head_dim);
  double p = h * q_dim + 2 * h * kv_dim + q_dim * h;
  if (m.bias)
    p += q_dim + 2 * kv_dim + h;
  else if (m.qkv_bias || m.family == "qwen2")
    p += q_dim + 2 * kv_dim;  // Qwen2 has biases on q, k, v only
  return p;
}

double mlp_params(const Model& m, double inner) {
  const double h = static_cast<double>(m.hidden);
  double p = (m.gated_mlp ? 3 : 2) * h * inner;
  if (m.bias) p += inner + h;
  return p;
}

double norm_params(const Model& m) {
  return m.norm == "layernorm" ? 2.0 * static_cast<double>(m.hidden) : static_cast<double>(m.hidden);
}

std::int64_t round_up(std::int64_t v, std::int64_t to) { return (v + to - 1) / to * to; }

Model parse_model(const util::JsonDoc& doc, const util::Json& j, const std::string& ptr) {
  std::string label;
  if (j.is_object() && j.contains("id") && j["id"].is_string()) label = "model '" + j["id"].get<std::string>() + "'";
  util::Fields f(doc, j, ptr, label);
  Model m;
  m.id = f.str("id");
  m.name = f.opt_str("name").value_or(m.id);
  if (f.has("aliases"))
    for (const auto& a : f.raw("aliases"))
      if (a.is_string()) m.aliases.push_back(a.get<std::string>());
  m.family = f.opt_str("family").value_or("");
  m.kind = f.opt_enumerated("kind", kModelKindNames).value_or(ModelKind::decoder);
  m.params = static_cast<double>(f.integer("params", 1, std::int64_t{1} << 52));
  if (auto a = f.opt_integer("active_params", 1, std::int64_t{1} << 52)) m.active_params = static_cast<double>(*a);
  const std::int64_t big = std::int64_t{1} << 31;
  m.layers = static_cast<int>(f.opt_integer("layers", 1, 100000).value_or(0));
  m.encoder_layers = static_cast<int>(f.opt_integer("encoder_layers", 1, 100000).value_or(0));
  m.hidden = f.opt_integer("hidden", 1, big).value_or(0);
  m.heads = static_cast<int>(f.opt_integer("heads", 1, 100000).value_or(0));
  m.kv_heads = static_cast<int>(f.opt_integer("kv_heads", 1, 100000).value_or(m.heads));
  m.head_dim = f.opt_integer("head_dim", 1, big).value_or(m.heads ? m.hidden / m.heads : 0);
  m.intermediate = f.opt_integer("intermediate", 1, big).value_or(0);
  m.vocab = f.opt_integer("vocab", 1, big).value_or(0);
  m.tied_embeddings = f.opt_bool("tied_embeddings").value_or(false);
  m.gated_mlp = f.opt_str("mlp").value_or("plain") == "gated";
  m.bias = f.opt_bool("bias").value_or(false);
  m.norm = f.opt_str("norm").value_or("");
  m.position = f.opt_str("position").value_or("");
  m.max_context = f.opt_integer("max_context", 1, big).value_or(0);
  m.extra_params = static_cast<double>(f.opt_integer("vision_tower_params", 1, std::int64_t{1} << 40).value_or(0));
  // Sliding-window (or chunked) attention: how many layers keep only the last sliding_window tokens.
  m.sliding_layers = static_cast<int>(f.opt_integer("sliding_layers", 0, 100000).value_or(0));
  m.sliding_window = f.opt_integer("sliding_window", 1, big).value_or(0);
  if (m.sliding_layers > m.layers)
    f.fail("sliding_layers", fmt::format("{} is more than the {} layers", m.sliding_layers, m.layers));
  if (m.sliding_layers > 0 && m.sliding_window == 0) f.fail("sliding_window", "missing; sliding_layers needs it");
  if (f.has("moe")) {
    util::Fields e(doc, f.raw("moe"), f.pointer("moe"), label);
    MoE moe;
    moe.experts = static_cast<int>(e.integer("experts", 1, 100000));
    moe.experts_per_token = static_cast<int>(e.integer("experts_per_token", 1, moe.experts));
    moe.shared_experts = static_cast<int>(e.opt_integer("shared_experts", 0, 1000).value_or(0));
    moe.expert_intermediate = e.opt_integer("expert_intermediate", 1, big).value_or(m.intermediate);
    moe.dense_layers = static_cast<int>(e.opt_integer("dense_layers", 0, 100000).value_or(0));
    moe.dense_intermediate = e.opt_integer("dense_intermediate", 1, big).value_or(0);
    m.moe = moe;
  }
  if (f.has("mla")) {
    util::Fields a(doc, f.raw("mla"), f.pointer("mla"), label);
    Mla mla;
    mla.kv_lora_rank = static_cast<int>(a.integer("kv_lora_rank", 1, 1 << 20));
    mla.q_lora_rank = static_cast<int>(a.opt_integer("q_lora_rank", 0, 1 << 20).value_or(0));
    mla.qk_rope_head_dim = static_cast<int>(a.integer("qk_rope_head_dim", 0, 1 << 20));
    mla.qk_nope_head_dim = static_cast<int>(a.integer("qk_nope_head_dim", 0, 1 << 20));
    mla.v_head_dim = static_cast<int>(a.integer("v_head_dim", 1, 1 << 20));
    m.mla = mla;
  }
  if (f.has("vision")) {
    util::Fields v(doc, f.raw("vision"), f.pointer("vision"), label);
    VisionInfo vi;
    vi.image_size = v.opt_num("image_size");
    vi.gflops_per_image = v.opt_num("gflops_per_image");
    vi.activation_bytes_per_image = v.opt_num("activation_bytes_per_image");
    vi.activation_note = v.opt_str("activation_note").value_or("");
    if (v.has("diffusion")) {
      util::Fields d(doc, v.raw("diffusion"), v.pointer("diffusion"), label);
      Diffusion df;
      df.gflops_per_step = d.opt_num("gflops_per_step");
      df.guidance_passes = static_cast<int>(d.opt_integer("guidance_passes", 1, 2).value_or(2));
      df.gflops_decoder = d.opt_num("gflops_decoder");
      df.default_steps = static_cast<int>(d.opt_integer("default_steps", 1, 1000).value_or(30));
      df.decoder_fp32 = d.opt_bool("decoder_fp32").value_or(false);
      vi.diffusion = df;
    }
    m.vision = vi;
  }
  if (m.is_transformer() && m.kv_heads > 0 && m.heads % m.kv_heads != 0)
    f.fail("kv_heads", fmt::format("{} key/value heads do not divide {} heads", m.kv_heads, m.heads));
  m.sources = read_sources(f);
  m.as_of = f.opt_str("as_of").value_or("");
  m.notes = f.opt_str("notes").value_or("");
  m.origin = doc.where(ptr);
  return m;
}

}  // namespace

double Model::params_per_token() const {
  if (!moe) return params;
  if (active_params) return *active_params;
  return count_active_params(*this);
}

double Model::embedding_params() const {
  if (!is_transformer() || vocab <= 0) return 0;
  const double e = static_cast<double>(vocab) * static_cast<double>(hidden);
  return tied_embeddings ? e : 2 * e;
}

double count_params(const Model& m) {
  if (!m.is_transformer()) return 0;
  const double h = static_cast<double>(m.hidden);
  double total = m.embedding_params() + m.extra_params;
  if (m.position == "learned") total += static_cast<double>(m.max_context) * h;
  if (m.kind == ModelKind::encoder) total += 2 * h + 2 * h + h * h + h;  // BERT token types, embedding norm, pooler
  auto decoder_layer = [&](int index) {
    double p = attention_params(m) + 2 * norm_params(m);
    if (m.family == "gemma2" || m.family == "gemma3") p += 2 * norm_params(m);  // post-attention and post-MLP norms
    if (m.moe && index >= m.moe->dense_layers) {
      const auto& e = *m.moe;
      p += (e.experts + e.shared_experts) * mlp_params(m, static_cast<double>(e.expert_intermediate));
      p += h * e.experts;  // router
    } else {
      double inner = m.moe && m.moe->dense_intermediate ? static_cast<double>(m.moe->dense_intermediate)
                                                        : static_cast<double>(m.intermediate);
      p += mlp_params(m, inner);
    }
    return p;
  };
  if (m.kind == ModelKind::encoder_decoder) {
    // T5: encoder layers (self-attention, MLP, 2 norms); decoder layers add cross-attention and a
    // third norm; relative position buckets (32 per head) in each stack; a final norm per stack.
    double enc = attention_params(m) + mlp_params(m, static_cast<double>(m.intermediate)) + 2 * norm_params(m);
    double dec = 2 * attention_params(m) + mlp_params(m, static_cast<double>(m.intermediate)) + 3 * norm_params(m);
    int enc_layers = m.encoder_layers ? m.encoder_layers : m.layers;
    total += enc_layers * enc + m.layers * dec + 2 * norm_params(m);
    if (m.position == "relative") total += 2.0 * 32 * m.heads;
    return total;
  }
  if (m.kind == ModelKind::vision && m.vision && m.vision->image_size && m.max_context > 1) {
    // ViT (Dosovitskiy et al. 2021): patch embedding (3 x p^2 x h + h), class token, and the
    // ImageNet-1k classification head; the patch size follows from image size and token count.
    double patches = static_cast<double>(m.max_context - 1);
    double p = *m.vision->image_size / std::sqrt(patches);
    total += 3 * p * p * h + h + h + h * 1000 + 1000;
  }
  for (int i = 0; i < m.layers; ++i) total += decoder_layer(i);
  if (m.kind != ModelKind::encoder)
    total += norm_params(m);  // final norm
  else
    total += 0;
  return total;
}

double count_active_params(const Model& m) {
  if (!m.moe || !m.is_transformer()) return count_params(m);
  Model dense = m;
  MoE e = *m.moe;
  // The tokens pass through the shared experts and experts_per_token routed experts.
  e.experts = e.experts_per_token;
  dense.moe = e;
  // Router weights cover all experts.
  return count_params(dense) +
         static_cast<double>(m.hidden) * (m.moe->experts - e.experts) * (m.layers - m.moe->dense_layers);
}

double routed_expert_params(const Model& m) {
  if (!m.moe || !m.is_transformer() || m.moe->experts <= 0) return 0;
  const double per_expert =
      (m.gated_mlp ? 3.0 : 2.0) * static_cast<double>(m.hidden) * static_cast<double>(m.moe->expert_intermediate);
  return m.moe->experts * per_expert * std::max(0, m.layers - m.moe->dense_layers);
}

Model model_from_size(double params) {
  // The bare-size rule (docs/methodology.md#bare-sizes): a Llama-style dense decoder with
  // 128-wide heads, no grouped KV (the conservative choice for KV-cache memory), a SwiGLU MLP of
  // 8h/3 rounded up to 256, a 32,000-token vocabulary, untied embeddings, and depth h/128 as in
  // GPT-3 (d_model 12288, 96 layers). Per layer 4h^2 + 3h*i ~ 12h^2, so h ~ (128 P / 12)^(1/3);
  // the depth then makes the layers add up to P.
  Model m;
  const std::string count = util::format_count(params);
  m.id = "custom-" + count;
  m.name = "dense decoder, " + count + " parameters";
  m.family = "llama";
  m.kind = ModelKind::decoder;
  m.params = params;
  m.vocab = 32000;
  // Widths of 2,048 and more round to a multiple of 1,024 (heads in eights, so that tensor
  // parallelism over 2, 4 or 8 GPUs divides them); smaller ones to a multiple of 128.
  const double ideal = std::cbrt(params * 128.0 / 12.0);
  const double step = ideal >= 2048 ? 1024 : 128;
  std::int64_t h = std::max<std::int64_t>(128, std::llround(ideal / step) * static_cast<std::int64_t>(step));
  m.hidden = h;
  m.head_dim = 128;
  m.heads = static_cast<int>(h / 128);
  m.kv_heads = m.heads;
  m.intermediate = round_up(8 * h / 3, 256);
  m.gated_mlp = true;
  m.norm = "rmsnorm";
  m.position = "rope";
  m.max_context = 4096;
  const double per_layer = 4.0 * h * h + 3.0 * h * m.intermediate;
  m.layers = std::max(1, static_cast<int>(std::lround((params - 2.0 * m.vocab * h) / per_layer)));
  m.origin = "bare size";
  m.assumptions.push_back(fmt::format(
      "--model {}: a dense decoder of exactly {} parameters; its shape follows the bare-size rule: {} layers, "
      "hidden {}, {} heads of 128 (no grouped KV), gated MLP {}, vocabulary 32,000, context 4,096",
      count, util::format_number(params), m.layers, m.hidden, m.heads, m.intermediate));
  return m;
}

std::vector<Model> ModelSet::parse(const util::JsonDoc& doc) {
  util::Fields top(doc, doc.root(), "", "");
  const auto& arr = top.raw("models");
  if (!arr.is_array()) top.fail("models", "expected an array of model records, got " + util::json_snippet(arr));
  std::vector<Model> out;
  for (std::size_t i = 0; i < arr.size(); ++i) out.push_back(parse_model(doc, arr[i], "/models/" + std::to_string(i)));
  return out;
}

void ModelSet::merge(std::vector<Model> models) {
  for (auto& m : models) {
    auto it = std::find_if(models_.begin(), models_.end(), [&](const Model& x) { return x.id == m.id; });
    if (it != models_.end())
      *it = std::move(m);
    else
      models_.push_back(std::move(m));
  }
}

ModelSet ModelSet::load(const std::vector<std::string>& user_files) {
  ModelSet s;
  if (auto snap = embedded::snapshot("models.json"))
    decode(*snap, s.models_);
  else
    s.merge(parse(embedded::doc("models.json")));
  for (const auto& f : user_files) {
    auto d = util::JsonDoc::load(f);
    if (!d) throw Error(d.error());
    s.merge(parse(*d));
  }
  return s;
}

const Model* ModelSet::find(std::string_view id) const {
  for (const auto& m : models_)
    if (m.id == id) return &m;
  return nullptr;
}

std::vector<std::string> ModelSet::names() const {
  std::vector<std::string> out;
  for (const auto& m : models_) {
    out.push_back(m.id);
    for (const auto& a : m.aliases) out.push_back(a);
  }
  return out;
}

Result<const Model*> ModelSet::resolve(std::string_view query) const {
  const std::string q = util::squash(query);
  for (const auto& m : models_) {
    if (util::squashes_to(m.id, q) || util::squashes_to(m.name, q)) return &m;
    for (const auto& a : m.aliases)
      if (util::squashes_to(a, q)) return &m;
  }
  std::vector<std::string> ids;
  for (const auto& m : models_) ids.push_back(m.id);
  return Result<const Model*>::fail(
      fmt::format("unknown model {}{} (see 'gpuadvisor models list'; a bare size like 7B also works)",
                  util::quote(query), util::did_you_mean(util::lower(query), ids)));
}

util::Json to_output_json(const Model& m) {
  util::Json j;
  j["id"] = m.id;
  j["name"] = m.name;
  j["family"] = m.family;
  j["kind"] = kModelKindNames.name(m.kind);
  j["params"] = util::json_number(m.params);
  j["active_params"] = m.moe ? util::json_number(std::round(m.params_per_token())) : util::Json(nullptr);
  if (m.is_transformer()) {
    j["layers"] = m.layers;
    if (m.encoder_layers) j["encoder_layers"] = m.encoder_layers;
    j["hidden"] = m.hidden;
    j["heads"] = m.heads;
    j["kv_heads"] = m.kv_heads;
    j["head_dim"] = m.head_dim;
    j["intermediate"] = m.intermediate;
    j["vocab"] = m.vocab;
    j["tied_embeddings"] = m.tied_embeddings;
    j["mlp"] = m.gated_mlp ? "gated" : "plain";
    j["max_context"] = m.max_context ? util::Json(m.max_context) : util::Json(nullptr);
  }
  if (m.moe) {
    j["moe"] = {{"experts", m.moe->experts},
                {"experts_per_token", m.moe->experts_per_token},
                {"shared_experts", m.moe->shared_experts},
                {"expert_intermediate", m.moe->expert_intermediate}};
  }
  if (m.vision) {
    j["image_size"] = m.vision->image_size ? util::json_number(*m.vision->image_size) : util::Json(nullptr);
    j["flops_per_image"] =
        m.vision->gflops_per_image ? util::Json(*m.vision->gflops_per_image * 1e9) : util::Json(nullptr);
    j["activation_bytes_per_image"] =
        m.vision->activation_bytes_per_image ? util::Json(*m.vision->activation_bytes_per_image) : util::Json(nullptr);
    if (const auto& d = m.vision->diffusion) {
      auto flops = [](const std::optional<double>& g) { return g ? util::Json(*g * 1e9) : util::Json(nullptr); };
      j["diffusion"] = {{"flops_per_step", flops(d->gflops_per_step)},
                        {"guidance_passes", d->guidance_passes},
                        {"flops_decoder", flops(d->gflops_decoder)},
                        {"default_steps", d->default_steps},
                        {"decoder_fp32", d->decoder_fp32}};
    }
  }
  j["sources"] = sources_json(m.sources);
  j["as_of"] = m.as_of;
  return j;
}

}  // namespace gpuadvisor::catalog
