#pragma once
/// Model presets (data/models.json), bare sizes ("10B") and model descriptions users already have
/// (Hugging Face config.json, safetensors and GGUF headers), all as one Model struct.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/source.h"
#include "gpuadvisor/util/error.h"
#include "gpuadvisor/util/json.h"

namespace gpuadvisor::catalog {

struct MoE {
  int experts = 0;
  int experts_per_token = 0;
  int shared_experts = 0;
  std::int64_t expert_intermediate = 0;
  int dense_layers = 0;                 ///< leading layers with a dense MLP (DeepSeek-V3: 3)
  std::int64_t dense_intermediate = 0;  ///< their MLP width

  bool operator==(const MoE&) const = default;
};

/// Multi-head latent attention (DeepSeek-V2/V3): the KV cache holds a compressed latent.
struct Mla {
  int kv_lora_rank = 0;
  int q_lora_rank = 0;
  int qk_rope_head_dim = 0;
  int qk_nope_head_dim = 0;
  int v_head_dim = 0;

  bool operator==(const Mla&) const = default;
};

/// A latent diffusion model's compute per image: the denoiser's passes, then the decoder once.
struct Diffusion {
  std::optional<double> gflops_per_step;  ///< one denoiser (UNet) forward pass at batch 1, FLOPs = 2 x MACs
  int guidance_passes = 2;                ///< denoiser passes per step (2 with classifier-free guidance)
  std::optional<double> gflops_decoder;   ///< the VAE decoder, once per image
  int default_steps = 30;                 ///< denoising steps when --steps is not given
  bool decoder_fp32 = false;              ///< the pipeline runs the decoder in fp32 (SDXL's VAE overflows fp16)

  bool operator==(const Diffusion&) const = default;
};

struct VisionInfo {
  std::optional<double> image_size;
  std::optional<double> gflops_per_image;  ///< forward pass, FLOPs = 2 x MACs
  std::optional<double> activation_bytes_per_image;
  std::string activation_note;
  std::optional<Diffusion> diffusion;  ///< set for latent diffusion models (SD 1.5, SDXL)

  bool operator==(const VisionInfo&) const = default;
};

/// The architecture a GGUF file's metadata gives ({arch}.block_count, ...); zero where absent.
struct GgufShape {
  std::string architecture;  ///< general.architecture: llama, qwen3, gemma3, deepseek2, ...
  std::int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, context = 0;
  std::int64_t intermediate = 0, vocab = 0, experts = 0, experts_used = 0, kv_lora_rank = 0, rope_dim = 0;
  std::int64_t sliding_window = 0;

  bool operator==(const GgufShape&) const = default;
};

/// Weight tensors read from a file header (safetensors, GGUF): exact bytes and parameters.
struct TensorStats {
  double params = 0;  ///< 0 when unknown (an index whose shards are absent)
  double bytes = 0;
  std::string dtypes;              ///< "BF16", "Q4_K x 193, Q6_K x 33, F32 x 65", ...
  std::string origin;              ///< file the numbers came from
  std::string note;                ///< how the numbers were obtained when not from every tensor header
  std::optional<GgufShape> shape;  ///< GGUF: the architecture from the metadata

  bool operator==(const TensorStats&) const = default;
};

/// The architecture of a model: a decoder LM, an encoder (BERT), an encoder-decoder (T5), or a
/// vision model (CNN, ViT, diffusion UNet).
enum class ModelKind { decoder, encoder, encoder_decoder, vision };
inline constexpr util::Names<ModelKind, 4> kModelKindNames{{"decoder", "encoder", "encoder-decoder", "vision"}};

struct Model {
  std::string id;
  std::string name;
  std::vector<std::string> aliases;
  std::string family;
  ModelKind kind = ModelKind::decoder;
  double params = 0;
  std::optional<double> active_params;  ///< published, MoE only
  // Transformer shape; zero when not a transformer (ResNet, YOLO, diffusion UNets).
  int layers = 0;
  int encoder_layers = 0;
  std::int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t intermediate = 0;
  std::int64_t vocab = 0;
  bool tied_embeddings = false;
  bool gated_mlp = false;
  bool bias = false;
  bool qkv_bias = false;  ///< biases on the q, k and v projections only (Qwen2, ChatGLM, StableLM)
  std::string norm;
  std::string position;
  std::int64_t max_context = 0;  ///< 0 = unknown
  /// Layers whose attention keeps only the last sliding_window tokens (Mistral 7B, Gemma 2/3,
  /// gpt-oss, Llama 4 chunked attention); their KV cache stops growing there.
  int sliding_layers = 0;
  std::int64_t sliding_window = 0;
  /// Parameters outside the decoder stack counted from a config: a vision tower and its projector.
  double extra_params = 0;
  std::optional<MoE> moe;
  std::optional<Mla> mla;
  std::optional<VisionInfo> vision;
  std::optional<TensorStats> tensors;  ///< from --model-file: exact weight bytes
  std::vector<Source> sources;
  std::string as_of;
  std::string notes;
  std::string origin;                    ///< where the description came from
  std::vector<std::string> assumptions;  ///< e.g. the shape rule of a bare size

  bool is_transformer() const { return layers > 0 && hidden > 0 && heads > 0; }
  /// Parameters used per token: active_params for MoE (published or derived), else params.
  double params_per_token() const;
  /// Parameters in the input embedding and (untied) output head.
  double embedding_params() const;

  bool operator==(const Model&) const = default;
};

/// Parameter count from the architecture, exactly as the layers add up (embeddings, attention,
/// MLP or experts, norms, biases, learned positions). Zero for non-transformers.
double count_params(const Model& m);
/// Parameters of one expert-parallel-free forward pass per token for MoE (shared + routed experts
/// actually used + everything else); params for dense models.
double count_active_params(const Model& m);
/// Parameters of a mixture-of-experts model's routed experts (all of them, every MoE layer):
/// experts x (2 or 3) x hidden x expert_intermediate x MoE layers; 0 for a dense model.
double routed_expert_params(const Model& m);

/// `--model 10B`: a dense decoder of exactly that many parameters with the documented default
/// shape (docs/methodology.md, "Bare sizes"). The rule is recorded in `assumptions`.
Model model_from_size(double params);

/// Parses a Hugging Face config.json (llama, mistral, mixtral, qwen2, gemma, gemma2, phi3, gpt2,
/// bert, t5, deepseek_v3 model types). Throws Error naming the file and field on bad input.
Model model_from_hf_config(const util::JsonDoc& doc);

/// Reads the header of a .safetensors file, a model.safetensors.index.json (with its shards), or
/// a .gguf file (every part of a split set), without reading weights. Throws Error (exit 2) on
/// malformed input and on Git LFS pointer files.
TensorStats read_model_file(const std::string& path);

/// A model from a GGUF file's metadata: the shape for KV cache and context limits, the counts
/// from its tensors. Fails when the metadata lacks the block count, width or heads.
Result<Model> model_from_gguf(const TensorStats& stats);

/// The model presets.
class ModelSet {
 public:
  /// The embedded data/models.json plus user files (later files win by id).
  static ModelSet load(const std::vector<std::string>& user_files);
  static std::vector<Model> parse(const util::JsonDoc& doc);
  void merge(std::vector<Model> models);

  const std::vector<Model>& models() const { return models_; }
  const Model* find(std::string_view id) const;
  /// An id or alias (case-insensitive); fails with a suggestion.
  Result<const Model*> resolve(std::string_view query) const;
  std::vector<std::string> names() const;

 private:
  std::vector<Model> models_;
};

util::Json to_output_json(const Model& m);

}  // namespace gpuadvisor::catalog
