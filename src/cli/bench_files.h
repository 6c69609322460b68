#pragma once
// Readers of the benchmark outputs `gpuadvisor calibrate` takes, told apart by their content:
// llama-bench's markdown table and its -o json / jsonl, vLLM's `bench serve` (benchmark_serving.py)
// and benchmark_throughput.py JSON results, and nvidia-smi --query-gpu CSV for the GPU's identity.
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/estimate/measurement.h"

namespace gpuadvisor::cli {

/// One measured rate as the file gives it, before it is matched to a catalog GPU and a model.
struct BenchRun {
  int line = 0;
  estimate::MeasureKind kind = estimate::MeasureKind::decode;
  double value = 0;
  std::string model;       ///< as the file names it: an HF id, a preset, or a size ("6.74B")
  std::string model_desc;  ///< why a model the file names cannot be used by its size (mixture of experts)
  std::string precision;   ///< a weight format id, or empty (the user's --precision or the default)
  std::string gpu_name;    ///< the device the file names, or empty
  int gpus = 0;            ///< devices the file names; 0 = not said
  std::string engine;      ///< llama.cpp, vllm
  long long batch = 1, prompt_tokens = 0, generated_tokens = 0;
  int tp = 0, pp = 0;     ///< a training log's parallel layout; 0 = not said
  long long seq_len = 0;  ///< a training log's tokens per sample; 0 = not said
  /// HF Trainer, NeMo: `value` is samples per second over the whole job, made tokens/s per GPU with
  /// the run's --seq-len (or the log's) and --gpus.
  bool per_sample = false;
  estimate::MemoryCounts counts = estimate::MemoryCounts::allocated;  ///< memory runs, in GiB
  std::string skip;                                                   ///< why the run cannot be used, or empty
};

struct BenchFile {
  std::string path;
  std::string format;  ///< "llama-bench markdown", ... ; one of kBenchFormats
  std::vector<BenchRun> runs;
  std::vector<std::string> gpu_names;  ///< an nvidia-smi capture's cards
};

/// The formats read, for messages and --help.
inline constexpr std::string_view kBenchFormats =
    "llama-bench markdown or -o json/jsonl, vLLM bench serve (benchmark_serving.py) JSON, vLLM "
    "benchmark_throughput.py JSON, SGLang bench_serving result and JSON, torchtune, torchtitan, Megatron-LM, NeMo "
    "and Hugging Face Trainer training logs, nvidia-smi --query-gpu CSV";

/// Reads `text` (the content of `path`) by what it looks like. Throws Error (exit 2) naming the
/// file and the formats it knows when it is none of them.
BenchFile read_bench_file(const std::string& path, const std::string& text);

}  // namespace gpuadvisor::cli
