#pragma once
// The reasoning behind an answer, on stderr at -v (which layout, which factors, which candidates
// were dropped and why) and -vv (the arithmetic: every memory line with its formula, every rule of
// every candidate). Read from the structs the estimators and the rules engine return, so those
// layers stay free of I/O. Silent by default: spdlog's level is warn without -v.
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/estimate/perf.h"
#include "gpuadvisor/estimate/workload.h"
#include "gpuadvisor/rules/recommend.h"

namespace gpuadvisor::cli {

/// The workload as planned: model, task, precision, and its layout over the GPUs.
void trace_workload(const estimate::Workload& w, const catalog::Gpu* gpu);
/// The memory total; at -vv each line with its formula.
void trace_memory(const estimate::MemoryEstimate& mem);
/// What bounds the speed, the utilisation and efficiency used, the factors; at -vv the inputs.
void trace_perf(const estimate::PerfEstimate& p, const catalog::Gpu& gpu);
/// Candidates evaluated, accepted and dropped (each with the rule that dropped it), the plans
/// and their scores; at -vv every rule's value for every candidate.
void trace_recommend(const rules::Recommendation& rec);

}  // namespace gpuadvisor::cli
