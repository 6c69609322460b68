#include "gpuadvisor/catalog/prices.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpuadvisor/catalog/embedded.h"
#include "gpuadvisor/catalog/snapshot.h"
#include "gpuadvisor/util/text.h"

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

// A record of a user file replaces the one with its id, or is added.
template <class T>
void put_by_id(std::vector<T>& records, T x) {
  auto it = std::find_if(records.begin(), records.end(), [&](const T& r) { return r.id == x.id; });
  if (it != records.end())
    *it = std::move(x);
  else
    records.push_back(std::move(x));
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
      put_by_id(out.instances, std::move(c));
    }
  }
  if (top.has("platforms")) {
    const auto& arr = top.raw("platforms");
    if (!arr.is_array()) top.fail("platforms", "expected an array of host platforms");
    for (std::size_t i = 0; i < arr.size(); ++i) {
      util::Fields f(doc, arr[i], "/platforms/" + std::to_string(i), "");
      Platform p;
      p.id = f.str("id");
      p.name = f.opt_str("name").value_or(p.id);
      p.kind = f.str("kind");
      if (p.kind != "workstation" && p.kind != "server" && p.kind != "hgx")
        f.fail("kind", fmt::format("expected one of workstation, server, hgx, got {}", util::quote(p.kind)));
      const std::string ff = f.str("form_factor");
      const auto form = kFormFactorNames.parse(ff);
      if (!form || (*form != FormFactor::pcie && *form != FormFactor::sxm && *form != FormFactor::oam))
        f.fail("form_factor", fmt::format("expected one of pcie, sxm, oam, got {}", util::quote(ff)));
      p.form_factor = *form;
      if (f.has("gpu_ids")) {
        const auto& ids = f.raw("gpu_ids");
        if (!ids.is_array()) f.fail("gpu_ids", "expected an array of GPU ids");
        for (const auto& x : ids) {
          if (!x.is_string()) f.fail("gpu_ids", "expected an array of GPU ids, got " + util::json_snippet(x));
          p.gpu_ids.push_back(x.get<std::string>());
        }
      }
      p.gpu_slots = static_cast<int>(f.integer("gpu_slots", 1, 64));
      auto watts = [&](const char* key) {
        auto v = f.opt_num(key);
        if (v && !(*v > 0 && *v < 1e6)) f.fail(key, "must be a power in W between 0 and 1,000,000");
        return v;
      };
      p.max_gpu_tdp_w = watts("max_gpu_tdp_w");
      p.system_max_power_w = watts("system_max_power_w");
      p.host_power_w = watts("host_power_w");
      p.idle_w = watts("idle_w");
      p.price_usd = f.opt_num("price_usd");
      if (p.price_usd && !(*p.price_usd > 0 && *p.price_usd < 1e9))
        f.fail("price_usd", "must be a price in USD above 0");
      p.price_includes_gpus = f.opt_bool("price_includes_gpus").value_or(false);
      p.price_as_of = f.opt_str("price_as_of").value_or("");
      if (f.has("price_source") && !f.raw("price_source").is_null()) p.price_source = read_source(f, "price_source");
      if (p.price_usd && !p.price_source) f.fail("price_usd", "a price needs a price_source");
      p.sources = read_sources(f);
      p.as_of = f.opt_str("as_of").value_or("");
      p.notes = f.opt_str("notes").value_or("");
      put_by_id(out.platforms, std::move(p));
    }
  }
  if (top.has("energy")) {
    util::Fields e(doc, top.raw("energy"), "/energy", "energy");
    if (e.has("usd_per_kwh")) out.kwh_usd = read_value(doc, e.raw("usd_per_kwh"), "/energy/usd_per_kwh");
    if (e.has("pue")) out.pue = read_value(doc, e.raw("pue"), "/energy/pue");
    if (e.has("regions")) {
      const auto& arr = e.raw("regions");
      if (!arr.is_array()) e.fail("regions", "expected an array of electricity regions");
      for (std::size_t i = 0; i < arr.size(); ++i) {
        util::Fields f(doc, arr[i], "/energy/regions/" + std::to_string(i), "");
        Region r;
        r.id = f.str("id");
        r.kind = f.opt_str("kind").value_or("");
        r.usd_per_kwh = f.opt_num("usd_per_kwh");
        if (r.usd_per_kwh && !(*r.usd_per_kwh > 0 && *r.usd_per_kwh < 10))
          f.fail("usd_per_kwh", "must be between 0 and 10 USD");
        r.as_of = f.opt_str("as_of").value_or("");
        r.notes = f.opt_str("notes").value_or("");
        r.sources = read_sources(f);
        put_by_id(out.regions, std::move(r));
      }
    }
  }
}

Prices Prices::load(const std::vector<std::string>& user_files) {
  Prices p;
  if (auto snap = embedded::snapshot("cloud.json")) {
    decode(*snap, p);
  } else {
    parse_into(embedded::doc("cloud.json"), p);
    parse_into(embedded::doc("platforms.json"), p);
  }
  for (const auto& f : user_files) {
    auto d = util::JsonDoc::load(f);
    if (!d) throw Error(d.error());
    parse_into(*d, p);
  }
  return p;
}

}  // namespace gpuadvisor::catalog
