// The calibration program: fits the performance and activation-memory factors of
// data/efficiency.json to the published measurements in tests/accuracy/*.json by least squares on
// log error, reports the held-out error of 5-fold cross-validation per kind, and checks or
// rewrites the shipped factors (docs/calibration.md).
//
//   gpuadvisor_accuracy [--check] [--write FILE] [--markdown] [--verbose] RECORDS.json...
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/estimate/measurement.h"
#include "gpuadvisor/util/error.h"
#include "gpuadvisor/util/json.h"

using namespace gpuadvisor;
using estimate::MeasureKind;

namespace {

constexpr int kFolds = 5;

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto i = static_cast<std::size_t>(pos);
  const double frac = pos - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] * (1 - frac) + v[i + 1] * frac : v[i];
}

// The kinds the targets speak of: single-stream decode, batched decode, prefill, training,
// images, and training and inference memory.
std::string group_of(const estimate::Measurement& m) {
  switch (m.kind) {
    case MeasureKind::decode:
      return "decode tokens/s";
    case MeasureKind::decode_total:
      return "batched decode tokens/s";
    case MeasureKind::prefill:
      return "prefill tokens/s";
    case MeasureKind::images:
    case MeasureKind::diffusion_steps:
      return "images/s";
    case MeasureKind::train_memory:
      return "training memory";
    case MeasureKind::inference_memory:
      // Whole runs apart from the figures of one part (the weights a checkpoint loads, the KV cache
      // of a context), which check the formulas rather than the run.
      return m.memory.part == estimate::MemoryPart::all ? "inference memory" : "inference memory, one part";
    default:
      return "training tokens/s per GPU";
  }
}

struct Row {
  int records = 0;
  double median = 0, p90 = 0, coverage = 0;
  bool ranged = true;  ///< the estimates carry a low-high range (memory figures do not)
};

std::map<std::string, Row> table(const std::vector<estimate::HeldOut>& held) {
  std::map<std::string, std::vector<double>> errs;
  std::map<std::string, int> inside;
  for (const auto& h : held) {
    const auto g = group_of(*h.p->m);
    errs[g].push_back(std::fabs(h.got.value - h.p->m->expected) / h.p->m->expected);
    inside[g] += h.p->m->expected >= h.got.low * 0.999 && h.p->m->expected <= h.got.high * 1.001;
  }
  std::map<std::string, Row> out;
  for (auto& [g, e] : errs)
    out[g] = {static_cast<int>(e.size()), quantile(e, 0.5), quantile(e, 0.9),
              static_cast<double>(inside[g]) / static_cast<double>(e.size()), g.find("memory") == std::string::npos};
  return out;
}

struct Target {
  double median, gate;
};

}  // namespace

int main(int argc, char** argv) {
  bool check = false, markdown = false, verbose = false;
  std::string write_to, efficiency_path = "data/efficiency.json", targets_path;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--check")
      check = true;
    else if (a == "--markdown")
      markdown = true;
    else if (a == "--verbose")
      verbose = true;
    else if (a == "--write" && i + 1 < argc)
      write_to = argv[++i];
    else if (a == "--efficiency" && i + 1 < argc)
      efficiency_path = argv[++i];
    else if (a == "--targets" && i + 1 < argc)
      targets_path = argv[++i];
    else
      files.push_back(a);
  }
  try {
    auto eff_doc = util::JsonDoc::load(efficiency_path);
    if (!eff_doc) throw Error(eff_doc.error());
    const auto shipped = catalog::Efficiency::parse(*eff_doc);
    auto cat = catalog::Catalog::load({});
    auto models = catalog::ModelSet::load({});

    std::vector<estimate::Measurement> all;
    for (const auto& f : files) {
      auto doc = util::JsonDoc::load(f);
      if (!doc) throw Error(doc.error());
      auto ms = estimate::read_measurements(*doc);
      all.insert(all.end(), ms.begin(), ms.end());
    }
    std::vector<estimate::Prepared> prepared;
    prepared.reserve(all.size());
    for (const auto& m : all) prepared.push_back(estimate::prepare(m, cat, models));
    std::vector<const estimate::Prepared*> usable;
    int skipped = 0;
    for (auto& p : prepared)
      if (p.skip.empty())
        if (auto why = estimate::implausible(p); !why.empty()) p.skip = why;
    for (const auto& p : prepared) {
      if (p.skip.empty() && estimate::predict(p, shipped)) {
        usable.push_back(&p);
        continue;
      }
      ++skipped;
      if (verbose)
        fmt::print("  skipped {}: {}\n", p.m->id, p.skip.empty() ? "no estimate for this GPU and precision" : p.skip);
    }

    const auto ids = estimate::speed_factor_ids(shipped);
    // Every fit starts from the same neutral values, not from the shipped ones, so that the shipped
    // factors are a fixed point of this program (two of them trade off where few records tell
    // them apart, and a fit that started from its own last answer would drift).
    const auto start = estimate::neutral_start(shipped, ids);
    // Held-out errors: each fold's records predicted with factors fitted on the other folds.
    const auto held = estimate::cross_validate(usable, start, ids, kFolds);
    const auto rows = table(held);

    // The factors from every record, with low/high from the spread of the residuals.
    std::vector<estimate::FactorFit> fits;
    auto fitted = estimate::fit_factors(usable, start, ids, &fits);
    std::map<std::string, std::vector<double>> resid;
    std::map<std::string, std::vector<std::string>> used_by;
    std::map<std::string, bool> from_memory;
    for (const auto* p : usable)
      if (auto got = estimate::predict(*p, fitted))
        for (auto id : got->factors) {
          resid[std::string(id)].push_back(std::log(p->m->expected / got->value));
          used_by[std::string(id)].push_back(p->m->id);
          from_memory[std::string(id)] = estimate::is_memory(p->m->kind);
        }
    std::vector<catalog::Factor> out_factors;
    for (const auto& fit : fits) {
      catalog::Factor f = fitted.get(fit.id);
      const bool spread = f.kind == "mfu" || f.kind == "bandwidth_efficiency" || f.kind == "scaling";
      f.low = f.high = f.typical;
      if (spread && resid[fit.id].size() >= 3) {
        f.low = std::min(f.typical, f.typical * std::exp(quantile(resid[fit.id], 0.1)));
        f.high = std::min(1.0, std::max(f.typical, f.typical * std::exp(quantile(resid[fit.id], 0.9))));
      }
      f.derived_from = used_by[fit.id];
      std::sort(f.derived_from.begin(), f.derived_from.end());
      f.method = fmt::format(
          "Fitted by tests/accuracy/accuracy.cpp: least squares on log(estimate / measured) over the {} records that "
          "use it{}.",
          fit.records, spread ? "; low/high: typical x the 10th/90th percentile of measured / estimated" : "");
      out_factors.push_back(std::move(f));
    }

    if (markdown) {
      fmt::print("| kind | records | held-out median error | p90 | within range |\n|---|---|---|---|---|\n");
      for (const auto& [g, r] : rows)
        fmt::print("| {} | {} | {:.0f}% | {:.0f}% | {} |\n", g, r.records, r.median * 100, r.p90 * 100,
                   r.ranged ? fmt::format("{:.0f}%", r.coverage * 100) : "-");
      fmt::print("\n| factor | fitted | low | high | records |\n|---|---|---|---|---|\n");
      for (const auto& f : out_factors)
        fmt::print("| {} | {:.4g} | {:.4g} | {:.4g} | {} |\n", f.id, f.typical, f.low, f.high, f.derived_from.size());
    } else {
      fmt::print("{} records, {} evaluated, {} skipped ({}-fold cross-validation)\n", all.size(), usable.size(),
                 skipped, kFolds);
      fmt::print("{:<28} {:>7} {:>15} {:>6} {:>12}\n", "kind", "records", "held-out median", "p90", "within range");
      for (const auto& [g, r] : rows)
        fmt::print("{:<28} {:>7} {:>14.1f}% {:>5.0f}% {:>12}\n", g, r.records, r.median * 100, r.p90 * 100,
                   r.ranged ? fmt::format("{:.0f}%", r.coverage * 100) : "-");
      fmt::print("\n{:<34} {:>10} {:>10} {:>8}\n", "factor", "shipped", "fitted", "records");
      for (const auto& f : fits)
        fmt::print("{:<34} {:>10.4g} {:>10.4g} {:>8}\n", f.id, shipped.get(f.id).typical, f.after, f.records);
    }
    if (verbose)
      for (const auto& h : held)
        fmt::print("  {:<22} {:<28} fold {}  estimated {:>9.4g}  measured {:>9.4g}  ({:+.0f}%)\n", h.p->m->id,
                   std::string(estimate::kMeasureKindNames.name(h.p->m->kind)), h.fold, h.got.value, h.p->m->expected,
                   (h.got.value / h.p->m->expected - 1) * 100);

    if (!write_to.empty()) {
      auto j = eff_doc->root();
      for (auto& f : j["factors"])
        for (const auto& o : out_factors)
          if (f["id"] == o.id) {
            f["low"] = o.low;
            f["typical"] = o.typical;
            f["high"] = o.high;
            f["derived_from"] = o.derived_from;
            f["method"] = o.method;
            // The records cite their own sources: the reference file's for C-/D- ids, each
            // record's `source` for X- ids.
            if (from_memory[o.id])
              f["sources"] = util::Json::array(
                  {{{"title",
                     "Published peak-memory measurements of training and fine-tuning runs, structured per record "
                     "with what each figure counts: shared/reference/published-measurements.json (ids A-, B-)"},
                    {"repo", "gpuadvisor"},
                    {"path", "tests/accuracy/memory-records.json"}}});
            else
              f["sources"] = util::Json::array(
                  {{{"title",
                     "Published speed measurements, structured per record with the source each came from: "
                     "shared/reference/published-measurements.json (ids C-, D-) and "
                     "tests/accuracy/extra-records.json (ids X-)"},
                    {"repo", "gpuadvisor"},
                    {"path", "tests/accuracy/perf-records.json"}}});
          }
      std::ofstream os(write_to);
      os << j.dump(2) << "\n";
      fmt::print("wrote {}\n", write_to);
    }

    int failures = 0;
    if (check) {
      // The shipped factors are this program's output: none may drift from the fit.
      for (const auto& f : out_factors) {
        const auto& s = shipped.get(f.id);
        if (std::fabs(s.typical / f.typical - 1) > 0.01) {
          fmt::print("FAIL {}: data/efficiency.json has {:.4g}, the fit gives {:.4g} (rerun with --write)\n", f.id,
                     s.typical, f.typical);
          ++failures;
        }
      }
      if (!targets_path.empty()) {
        auto tdoc = util::JsonDoc::load(targets_path);
        if (!tdoc) throw Error(tdoc.error());
        for (auto& [g, t] : tdoc->root().items()) {
          const double target = t["target"], gate = t["gate"];
          auto it = rows.find(g);
          if (it == rows.end()) {
            fmt::print("FAIL {}: no held-out records\n", g);
            ++failures;
            continue;
          }
          const auto& r = it->second;
          // No kind's 90th percentile above 3x its median, where there are enough records for a
          // 90th percentile to be more than the one largest error.
          // "p90_rule": false where the target states a median only (the memory targets).
          const bool p90_rule = !t.contains("p90_rule") || t["p90_rule"].get<bool>();
          const bool over_gate = r.median > gate || (p90_rule && r.records >= 10 && r.p90 > 3 * r.median);
          fmt::print("{} {}: held-out median {:.1f}% (target {:.0f}%, gate {:.0f}%), p90 {:.0f}%\n",
                     over_gate            ? "FAIL"
                     : r.median <= target ? "ok  "
                                          : "MISS",
                     g, r.median * 100, target * 100, gate * 100, r.p90 * 100);
          failures += over_gate;
        }
      }
    }
    return failures ? 1 : 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "gpuadvisor_accuracy: %s\n", e.what());
    return 2;
  }
}
