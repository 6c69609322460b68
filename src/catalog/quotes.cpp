#include "gpuadvisor/catalog/quotes.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpuadvisor/util/json.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::catalog {
namespace {

// Fields on one quotes CSV line: a quote has six columns; a line of 20 million commas is not one
// to split into 20 million strings.
constexpr std::size_t kMaxQuoteFields = 64;

// One comma-separated line; double quotes around a field allow commas in it ("" is a quote).
std::vector<std::string> csv_fields(std::string_view line, const std::string& where) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (out.size() > kMaxQuoteFields)
      throw Error(
          fmt::format("{}: more than {} fields on the line (a quote has gpu, price_usd, vendor, date and count)", where,
                      kMaxQuoteFields));
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"')
        out.back() += '"', ++i;
      else if (ch == '"')
        quoted = false;
      else
        out.back() += ch;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.emplace_back();
    } else {
      out.back() += ch;
    }
  }
  for (auto& f : out) f = std::string(util::trim(f));
  return out;
}

Quote make_quote(const std::string& where, const std::string& gpu, const std::string& price, const std::string& vendor,
                 const std::string& date, const std::string& count, const Catalog& catalog) {
  auto fail = [&](const std::string& field, const std::string& what) -> void {
    throw Error(fmt::format("{}: {}: {}", where, field, what));
  };
  Quote q;
  q.origin = where;
  if (gpu.empty()) fail("gpu", "missing: which GPU the quote is for");
  auto g = catalog.resolve(gpu);
  if (!g) fail("gpu", g.error());
  q.gpu_id = (*g)->id;
  auto usd = util::parse_money(price);
  if (!usd) fail("price_usd", usd.error());
  if (!(*usd > 0 && *usd < 1e10))
    fail("price_usd", fmt::format("expected a price above $0, got {}", util::quote(price)));
  q.usd = *usd;
  q.vendor = vendor;
  if (q.vendor.empty()) fail("vendor", "missing: who quoted it");
  q.date = date;
  if (!months_of(q.date))
    fail("date", fmt::format("expected a date like 2026-11-20 or 2026-11, got {}", util::quote(date)));
  if (!count.empty()) {
    auto n = util::parse_int(count, 1, 1024);
    if (!n) fail("count", n.error());
    q.count = static_cast<int>(*n);
  }
  return q;
}

}  // namespace

std::vector<Quote> load_quotes(const std::string& path, const Catalog& catalog) {
  auto text = util::read_file(path);
  if (!text) throw Error(text.error());
  std::vector<Quote> out;
  const auto first = text->find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (*text)[first] == '{') {
    auto doc = util::JsonDoc::parse(std::move(*text), path);
    if (!doc) throw Error(doc.error());
    util::Fields top(*doc, doc->root(), "", "");
    const auto& arr = top.raw("quotes");
    if (!arr.is_array()) top.fail("quotes", "expected an array of quotes");
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const std::string ptr = "/quotes/" + std::to_string(i);
      util::Fields f(*doc, arr[i], ptr, "");
      // A number or a string ("$2,400", "2.4k"); anything else is named.
      auto text_of = [&](const char* key) -> std::string {
        if (!f.has(key) || f.raw(key).is_null()) return "";
        const auto& v = f.raw(key);
        if (v.is_number()) return fmt::format("{}", v.get<double>());
        if (v.is_string()) return v.get<std::string>();
        f.fail(key, "expected a number or a string, got " + util::json_snippet(v));
      };
      const std::string price = text_of("price_usd"), count = text_of("count");
      out.push_back(make_quote(doc->where(ptr), f.opt_str("gpu").value_or(""), price, f.opt_str("vendor").value_or(""),
                               f.opt_str("date").value_or(""), count, catalog));
    }
  } else {
    util::LineReader lines(*text);
    std::vector<std::string> header;
    for (std::string_view line; lines.next(line);) {
      if (util::trim(line).empty() || util::trim(line)[0] == '#') continue;
      const std::string where = fmt::format("{}:{}", path, lines.number());
      auto fields = csv_fields(line, where);
      if (header.empty()) {
        for (auto& h : fields) h = util::lower(h);
        for (const char* need : {"gpu", "price_usd", "vendor", "date"})
          if (std::find(fields.begin(), fields.end(), need) == fields.end())
            throw Error(fmt::format("{}: the header must name gpu, price_usd, vendor and date (count optional), got {}",
                                    where, util::quote(line)));
        header = fields;
        continue;
      }
      if (fields.size() != header.size())
        throw Error(fmt::format("{}: {} fields, the header has {}", where, fields.size(), header.size()));
      auto get = [&](const char* key) {
        auto it = std::find(header.begin(), header.end(), key);
        return it == header.end() ? std::string() : fields[static_cast<std::size_t>(it - header.begin())];
      };
      out.push_back(make_quote(where, get("gpu"), get("price_usd"), get("vendor"), get("date"), get("count"), catalog));
    }
    if (header.empty())
      throw Error(fmt::format("{}: no quotes: expected a CSV header (gpu,price_usd,vendor,date) or JSON", path));
  }
  return out;
}

void apply_gpu_quotes(const std::vector<Quote>& quotes, Catalog& catalog) {
  std::vector<Gpu> changed;
  for (const auto& q : quotes) {
    const Gpu& g = *catalog.find(q.gpu_id);
    if (q.count == 1) {
      auto it = std::find_if(changed.begin(), changed.end(), [&](const Gpu& x) { return x.id == g.id; });
      Gpu copy = it == changed.end() ? g : *it;
      copy.quote.usd = q.usd;
      copy.quote.as_of = q.date;
      copy.quote.source = Source{fmt::format("quote from {} ({})", q.vendor, q.origin), "", {}};
      if (it == changed.end())
        changed.push_back(std::move(copy));
      else
        *it = std::move(copy);
    }
  }
  catalog.merge(std::move(changed));
}

void apply_system_quotes(const std::vector<Quote>& quotes, const Catalog& catalog, Prices& prices) {
  std::vector<Platform> systems;
  for (const auto& q : quotes) {
    if (q.count == 1) continue;
    const Gpu& g = *catalog.find(q.gpu_id);
    Platform p;
    p.id = fmt::format("quote-{}x-{}", q.count, g.id);
    p.name = fmt::format("{} x {} system quoted by {}", q.count, g.name, q.vendor);
    const bool baseboard = g.form_factor == FormFactor::sxm || g.form_factor == FormFactor::oam;
    p.kind = g.form_factor == FormFactor::pcie ? "server" : "hgx";
    p.form_factor = baseboard ? *g.form_factor : FormFactor::pcie;
    p.gpu_ids = {g.id};
    p.gpu_slots = q.count;
    p.price_usd = q.usd;
    p.price_includes_gpus = true;
    p.price_as_of = q.date;
    p.price_source = Source{fmt::format("quote from {} ({})", q.vendor, q.origin), "", {}};
    p.as_of = q.date;
    // The system's power limits are the shipped platform's for the same GPU, where one exists.
    for (const auto& s : prices.platforms)
      if (std::find(s.gpu_ids.begin(), s.gpu_ids.end(), g.id) != s.gpu_ids.end()) {
        p.system_max_power_w = s.system_max_power_w;
        p.host_power_w = s.host_power_w;
        break;
      }
    systems.push_back(std::move(p));
  }
  prices.platforms.insert(prices.platforms.begin(), systems.begin(), systems.end());
}

}  // namespace gpuadvisor::catalog
