#pragma once
/// Inference engines (data/engines.json): how each splits a model over GPUs, the weight and
/// KV-cache formats it runs, how it takes GPU memory, the accumulate precision of its 16-bit
/// matrix products on GeForce cards and the GPU vendors it runs on (docs/methodology.md, "Engines").
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/source.h"
#include "gpuadvisor/util/names.h"

namespace gpuadvisor::catalog {

enum class Engine { llamacpp, vllm, sglang, trtllm, transformers, exllamav2 };
inline constexpr std::size_t kEngineCount = 6;
inline constexpr util::Names<Engine, kEngineCount> kEngineNames{
    {"llama.cpp", "vllm", "sglang", "trt-llm", "transformers", "exllamav2"}};
inline std::string_view name(Engine e) { return kEngineNames.name(e); }

/// How a model is split over several GPUs: whole layers in turn, or each layer's matrices.
enum class Split { layer, tensor };
inline constexpr util::Names<Split, 2> kSplitNames{{"layer", "tensor"}};

struct EngineInfo {
  Engine id = Engine::vllm;
  std::string name;
  Split split = Split::tensor;  ///< the default over several GPUs
  std::vector<Split> splits;    ///< every split it offers
  std::vector<std::string> weight_formats, kv_formats;
  std::vector<Vendor> vendors;
  std::optional<double> memory_fraction;  ///< share of each GPU's memory taken at start
  bool geforce_fp16_accumulate = false;   ///< 16-bit GEMMs accumulate in fp16 on GeForce cards
  /// Runs on PyTorch: its CUDA context loads PyTorch's kernels and workspace, and its caching
  /// allocator keeps a fragmentation reserve. llama.cpp allocates exact buffers.
  bool pytorch = true;
  /// The whole prompt in one forward pass (transformers' generate), rather than chunks of a fixed
  /// number of tokens per scheduler step (vLLM, SGLang, TensorRT-LLM, llama.cpp, ExLlamaV2).
  bool whole_prompt_prefill = false;
  /// The engine whose fitted factors this one borrows where it has none of its own.
  std::optional<Engine> factors_from;
  std::vector<Source> sources;
  std::string as_of;

  bool runs_format(std::string_view f) const;
  bool runs_kv(std::string_view f) const;
  bool runs_on(Vendor vendor) const;
  bool offers(Split s) const;
};

/// The engines of data/engines.json, parsed once, indexed by Engine.
const std::vector<EngineInfo>& engines();
std::vector<EngineInfo> parse_engines(const util::JsonDoc& doc);
const EngineInfo& engine(Engine e);

}  // namespace gpuadvisor::catalog
