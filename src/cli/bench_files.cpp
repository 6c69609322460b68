#include "bench_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "gpuadvisor/rules/inspect.h"
#include "gpuadvisor/util/error.h"
#include "gpuadvisor/util/json.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::cli {
namespace {

using estimate::MeasureKind;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out = util::split(text, '\n');
  for (auto& l : out)
    if (!l.empty() && l.back() == '\r') l.pop_back();
  return out;
}

// A count read from a file: NaN, negative and absurd values are 0 or capped (no overflow on cast).
long long count(double v) {
  if (!(v > 0)) return 0;
  return static_cast<long long>(std::min(v, 1e12));
}

// The leading number of a cell: "4123.45 ± 12.34" is 4123.45.
std::optional<double> leading_number(std::string_view cell) {
  const std::string t = util::trim(cell);
  std::size_t n = 0;
  while (n < t.size() && (std::isdigit(static_cast<unsigned char>(t[n])) || t[n] == '.' || t[n] == 'e' || t[n] == 'E' ||
                          (n > 0 && (t[n] == '+' || t[n] == '-') && (t[n - 1] == 'e' || t[n - 1] == 'E'))))
    ++n;
  auto v = util::parse_number(t.substr(0, n));
  if (!v || !std::isfinite(*v)) return std::nullopt;
  return *v;
}

// The weight format of llama.cpp's file type as llama-bench prints it at the end of the model
// column ("llama 7B Q4_K - Medium", "qwen2 7B F16"); empty for one the estimator has no format for.
std::string gguf_format(std::string_view model_desc) {
  const std::string d = util::lower(model_desc);
  struct Map {
    std::string_view suffix, format;
  };
  static constexpr Map kMap[] = {
      {"q4_k - medium", "q4_k_m"},
      {"q4_k_m", "q4_k_m"},
      {"q5_k - medium", "q5_k_m"},
      {"q5_k_m", "q5_k_m"},
      {"q6_k", "q6_k"},
      {"q8_0", "q8_0"},
      {"q4_0", "q4_0"},
      {"f16", "fp16"},
      {"bf16", "bf16"},
      {"f32", "fp32"},
  };
  for (const auto& m : kMap)
    if (util::ends_with(d, m.suffix)) return std::string(m.format);
  return {};
}

// A mixture-of-experts model by llama.cpp's description ("qwen35moe 35B.A3B Q4_K - Medium",
// "deepseek2 16B", "qwen3moe 30B.A3B"): its parameter count does not give its shape.
bool moe_desc(std::string_view desc) {
  const std::string d = util::lower(desc);
  const std::string arch = d.substr(0, d.find(' '));
  return arch.find("moe") != std::string::npos || arch == "deepseek2" || arch == "mixtral" ||
         d.find("b.a") != std::string::npos || d.find(" 8x") != std::string::npos;
}

// "pp512", "tg128", "pp512 @ d4096", "tg128 @ d4096": the kind, tokens and the context depth.
bool read_test(std::string_view test, BenchRun& r) {
  // Spaces vary by version ("pp 512" in 2024 builds).
  std::string t;
  for (char c : util::lower(test))
    if (c != ' ') t += c;
  long long depth = 0;
  if (auto at = t.find("@d"); at != std::string::npos) {
    auto d = util::parse_number(t.substr(at + 2));
    if (!d) return false;
    depth = count(*d);
    t = t.substr(0, at);
  }
  if (t.size() < 3 || t.find('+') != std::string::npos) return false;
  auto n = util::parse_number(t.substr(2));
  if (!n || *n <= 0) return false;
  if (util::starts_with(t, "pp")) {
    r.kind = MeasureKind::prefill;
    r.prompt_tokens = depth + count(*n);
  } else if (util::starts_with(t, "tg")) {
    r.kind = MeasureKind::decode;
    r.prompt_tokens = depth;
    r.generated_tokens = count(*n);
  } else {
    return false;
  }
  return true;
}

void check_offload(long long ngl, BenchRun& r) {
  if (ngl == 0)
    r.skip = "runs on the CPU (-ngl 0)";
  else if (ngl > 0 && ngl < 99)
    r.skip = fmt::format("partial offload (-ngl {}): layers in host RAM", ngl);
}

// llama-bench's default output: a markdown table, after the backend's device lines.
BenchFile read_llama_bench_markdown(const std::string& path, const std::vector<std::string>& lines) {
  BenchFile f{path, "llama-bench markdown", {}, {}};
  std::string device;
  int devices = 0;
  std::vector<std::string> header;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    // "  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes"
    if (auto at = l.find("Device 0: "); at != std::string::npos && device.empty())
      device = util::trim(
          l.substr(at + 10, l.find(',', at) == std::string::npos ? std::string::npos : l.find(',', at) - at - 10));
    if (auto at = l.find("found "); at != std::string::npos && l.find(" devices") != std::string::npos)
      if (auto n = util::parse_number(l.substr(at + 6, l.find(' ', at + 6) - at - 6)))
        devices = static_cast<int>(std::min<long long>(count(*n), 4096));
    if (auto at = l.find("GPU name:"); at != std::string::npos && device.empty()) device = util::trim(l.substr(at + 9));
    const std::string t = util::trim(l);
    if (t.size() < 2 || t.front() != '|') continue;
    std::vector<std::string> cells;
    for (auto& c : util::split(t.substr(1, t.back() == '|' ? t.size() - 2 : std::string::npos), '|'))
      cells.push_back(util::trim(c));
    if (header.empty() || std::find(cells.begin(), cells.end(), "t/s") != cells.end()) {
      header = cells;
      continue;
    }
    if (!cells.empty() && cells[0].find("---") != std::string::npos) continue;
    auto col = [&](std::string_view name) -> const std::string* {
      for (std::size_t k = 0; k < header.size() && k < cells.size(); ++k)
        if (header[k] == name) return &cells[k];
      return nullptr;
    };
    const auto* model = col("model");
    const auto* test = col("test");
    const auto* ts = col("t/s");
    if (!model || !test || !ts) continue;
    BenchRun r;
    r.line = static_cast<int>(i + 1);
    r.engine = "llama.cpp";
    r.precision = gguf_format(*model);
    if (moe_desc(*model)) r.model_desc = *model;
    r.gpu_name = device;
    r.gpus = devices;
    if (const auto* p = col("params")) {
      std::string size = util::trim(*p);
      size.erase(std::remove(size.begin(), size.end(), ' '), size.end());
      r.model = size;  // "6.74B"
    }
    auto v = leading_number(*ts);
    if (!v || *v <= 0 || !read_test(*test, r)) continue;
    r.value = *v;
    if (const auto* b = col("backend"); b && util::lower(*b).find("cpu") == 0) r.skip = "runs on the CPU backend";
    if (const auto* n = col("ngl")) check_offload(count(leading_number(*n).value_or(99)), r);
    if (r.precision.empty()) r.skip = fmt::format("file type of {} has no weight format here", util::quote(*model));
    f.runs.push_back(r);
  }
  return f;
}

std::string text_member(const util::Json& o, const char* key) {
  if (!o.contains(key)) return {};
  const auto& v = o[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return fmt::format("{:g}", v.get<double>());
  return {};
}
double number_member(const util::Json& o, const char* key, double fallback = 0) {
  if (!o.contains(key) || !o[key].is_number()) return fallback;
  return o[key].get<double>();
}

// llama-bench -o json (an array) or -o jsonl (an object per line).
void read_llama_bench_object(const util::Json& o, int line, BenchFile& f) {
  BenchRun r;
  r.line = line;
  r.engine = "llama.cpp";
  const std::string desc = text_member(o, "model_type");
  r.precision = gguf_format(desc);
  if (moe_desc(desc)) r.model_desc = desc;
  const double params = number_member(o, "model_n_params");
  if (params > 0) r.model = fmt::format("{:.3g}B", params / 1e9);
  std::string gpu = text_member(o, "gpu_info");
  if (auto comma = gpu.find(','); comma != std::string::npos) gpu = gpu.substr(0, comma);  // several devices
  r.gpu_name = util::trim(gpu);
  const long long n_prompt = count(number_member(o, "n_prompt"));
  const long long n_gen = count(number_member(o, "n_gen"));
  const long long depth = count(number_member(o, "n_depth"));
  r.value = number_member(o, "avg_ts");
  if (n_prompt > 0 && n_gen == 0) {
    r.kind = MeasureKind::prefill;
    r.prompt_tokens = depth + n_prompt;
  } else if (n_gen > 0 && n_prompt == 0) {
    r.kind = MeasureKind::decode;
    r.prompt_tokens = depth;
    r.generated_tokens = n_gen;
  } else {
    r.skip = "prompt and generation timed together";
  }
  const std::string backends = util::lower(text_member(o, "backends"));
  if (backends == "cpu") r.skip = "runs on the CPU backend";
  check_offload(number_member(o, "n_gpu_layers", 99) < 0 ? 99 : count(number_member(o, "n_gpu_layers", 99)), r);
  if (r.precision.empty() && r.skip.empty())
    r.skip = fmt::format("file type of {} has no weight format here", util::quote(desc));
  if (!(r.value > 0)) return;
  f.runs.push_back(r);
}

// vLLM `bench serve` / benchmark_serving.py --save-result: one object per run.
void read_vllm_serve(const util::Json& o, int line, BenchFile& f) {
  BenchRun r;
  r.line = line;
  r.engine = "vllm";
  r.model = text_member(o, "model_id");
  if (r.model.empty()) r.model = text_member(o, "tokenizer_id");
  const double completed = number_member(o, "completed");
  const double tpot = number_member(o, "mean_tpot_ms");
  const double concurrency = number_member(o, "max_concurrency");
  r.kind = MeasureKind::decode;
  r.value = tpot > 0 ? 1000 / tpot : 0;
  r.batch = concurrency >= 1 ? count(concurrency) : 1;
  if (completed > 0) {
    r.prompt_tokens = count(number_member(o, "total_input_tokens") / completed);
    r.generated_tokens = count(number_member(o, "total_output_tokens") / completed);
  }
  // All requests sent at once (--request-rate inf, no --max-concurrency): they decode together.
  const bool all_at_once = text_member(o, "request_rate") == "inf" && !(concurrency > 0);
  const double prompts = number_member(o, "num_prompts", completed);
  if (all_at_once && prompts >= 1) r.batch = count(prompts);
  if (!(concurrency > 0) && !all_at_once)
    r.skip = "requests at a rate and no --max-concurrency: the number of sequences decoding together is not known";
  if (!(r.value > 0)) r.skip = "no mean_tpot_ms";
  f.runs.push_back(r);
}

// SGLang bench_serving --output-file JSON Lines: the per-sequence decode rate from the mean TPOT
// (or the inter-token latency) at the concurrency the run measured ("concurrency"; older results:
// Little's law, completed / duration x mean end-to-end latency).
void read_sglang_serve(const util::Json& o, int line, BenchFile& f) {
  BenchRun r;
  r.line = line;
  r.engine = "sglang";
  r.model = text_member(o, "model_id");
  r.kind = MeasureKind::decode;
  const double completed = number_member(o, "completed");
  double step_ms = number_member(o, "mean_tpot_ms");
  if (!(step_ms > 0)) step_ms = number_member(o, "mean_itl_ms");
  if (!(step_ms > 0)) step_ms = number_member(o, "median_itl_ms");
  r.value = step_ms > 0 ? 1000 / step_ms : 0;
  double concurrency = number_member(o, "concurrency");
  const double duration = number_member(o, "duration"), e2e_ms = number_member(o, "mean_e2e_latency_ms");
  if (!(concurrency > 0) && completed > 0 && duration > 0 && e2e_ms > 0)
    concurrency = completed / duration * e2e_ms / 1000;
  r.batch = std::max<long long>(1, std::llround(concurrency));
  if (completed > 0) {
    r.prompt_tokens = count(number_member(o, "total_input_tokens") / completed);
    r.generated_tokens = count(number_member(o, "total_output_tokens") / completed);
  }
  if (!(concurrency > 0)) r.skip = "no concurrency in the result, nor the duration and latency to derive it";
  if (!(r.value > 0)) r.skip = "no mean_tpot_ms or inter-token latency";
  f.runs.push_back(r);
}

bool looks_like_smi_csv(const std::string& first) {
  const std::string l = util::lower(first);
  return l.find("name") != std::string::npos && l.find(',') != std::string::npos &&
         (l.find("memory.total") != std::string::npos || l.find("pci.bus_id") != std::string::npos ||
          l.find("driver_version") != std::string::npos);
}

// The number after `key` in `line` ("tps: 5,917", "peak_memory_alloc:27.44"), thousands commas
// dropped; nullopt when the key is absent or no number follows.
std::optional<double> number_after(std::string_view line, std::string_view key) {
  const auto at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + key.size();
  while (i < line.size() && (line[i] == ' ' || line[i] == ':' || line[i] == '=' || line[i] == '\t')) ++i;
  std::string digits;
  for (; i < line.size(); ++i) {
    const char c = line[i];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
        ((c == '+' || c == '-') && !digits.empty() && (digits.back() == 'e' || digits.back() == 'E')))
      digits += c;
    else if (c == ',' && !digits.empty() && i + 1 < line.size() &&
             std::isdigit(static_cast<unsigned char>(line[i + 1])))
      continue;
    else
      break;
  }
  auto v = util::parse_number(digits);
  if (!v || !std::isfinite(*v)) return std::nullopt;
  return *v;
}

// The value of an argument in Megatron-LM's "------ arguments ------" block, where a name is
// padded with dots to its value: "  tensor_model_parallel_size ...... 4".
std::optional<double> argument(std::string_view line, std::string_view name) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  if (line.substr(i, name.size()) != name) return std::nullopt;
  i += name.size();
  if (i >= line.size() || line[i] != ' ') return std::nullopt;
  while (i < line.size() && line[i] == ' ') ++i;
  if (i >= line.size() || line[i] != '.') return std::nullopt;
  while (i < line.size() && (line[i] == '.' || line[i] == ' ')) ++i;
  auto v = util::parse_number(util::trim(line.substr(i)));
  if (!v || !std::isfinite(*v)) return std::nullopt;
  return *v;
}

// A training log's rate: the median over its steps after the first fifth (warm-up, compilation).
double steady(std::vector<double> v) {
  if (v.empty()) return 0;
  v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 5));
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One metric of a training log: its value at each step, and the line of the first.
struct Series {
  std::vector<double> values;
  int line = 0;
  void add(std::optional<double> v, std::size_t index) {
    if (!v) return;
    values.push_back(*v);
    if (!line) line = static_cast<int>(index + 1);
  }
};

// One run per metric of a training log: the steady rate and the peak memory over its steps.
void training_runs(BenchFile& f, const Series& rates, MeasureKind kind, const Series& memory,
                   estimate::MemoryCounts counts, const BenchRun& base) {
  if (!rates.values.empty()) {
    BenchRun r = base;
    r.line = rates.line;
    r.kind = kind;
    r.value = steady(rates.values);
    if (rates.values.size() < 3) r.skip = "fewer than 3 steps: no steady rate after warm-up";
    f.runs.push_back(r);
  }
  if (!memory.values.empty()) {
    BenchRun r = base;
    r.line = memory.line;
    r.kind = MeasureKind::train_memory;
    r.value = *std::max_element(memory.values.begin(), memory.values.end());
    r.counts = counts;
    f.runs.push_back(r);
  }
}

// torchtitan: "step: 10  loss: 9.9  memory: 49.66GiB(52.28%)  tps: 2,397  tflops: 138.80  mfu: 14.03%"
// (older: "wps:"), tokens/s per GPU and the peak of reserved memory; "CUDA capacity: NVIDIA H100
// with 94.99GiB memory" names the device, NGPU=8 the count.
BenchFile read_torchtitan(const std::string& path, const std::vector<std::string>& lines) {
  BenchFile f{path, "torchtitan training log", {}, {}};
  BenchRun base;
  Series rates, memory;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (auto at = l.find("CUDA capacity: "); at != std::string::npos) {
      const auto end = l.find(" with ", at);
      if (end != std::string::npos) base.gpu_name = util::trim(l.substr(at + 15, end - at - 15));
    }
    if (auto n = number_after(l, "NGPU=")) base.gpus = static_cast<int>(count(*n));
    if (l.find("step:") == std::string::npos) continue;
    auto tps = number_after(l, "tps:");
    rates.add(tps ? tps : number_after(l, "wps:"), i);
    memory.add(number_after(l, "memory:"), i);
  }
  training_runs(f, rates, MeasureKind::train_per_gpu, memory, estimate::MemoryCounts::reserved, base);
  return f;
}

// torchtune: "Step 10 | loss:1.2 lr:2e-05 tokens_per_second_per_gpu:2579.4 peak_memory_active:18.9
// peak_memory_alloc:18.9 peak_memory_reserved:21.3" (GiB).
BenchFile read_torchtune(const std::string& path, const std::vector<std::string>& lines) {
  BenchFile f{path, "torchtune training log", {}, {}};
  Series rates, memory;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    rates.add(number_after(lines[i], "tokens_per_second_per_gpu"), i);
    memory.add(number_after(lines[i], "peak_memory_alloc"), i);
  }
  training_runs(f, rates, MeasureKind::train_per_gpu, memory, estimate::MemoryCounts::allocated, BenchRun{});
  return f;
}

// Megatron-LM: " iteration 10/ 500000 | ... | throughput per GPU (TFLOP/s/GPU): 137.5 | ..." and the
// arguments' "world size: 16, data-parallel size: 4, ... tensor-model-parallel size: 4,
// pipeline-model-parallel size: 1".
BenchFile read_megatron(const std::string& path, const std::vector<std::string>& lines) {
  BenchFile f{path, "Megatron-LM training log", {}, {}};
  BenchRun base;
  Series rates, samples;  // TFLOP/s per GPU; samples/s where the log prints no TFLOP/s
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    const auto ms = number_after(l, "elapsed time per iteration (ms)");
    const auto gbs = number_after(l, "global batch size");
    if (ms && gbs && *ms > 0) samples.add(*gbs / (*ms / 1000), i);
    if (auto n = number_after(l, "world size")) base.gpus = static_cast<int>(count(*n));
    if (auto n = number_after(l, "tensor-model-parallel size")) base.tp = static_cast<int>(count(*n));
    if (auto n = number_after(l, "pipeline-model-parallel size")) base.pp = static_cast<int>(count(*n));
    // The arguments block says the same, and the sequence length.
    if (auto n = argument(l, "world_size")) base.gpus = static_cast<int>(count(*n));
    if (auto n = argument(l, "tensor_model_parallel_size")) base.tp = static_cast<int>(count(*n));
    if (auto n = argument(l, "pipeline_model_parallel_size")) base.pp = static_cast<int>(count(*n));
    if (auto n = argument(l, "seq_length")) base.seq_len = count(*n);
    rates.add(number_after(l, "throughput per GPU (TFLOP/s/GPU)"), i);
  }
  if (!rates.values.empty()) {
    training_runs(f, rates, MeasureKind::train_tflops, {}, estimate::MemoryCounts::allocated, base);
  } else {
    // Megatron-Bridge and NeMo print the iteration time and global batch without TFLOP/s: samples/s,
    // made tokens/s per GPU with --seq-len and --gpus.
    base.per_sample = true;
    training_runs(f, samples, MeasureKind::train_per_gpu, {}, estimate::MemoryCounts::allocated, base);
  }
  return f;
}

// NeMo 1.x (PyTorch Lightning): the progress bar, "Epoch 0: : 47%|...| 7/15 [06:19<07:13,
// reduced_train_loss=11.50, global_step=5.000, consumed_samples=12288.0, train_step_timing in
// s=49.50]", each update the time of the last step (NeMo's TimingCallback). The global batch is
// consumed_samples / (global_step + 1); samples/s, made tokens/s per GPU with --seq-len and --gpus.
// A captured bar holds its updates on one line, separated by carriage returns.
BenchFile read_nemo(const std::string& path, const std::vector<std::string>& lines) {
  BenchFile f{path, "NeMo training log", {}, {}};
  Series samples;
  bool early = false;  // updates of the first two steps only (start-up, not the steady rate)
  for (std::size_t i = 0; i < lines.size(); ++i)
    for (const auto& update : util::split(lines[i], '\r')) {
      const auto step = number_after(update, "global_step");
      const auto consumed = number_after(update, "consumed_samples");
      const auto timing = number_after(update, "train_step_timing in s");
      if (!step || !consumed || !timing || !(*timing > 0)) continue;
      if (*step < 2) {
        early = true;
        continue;
      }
      samples.add(*consumed / (*step + 1) / *timing, i);
    }
  BenchRun base;
  base.per_sample = true;
  if (samples.values.empty()) {
    if (early) {
      BenchRun r = base;
      r.kind = MeasureKind::train_per_gpu;
      r.skip = "only the first two steps: no steady rate after start-up";
      f.runs.push_back(r);
    }
    return f;
  }
  // One update past the first steps is a step time like any other: no warm-up to leave out.
  BenchRun r = base;
  r.line = samples.line;
  r.kind = MeasureKind::train_per_gpu;
  r.value = steady(samples.values);
  f.runs.push_back(r);
  return f;
}

// Hugging Face Trainer: the final "{'train_runtime': 40.1, 'train_samples_per_second': 12.476, ...}"
// and, with skip_memory_metrics=False, its memory keys in bytes. The Trainer's TrainerMemoryTracker
// docs: a stage needed its start's memory plus alloc_delta plus peaked_delta; training starts at
// before_init_mem_gpu + init_mem_gpu_alloc_delta, so its peak is those four summed (allocated).
BenchFile read_hf_trainer(const std::string& path, const std::vector<std::string>& lines) {
  BenchFile f{path, "Hugging Face Trainer log", {}, {}};
  std::optional<double> before, init_alloc, train_alloc, train_peaked;
  int memory_line = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& l = lines[i];
    if (auto v = number_after(l, "'train_samples_per_second'")) {
      BenchRun r;
      r.line = static_cast<int>(i + 1);
      r.kind = MeasureKind::train_per_gpu;
      r.value = *v;
      r.per_sample = true;
      f.runs.push_back(r);
    }
    if (auto v = number_after(l, "'before_init_mem_gpu'")) before = v;
    if (auto v = number_after(l, "'init_mem_gpu_alloc_delta'")) init_alloc = v;
    if (auto v = number_after(l, "'train_mem_gpu_alloc_delta'")) train_alloc = v;
    if (auto v = number_after(l, "'train_mem_gpu_peaked_delta'")) {
      train_peaked = v;
      memory_line = static_cast<int>(i + 1);
    }
  }
  if (train_peaked) {
    BenchRun r;
    r.line = memory_line;
    r.kind = MeasureKind::train_memory;
    r.counts = estimate::MemoryCounts::allocated;
    if (!before || !train_alloc) {
      r.skip = "train_mem_gpu_peaked_delta without before_init_mem_gpu and train_mem_gpu_alloc_delta: no peak";
    } else {
      const double bytes = *before + init_alloc.value_or(0) + *train_alloc + *train_peaked;
      r.value = bytes / (1024.0 * 1024 * 1024);
    }
    f.runs.push_back(r);
  }
  return f;
}

// SGLang bench_serving's "============ Serving Benchmark Result ============" block: the mean
// inter-token latency (or TPOT) at the mean concurrency the benchmark measured.
BenchFile read_sglang_serving(const std::string& path, const std::vector<std::string>& lines) {
  BenchFile f{path, "SGLang bench_serving result", {}, {}};
  std::string model;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (auto at = l.find("model='"); at != std::string::npos) {
      const auto end = l.find('\'', at + 7);
      if (end != std::string::npos) model = l.substr(at + 7, end - at - 7);
    }
    if (l.find("Serving Benchmark Result") == std::string::npos) continue;
    BenchRun r;
    r.line = static_cast<int>(i + 1);
    r.engine = "sglang";
    r.model = model;
    r.kind = MeasureKind::decode;
    double ok = 0, in = 0, out = 0, concurrency = 0, itl = 0, tpot = 0;
    for (std::size_t j = i + 1; j < lines.size() && lines[j].find("=====") == std::string::npos; ++j) {
      const std::string& k = lines[j];
      if (auto v = number_after(k, "Successful requests:")) ok = *v;
      if (auto v = number_after(k, "Total input tokens:")) in = *v;
      if (auto v = number_after(k, "Total generated tokens:")) out = *v;
      if (auto v = number_after(k, "Concurrency:"); v && k.find("Max ") == std::string::npos) concurrency = *v;
      if (auto v = number_after(k, "Mean ITL (ms):")) itl = *v;
      if (auto v = number_after(k, "Mean TPOT (ms):")) tpot = *v;
    }
    const double step_ms = tpot > 0 ? tpot : itl;
    r.value = step_ms > 0 ? 1000 / step_ms : 0;
    r.batch = std::max<long long>(1, std::llround(concurrency));
    if (ok > 0) {
      r.prompt_tokens = count(in / ok);
      r.generated_tokens = count(out / ok);
    }
    if (!(concurrency > 0))
      r.skip = "no measured Concurrency in the result: the sequences decoding together are not known";
    if (!(r.value > 0)) r.skip = "no Mean ITL or Mean TPOT in the result";
    f.runs.push_back(r);
  }
  return f;
}

[[noreturn]] void unknown_format(const std::string& path) {
  throw Error(fmt::format("{}: not a format calibrate reads (it reads {})", path, kBenchFormats));
}

}  // namespace

BenchFile read_bench_file(const std::string& path, const std::string& text) {
  const auto lines = lines_of(text);
  std::size_t first = 0;
  while (first < lines.size() && util::trim(lines[first]).empty()) ++first;
  if (first == lines.size()) throw Error(fmt::format("{}: empty file (it reads {})", path, kBenchFormats));
  const std::string head = util::trim(lines[first]);
  // A JSON document, or JSON Lines (a Hugging Face Trainer log's Python dicts are neither).
  const bool python_dicts = head.front() == '{' && head.find("{'") != std::string::npos;
  std::vector<std::pair<util::Json, int>> objects;
  if ((head.front() == '{' || head.front() == '[') && !python_dicts) {
    if (auto doc = util::JsonDoc::parse(text, path)) {
      const auto& root = doc->root();
      if (root.is_array()) {
        for (std::size_t i = 0; i < root.size(); ++i)
          if (root[i].is_object()) objects.emplace_back(root[i], doc->line_of("/" + std::to_string(i)));
      } else if (root.is_object()) {
        objects.emplace_back(root, 1);
      }
    } else {
      for (std::size_t i = 0; i < lines.size(); ++i) {
        if (util::trim(lines[i]).empty()) continue;
        auto one = util::JsonDoc::parse(lines[i], path);
        // Not JSON Lines: a log whose lines start with "[rank0]:" or "{'loss'" is read as text below.
        if (!one || !one->root().is_object()) {
          objects.clear();
          break;
        }
        objects.emplace_back(one->root(), static_cast<int>(i + 1));
      }
    }
  }
  if (!objects.empty()) {
    BenchFile f{path, "", {}, {}};
    for (const auto& [o, line] : objects) {
      if (util::starts_with(text_member(o, "backend"), "sglang")) {
        f.format = "SGLang bench_serving JSON";
        read_sglang_serve(o, line, f);
      } else if (o.contains("avg_ts") && o.contains("model_type")) {
        f.format = "llama-bench JSON";
        read_llama_bench_object(o, line, f);
      } else if (o.contains("mean_tpot_ms") || (o.contains("output_throughput") && o.contains("model_id"))) {
        f.format = "vLLM bench serve JSON";
        read_vllm_serve(o, line, f);
      } else if (o.contains("tokens_per_second") && o.contains("elapsed_time")) {
        f.format = "vLLM benchmark_throughput JSON";
        BenchRun r;
        r.line = line;
        r.engine = "vllm";
        r.kind = MeasureKind::decode_total;
        r.value = number_member(o, "tokens_per_second");
        r.skip = "offline throughput at the engine's own batch size (the result states no concurrency)";
        f.runs.push_back(r);
      } else {
        unknown_format(path);
      }
    }
    return f;
  }
  if (looks_like_smi_csv(head)) {
    auto cap = rules::parse_smi_csv(text, path);
    if (!cap) throw Error(cap.error());
    BenchFile f{path, "nvidia-smi CSV", {}, {}};
    for (const auto& row : cap->rows)
      if (const auto* name = cap->cell(row, "name")) f.gpu_names.push_back(util::trim(*name));
    return f;
  }
  for (const auto& l : lines)
    if (util::starts_with(util::trim(l), "|") && l.find("t/s") != std::string::npos &&
        l.find("model") != std::string::npos)
      return read_llama_bench_markdown(path, lines);
  auto any = [&](auto&& pred) { return std::any_of(lines.begin(), lines.end(), pred); };
  if (any([](const std::string& l) { return l.find("Serving Benchmark Result") != std::string::npos; }))
    return read_sglang_serving(path, lines);
  if (any([](const std::string& l) { return l.find("tokens_per_second_per_gpu") != std::string::npos; }))
    return read_torchtune(path, lines);
  if (any([](const std::string& l) {
        return l.find("step:") != std::string::npos &&
               (l.find("tps:") != std::string::npos || l.find("wps:") != std::string::npos);
      }))
    return read_torchtitan(path, lines);
  if (any([](const std::string& l) {
        return l.find("throughput per GPU (TFLOP/s/GPU)") != std::string::npos ||
               (l.find("elapsed time per iteration (ms)") != std::string::npos &&
                l.find("global batch size") != std::string::npos);
      }))
    return read_megatron(path, lines);
  // The keys with a number after them: a README that names them is not a log.
  if (any([](const std::string& l) {
        return number_after(l, "train_step_timing in s") && number_after(l, "global_step");
      }))
    return read_nemo(path, lines);
  if (any([](const std::string& l) {
        return number_after(l, "'train_samples_per_second'") || number_after(l, "'train_mem_gpu_peaked_delta'");
      }))
    return read_hf_trainer(path, lines);
  unknown_format(path);
}

}  // namespace gpuadvisor::cli
