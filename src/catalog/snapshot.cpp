#include "gpuadvisor/catalog/snapshot.h"

#include "gpuadvisor/util/serial.h"

namespace gpuadvisor::catalog {

// Every member of each record, in declaration order: a member left out here would load as its
// default, which tests/unit/test_snapshot.cpp catches by comparing with the JSON parse.
using util::serial::Of;

template <class Ar, Of<Price> T>
void fields(Ar& ar, T& p) {
  ar(p.usd, p.as_of, p.source);
}

template <class Ar, Of<Gpu> T>
void fields(Ar& ar, T& g) {
  ar(g.id, g.name, g.aliases, g.pci_device_ids, g.vendor, g.architecture, g.compute_capability, g.release_year,
     g.segment, g.form_factor, g.cuda_cores, g.tensor_cores, g.memory_bytes, g.memory_type, g.memory_bus_bits,
     g.memory_data_rate_gbps, g.memory_bandwidth_gbs, g.peak_tflops, g.tdp_w, g.power_min_w, g.power_max_w,
     g.nvlink_generation, g.interconnect, g.interconnect_gbs, g.pcie_generation, g.pcie_lanes, g.mig_instances,
     g.gpus_per_board, g.ecc, g.launch_msrp_usd, g.street, g.used, g.status, g.status_year, g.status_source,
     g.status_as_of, g.market, g.sources, g.as_of, g.notes, g.origin);
}

template <class Ar, Of<MoE> T>
void fields(Ar& ar, T& m) {
  ar(m.experts, m.experts_per_token, m.shared_experts, m.expert_intermediate, m.dense_layers, m.dense_intermediate);
}

template <class Ar, Of<Mla> T>
void fields(Ar& ar, T& m) {
  ar(m.kv_lora_rank, m.q_lora_rank, m.qk_rope_head_dim, m.qk_nope_head_dim, m.v_head_dim);
}

template <class Ar, Of<Diffusion> T>
void fields(Ar& ar, T& d) {
  ar(d.gflops_per_step, d.guidance_passes, d.gflops_decoder, d.default_steps, d.decoder_fp32);
}

template <class Ar, Of<VisionInfo> T>
void fields(Ar& ar, T& v) {
  ar(v.image_size, v.gflops_per_image, v.activation_bytes_per_image, v.activation_note, v.diffusion);
}

template <class Ar, Of<GgufShape> T>
void fields(Ar& ar, T& g) {
  ar(g.architecture, g.layers, g.hidden, g.heads, g.kv_heads, g.head_dim, g.context, g.intermediate, g.vocab, g.experts,
     g.experts_used, g.kv_lora_rank, g.rope_dim, g.sliding_window);
}

template <class Ar, Of<TensorStats> T>
void fields(Ar& ar, T& t) {
  ar(t.params, t.bytes, t.dtypes, t.origin, t.note, t.shape);
}

template <class Ar, Of<Model> T>
void fields(Ar& ar, T& m) {
  ar(m.id, m.name, m.aliases, m.family, m.kind, m.params, m.active_params, m.layers, m.encoder_layers, m.hidden,
     m.heads, m.kv_heads, m.head_dim, m.intermediate, m.vocab, m.tied_embeddings, m.gated_mlp, m.bias, m.qkv_bias,
     m.norm, m.position, m.max_context, m.sliding_layers, m.sliding_window, m.extra_params, m.moe, m.mla, m.vision,
     m.tensors, m.sources, m.as_of, m.notes, m.origin, m.assumptions);
}

template <class Ar, Of<CloudInstance> T>
void fields(Ar& ar, T& c) {
  ar(c.id, c.provider, c.instance, c.gpu_id, c.gpu_count, c.usd_per_hour, c.pricing, c.region, c.as_of, c.notes,
     c.sources);
}

template <class Ar, Of<Platform> T>
void fields(Ar& ar, T& p) {
  ar(p.id, p.name, p.kind, p.form_factor, p.gpu_ids, p.gpu_slots, p.max_gpu_tdp_w, p.system_max_power_w, p.host_power_w,
     p.idle_w, p.price_usd, p.price_includes_gpus, p.price_as_of, p.price_source, p.sources, p.as_of, p.notes);
}

template <class Ar, Of<Region> T>
void fields(Ar& ar, T& r) {
  ar(r.id, r.kind, r.as_of, r.notes, r.usd_per_kwh, r.sources);
}

template <class Ar, Of<SourcedValue> T>
void fields(Ar& ar, T& v) {
  ar(v.value, v.as_of, v.note, v.sources);
}

template <class Ar, Of<Prices> T>
void fields(Ar& ar, T& p) {
  ar(p.instances, p.platforms, p.regions, p.kwh_usd, p.pue);
}

template <class Ar, Of<Factor> T>
void fields(Ar& ar, T& f) {
  ar(f.id, f.kind, f.low, f.typical, f.high, f.method, f.derived_from, f.sources);
}

std::string encode(const std::vector<Gpu>& gpus) { return util::serial::encode(gpus); }
std::string encode(const std::vector<Model>& models) { return util::serial::encode(models); }
std::string encode(const Prices& prices) { return util::serial::encode(prices); }
std::string encode(const Efficiency& eff) { return util::serial::encode(eff.all()); }

void decode(std::string_view bytes, std::vector<Gpu>& gpus) { gpus = util::serial::decode<std::vector<Gpu>>(bytes); }
void decode(std::string_view bytes, std::vector<Model>& models) {
  models = util::serial::decode<std::vector<Model>>(bytes);
}
void decode(std::string_view bytes, Prices& prices) { prices = util::serial::decode<Prices>(bytes); }
void decode(std::string_view bytes, Efficiency& eff) {
  eff = Efficiency(util::serial::decode<std::map<std::string, Factor, std::less<>>>(bytes));
}

}  // namespace gpuadvisor::catalog
