#include "gpuadvisor/catalog/prices.h"

#include <algorithm>

#include "gpuadvisor/catalog/embedded.h"
#include "gpuadvisor/catalog/snapshot.h"

namespace gpuadvisor::catalog {
namespace {

SourcedValue read_value(const util::JsonDoc& doc, const util::Json& j, const std::string& ptr) {
  util::Fields f(doc, j, ptr, "");
  SourcedValue v;
  v.value = f.num("value");
  if (!(v.value > 0)) f.fail("value", "must be positive");
  v.as_of = f.opt_str("as_of").value_or("");
  v.note = f.opt_str("note").value_or(f.opt_str("notes").value_or(""));
  v.sources = read_sources(f);
  return v;
}

}  // namespace

void Prices::parse_into(const util::JsonDoc& doc, Prices& out) {
  util::Fields top(doc, doc.root(), "", "");
  if (top.has("instances")) {
    const auto& arr = top.raw("instances");
    if (!arr.is_array()) top.fail("instances", "expected an array of cloud instances");
    for (std::size_t i = 0; i < arr.size(); ++i) {
      std::string ptr = "/instances/" + std::to_string(i);
      util::Fields f(doc, arr[i], ptr, "");
      CloudInstance c;
      c.id = f.str("id");
      c.provider = f.opt_str("provider").value_or("");
      c.instance = f.opt_str("instance").value_or(c.id);
      c.gpu_id = f.str("gpu_id");
      c.gpu_count = static_cast<int>(f.integer("gpu_count", 1, 1024));
      c.usd_per_hour = f.opt_num("usd_per_hour");
      if (c.usd_per_hour && !(*c.usd_per_hour > 0)) f.fail("usd_per_hour", "must be positive");
      c.pricing = f.opt_str("pricing").value_or("on-demand");
      c.region = f.opt_str("region").value_or("");
      c.as_of = f.opt_str("as_of").value_or("");
      c.notes = f.opt_str("notes").value_or("");
      c.sources = read_sources(f);
      auto it = std::find_if(out.instances.begin(), out.instances.end(), [&](const CloudInstance& x) { return x.id == c.id; });
      if (it != out.instances.end()) *it = std::move(c);
      else out.instances.push_back(std::move(c));
    }
  }
  if (top.has("servers")) {
    const auto& arr = top.raw("servers");
    for (std::size_t i = 0; i < arr.size(); ++i) {
      util::Fields f(doc, arr[i], "/servers/" + std::to_string(i), "");
      ServerPlatform s;
      s.id = f.str("id");
      s.description = f.opt_str("description").value_or("");
      s.gpu_form_factor = f.opt_str("gpu_form_factor").value_or("");
      s.max_gpus = static_cast<int>(f.opt_integer("max_gpus", 1, 1024).value_or(8));
      s.usd = f.opt_num("usd");
      s.platform_power_w = f.opt_num("platform_power_w");
      s.sources = read_sources(f);
      out.servers.push_back(std::move(s));
    }
  }
  if (top.has("energy")) {
    util::Fields e(doc, top.raw("energy"), "/energy", "energy");
    if (e.has("usd_per_kwh")) out.kwh_usd = read_value(doc, e.raw("usd_per_kwh"), "/energy/usd_per_kwh");
    if (e.has("pue")) out.pue = read_value(doc, e.raw("pue"), "/energy/pue");
  }
}

Prices Prices::load(const std::vector<std::string>& user_files) {
  Prices p;
  if (auto snap = embedded::snapshot("cloud.json")) decode(*snap, p);
  else parse_into(embedded::doc("cloud.json"), p);
  for (const auto& f : user_files) {
    auto d = util::JsonDoc::load(f);
    if (!d) throw Error(d.error());
    parse_into(*d, p);
  }
  return p;
}

}  // namespace gpuadvisor::catalog
