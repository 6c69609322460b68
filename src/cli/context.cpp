#include "context.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include "gpuadvisor/estimate/measurement.h"
#include "gpuadvisor/util/json.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::cli {

const catalog::Catalog& Context::catalog() {
  if (!catalog_) {
    std::vector<std::string> files;
    if (const char* env = std::getenv("GPUADVISOR_CATALOG"); env && *env)
      for (auto& f : util::split(env, ':'))
        if (!f.empty()) files.push_back(f);
    files.insert(files.end(), catalog_files.begin(), catalog_files.end());
    catalog_ = catalog::Catalog::load(files);
    for (const auto& q : quote_files) {
      auto more = catalog::load_quotes(q, *catalog_);
      quotes_.insert(quotes_.end(), more.begin(), more.end());
    }
    catalog::apply_gpu_quotes(quotes_, *catalog_);
  }
  return *catalog_;
}

const catalog::ModelSet& Context::models() {
  if (!models_) models_ = catalog::ModelSet::load(model_files);
  return *models_;
}

const catalog::Prices& Context::prices() {
  if (!prices_) {
    prices_ = catalog::Prices::load(price_files);
    catalog::apply_system_quotes(quotes_, catalog(), *prices_);
  }
  return *prices_;
}

void add_prices_option(CLI::App& app, Context& ctx) {
  app.add_option("--prices", ctx.price_files,
                 "Extra cloud prices file (JSON, as data/cloud.json); adds or replaces instances by id")
      ->type_name("FILE");
  app.add_option(
         "--quotes", ctx.quote_files,
         "Your own quotes (CSV or JSON: gpu, price_usd, vendor, date, count for a whole system); they replace the "
         "catalog's prices for this run (docs/quotes.md)")
      ->type_name("FILE");
}

void run_batch_lines(Context& ctx, const std::string& path, const BatchLineFn& one) {
  auto text = util::read_file(path);
  if (!text) throw Error(text.error());
  const std::string origin = path == "-" ? "<stdin>" : path;
  int worst = 0;
  int lines_run = 0, failed = 0, first_failed = 0;
  util::LineReader lines(*text);
  std::string_view text_line;
  while (lines.next(text_line)) {
    const int line_no = lines.number();
    const std::string line(text_line);
    if (util::trim(line).empty()) continue;
    ++lines_run;
    util::Json result;
    std::string written;  // the line's output, when made without `result`
    Exit code = Exit::ok;
    try {
      auto doc = util::JsonDoc::parse(line, fmt::format("{}:{}", origin, line_no));
      if (!doc) throw Error(doc.error());
      // Line numbers inside one-line documents are all 1: report the file's line instead.
      result["line"] = line_no;
      BatchResult r = one(*doc, code);
      util::Json& body = r.json;
      if (r.members) {
        written.reserve(r.members->size() + 24);
        written += "{\"line\":";
        written += std::to_string(line_no);
        if (!r.members->empty()) written += ',';
        written += *r.members;
        written += '}';
      } else if (body.is_object() && !body.empty() && !body.contains("line")) {
        // {"line": N, ...body}: the body's own text after the line number, without copying it
        // into a new object first (the same bytes, a good part of a batch run's time saved).
        written = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        written.replace(0, 1, fmt::format("{{\"line\":{},", line_no));
      } else {
        for (auto& [k, v] : body.items()) result[k] = std::move(v);
      }
    } catch (const Error& e) {
      // The line is named by "line"; drop the "file:line[:1[:col]]: " prefix of the message.
      std::string msg = e.what();
      std::string prefix = fmt::format("{}:{}", origin, line_no);
      if (util::starts_with(msg, prefix)) {
        std::size_t i = prefix.size();
        while (i < msg.size() && msg[i] == ':' && i + 1 < msg.size() &&
               std::isdigit(static_cast<unsigned char>(msg[i + 1]))) {
          ++i;
          while (i < msg.size() && std::isdigit(static_cast<unsigned char>(msg[i]))) ++i;
        }
        if (msg.compare(i, 2, ": ") == 0) msg = msg.substr(i + 2);
      }
      result = util::Json();
      result["line"] = line_no;
      result["error"] = msg;
      written.clear();
      code = e.code();
      if (failed++ == 0) first_failed = line_no;
    }
    worst = std::max(worst, static_cast<int>(code));
    if (written.empty()) written = result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    ctx.out << written << "\n";
  }
  // The errors are in the output, one per line; standard error says that there are some.
  if (failed > 0) {
    ctx.out.flush();  // after the results when both go to one place (2>&1)
    ctx.err << fmt::format(
        "gpuadvisor: error: {}: {} of {} lines failed, the first on line {}: each has an \"error\" in the output\n",
        origin, failed, lines_run, first_failed);
  }
  ctx.exit = static_cast<Exit>(worst);
}

void run_batch(Context& ctx, const std::string& path, const estimate::WorkloadInput& flags,
               const std::vector<std::string>& own, const BatchFn& one) {
  run_batch_lines(ctx, path, [&](const util::JsonDoc& doc, Exit& code) {
    util::Fields fields(doc, doc.root(), "", "");
    auto in = estimate::merge_profile(doc, "", flags, own);
    return one(in, fields, code);
  });
}

std::string describe(const estimate::Workload& w) {
  // A bare size's name already gives its parameter count.
  std::string s = w.model.id.rfind("custom-", 0) == 0
                      ? fmt::format("{}, {}, {}", w.model.name, estimate::name(w.task), w.precision)
                      : fmt::format("{} ({}), {}, {}", w.model.name,
                                    w.model.params > 0 ? util::format_count(w.model.params) + " params"
                                                       : std::string("params unknown"),
                                    estimate::name(w.task), w.precision);
  if (w.model.is_transformer())
    s += fmt::format(", batch {}, {} {}", w.batch, estimate::is_training(w.task) ? "sequence" : "context", w.seq_len);
  else
    s += fmt::format(", batch {}", w.batch);
  if (w.gpus > 1)
    s += fmt::format(", {} GPUs (tp {}, pp {}, dp {}{})", w.gpus, w.tp, w.pp, w.dp(),
                     w.zero ? fmt::format(", ZeRO-{}", w.zero) : "");
  return s;
}

const catalog::Gpu& Context::gpu(const std::string& query) {
  if (auto it = resolved_gpus_.find(query); it != resolved_gpus_.end()) return *it->second;
  auto r = catalog().resolve(query);
  if (!r) throw Error("--gpu: " + r.error());
  resolved_gpus_.emplace(query, *r);
  return **r;
}

std::string Context::gpu_choice(const std::string& query) {
  const auto& chosen = gpu(query);
  auto others = catalog().also_matching(query, chosen);
  if (others.empty()) return {};
  std::vector<std::string> ids;
  for (const auto* g : others) ids.push_back(g->id);
  return fmt::format("{} is taken as {}; it also matches {} (give the id to choose)", util::quote(query), chosen.id,
                     util::join(ids, ", "));
}

estimate::Workload Context::workload(const estimate::WorkloadInput& flags, estimate::WorkloadSet* set) {
  std::optional<estimate::WorkloadInput> merged;  // with a profile; else the flags as they are
  if (!flags.profile.empty()) {
    auto doc = util::JsonDoc::load(flags.profile);
    if (!doc) throw Error(doc.error());
    merged = estimate::merge_profile(*doc, "", flags);
  }
  const estimate::WorkloadInput& in = merged ? *merged : flags;
  // A bare size ("10B") is no preset: the embedded presets need not be parsed for it (--models
  // files still are, so that a bad one is reported either way).
  static const catalog::ModelSet kNoPresets;
  const bool bare_size =
      in.model_config.empty() && model_files.empty() && static_cast<bool>(util::parse_count(in.model));
  return estimate::make_workload(in, bare_size ? kNoPresets : models(), set);
}

void add_workload_options(CLI::App& app, estimate::WorkloadInput& in, Context& ctx) {
  auto* g = "Workload";
  app.add_option("--model", in.model, "Model preset (llama-3.1-8b; see 'models list') or a size (7B, 350M, 1.5T)")
      ->group(g);
  app.add_option("--model-config", in.model_config, "Hugging Face config.json to read the architecture from")
      ->group(g)
      ->type_name("FILE");
  app.add_option("--model-file", in.model_file,
                 "A .safetensors, .safetensors.index.json or .gguf file: exact weight sizes from its header")
      ->group(g)
      ->type_name("FILE");
  app.add_option("--profile", in.profile, "A JSON workload (fields as these flags, snake_case); flags override it")
      ->group(g)
      ->type_name("FILE");
  app.add_option("--task", in.task, "inference (default), train, lora or qlora")->group(g);
  app.add_option("--precision", in.precision,
                 "fp32, tf32, fp16, bf16, fp8, int8, int4, gptq-int4, awq-int4, gptq-int8, nf4, q4_0, q4_k_m, q5_k_m, "
                 "q6_k, q8_0")
      ->group(g);
  app.add_option("--engine", in.engine,
                 "Inference engine: llama.cpp, vllm, sglang, trt-llm, transformers, exllamav2 (default: llama.cpp for "
                 "GGUF, transformers for nf4, else vllm)")
      ->group(g);
  app.add_option("--split", in.split,
                 "How the engine splits a model over GPUs: layer (llama.cpp's default) or tensor (vLLM's; llama.cpp "
                 "--split-mode row)")
      ->group(g);
  app.add_option("--optimizer", in.optimizer,
                 "adamw (default), adam, sgd, adafactor, adamw-8bit, paged-adamw-8bit, paged-adamw")
      ->group(g);
  app.add_option("--recipe", in.recipe,
                 "Fine-tuning defaults of a framework: torchtune, hf-trainer, axolotl, unsloth, deepspeed, fsdp, "
                 "megatron, llama-factory")
      ->group(g);
  app.add_option("--master-weights", in.master_weights,
                 "fp32 (mixed precision, the default) or none (pure bf16 training)")
      ->group(g);
  app.add_option("--gradient-dtype", in.gradient_dtype, "Gradients in bf16/fp16 (default, the weights' dtype) or fp32")
      ->group(g);
  app.add_flag("--optimizer-in-backward", in.optimizer_in_backward,
               "Step each parameter in the backward pass: gradients are not all held")
      ->group(g);
  app.add_flag("--chunked-loss", in.chunked_loss, "Compute the output logits and loss in chunks of tokens")->group(g);
  app.add_flag("--packed", in.packed, "Sequences packed to the full length (no padding)")->group(g);
  app.add_flag("--activation-offload", in.activation_offload,
               "Keep the checkpointed layer inputs in host RAM (needs --checkpointing full)")
      ->group(g);
  app.add_option("--offload", in.offload,
                 "Training state in host RAM: none (default), optimizer (ZeRO-Offload), params (ZeRO-Infinity, FSDP "
                 "CPU offload)")
      ->group(g);
  app.add_option("--gpu-layers,--ngl", in.gpu_layers,
                 "llama.cpp partial offload: layers on the GPU, the rest in host RAM (inference)")
      ->group(g);
  app.add_flag("--cpu-experts", in.cpu_experts,
               "llama.cpp --cpu-moe: a mixture-of-experts model's routed experts in host RAM, the rest on the GPU")
      ->group(g);
  app.add_option("--host-bandwidth", in.host_bandwidth,
                 "Host RAM bandwidth in GB/s for the layers --gpu-layers leaves on the CPU (default 89.6: two "
                 "channels of DDR5-5600)")
      ->type_name("GB_S")
      ->group(g);
  app.add_option("--batch", in.batch,
                 "Batch size (micro-batch per GPU for training; concurrent sequences for inference)")
      ->group(g);
  app.add_option("--seq-len,--context", in.seq_len, "Sequence length (training) or context length (inference), tokens")
      ->group(g);
  app.add_option("--gpus", in.gpus, "Number of GPUs")->group(g);
  app.add_option("--zero", in.zero, "ZeRO stage 0-3 or fsdp (= 3), training only")->group(g);
  app.add_option("--tp", in.tp, "Tensor-parallel degree")->group(g);
  app.add_option("--pp", in.pp, "Pipeline-parallel degree")->group(g);
  app.add_option("--checkpointing", in.checkpointing, "Activation checkpointing: none, selective, selective-op, full")
      ->group(g);
  app.add_option("--flash-attention", in.flash_attention, "on (default) or off")->group(g);
  app.add_option("--lora-rank", in.lora_rank, "LoRA rank (default 16)")->group(g);
  app.add_option("--lora-targets", in.lora_targets, "Adapted matrices: q,k,v,o,gate,up,down, or all, attn, mlp")
      ->group(g);
  app.add_option("--kv-precision", in.kv_precision, "KV-cache precision: fp16 (default), bf16, fp8, int8, int4, fp32")
      ->group(g);
  app.add_option("--headroom", in.headroom,
                 "Share of GPU memory to keep free (default 10%, as vLLM's 0.9 utilisation; 0.05 or 5%)")
      ->group(g);
  app.add_option("--calibration", ctx.calibration_file,
                 "A calibration file from 'gpuadvisor calibrate': your fitted factors, for the GPUs and engines "
                 "you measured (also GPUADVISOR_CALIBRATION)")
      ->group(g)
      ->type_name("FILE");
  app.add_option("--steps", in.steps, "Denoising steps per image for diffusion models (sd-1.5, sdxl; default 30)")
      ->group(g);
  app.add_option("--tokens", in.tokens, "Training tokens (300B, 2T)")->group(g);
  app.add_option("--dataset-tokens", in.dataset_tokens,
                 "Dataset size in tokens (2B), trained on --epochs times, instead of --tokens")
      ->group(g);
  app.add_option("--epochs", in.epochs, "Passes over --dataset-tokens (default 1; 0.5 and 3 work)")->group(g);
  app.add_option("--mfu", in.mfu, "Model FLOPs utilisation to assume (0-1), overriding the calibrated value")->group(g);
  app.add_option("--models", ctx.model_files, "Extra model presets file (JSON, as data/models.json); repeatable")
      ->group(g)
      ->type_name("FILE");
}

report::Format Context::output_format() const {
  const auto allowed = formats.empty() ? std::span<const report::Format>(kTabular) : formats;
  auto f = format.empty() ? Result<report::Format>(allowed.front()) : report::parse_format(format, allowed);
  if (!f) throw Error(f.error());
  if (*f == report::Format::table)
    if (auto* buf = dynamic_cast<report::SafeStreambuf*>(out.rdbuf()))
      buf->wrap_lines(static_cast<std::size_t>(style.width));
  return *f;
}

const catalog::Efficiency& Context::efficiency() const {
  if (efficiency_) return *efficiency_;
  const auto& published = catalog::Efficiency::embedded();
  std::string path = calibration_file;
  std::string label = "--calibration";
  if (path.empty())
    if (const char* env = std::getenv("GPUADVISOR_CALIBRATION"); env && *env) {
      path = env;
      label = "GPUADVISOR_CALIBRATION";
    }
  if (path.empty()) return published;
  auto doc = util::JsonDoc::load(path);
  if (!doc) throw Error(fmt::format("{}: {}", label, doc.error()));
  util::Fields top(*doc, doc->root(), "", "");
  if (top.opt_str("command") != "calibrate")
    top.fail("command", "not a calibration file (write one with 'gpuadvisor calibrate')");
  catalog::Efficiency eff = published;
  const auto& factors = top.raw("factors");
  if (!factors.is_array() || factors.empty()) top.fail("factors", "expected a non-empty array of fitted factors");
  for (std::size_t i = 0; i < factors.size(); ++i) {
    util::Fields f(*doc, factors[i], "/factors/" + std::to_string(i), "");
    const std::string id = f.str("id");
    if (!published.all().count(id)) f.fail("id", fmt::format("no factor {} in this version", util::quote(id)));
    const double v = f.num("fitted");
    if (!(v > 0) || !std::isfinite(v)) f.fail("fitted", "must be a positive number");
    eff = estimate::with_typical(eff, id, v);
  }
  catalog::CalibrationScope scope;
  util::Fields sc(*doc, top.raw("scope"), "/scope", "");
  for (const char* key : {"gpus", "engines"}) {
    const auto& a = sc.raw(key);
    if (!a.is_array()) sc.fail(key, "expected an array of strings");
    for (const auto& x : a) {
      if (!x.is_string()) sc.fail(key, "expected an array of strings");
      (std::string_view(key) == "gpus" ? scope.gpus : scope.engines).push_back(x.get<std::string>());
    }
  }
  const auto& ms = top.raw("measurements");
  const std::size_t n = ms.is_array() ? ms.size() : 0;
  scope.label = fmt::format("calibrated from {} of your measurements ({}, {}) for {} on {}", n, path,
                            top.opt_str("created").value_or("undated"), util::join(scope.engines, ", "),
                            util::join(scope.gpus, ", "));
  scope.eff = std::make_shared<const catalog::Efficiency>(std::move(eff));
  efficiency_ = published.with_scope(std::move(scope));
  return *efficiency_;
}

std::string Context::today() const {
  if (const char* t = std::getenv("GPUADVISOR_TODAY"); t && *t) return t;
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  return fmt::format("{:04}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

std::string format_help(std::span<const report::Format> formats, std::string_view note) {
  std::vector<std::string> names;
  for (auto f : formats) names.emplace_back(report::name(f));
  const std::string list = util::join_list(names, "or");
  std::vector<std::string> asides;
  if (formats.size() > 1) asides.push_back(fmt::format("{} by default", report::name(formats.front())));
  if (!note.empty()) asides.emplace_back(note);
  return fmt::format("Output format: {}{}", list, asides.empty() ? "" : " (" + util::join(asides, "; ") + ")");
}

void add_format_option(CLI::App& app, Context& ctx, std::span<const report::Format> formats, std::string_view note) {
  app.add_option("--format", ctx.format, format_help(formats, note))->type_name("FORMAT");
  app.preparse_callback([&ctx, formats](std::size_t) { ctx.formats = formats; });
}

void add_catalog_option(CLI::App& app, Context& ctx) {
  app.add_option("--catalog", ctx.catalog_files,
                 "Extra GPU catalog file (JSON, as data/gpus.json); adds or replaces GPUs by id; repeatable")
      ->type_name("FILE");
}

}  // namespace gpuadvisor::cli
