#include "gpuadvisor/catalog/ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "gpuadvisor/catalog/embedded.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/util/text.h"

namespace gpuadvisor::catalog {
namespace {

constexpr std::string_view kFrameworkNames[] = {"pytorch", "tensorflow", "jax"};
constexpr std::string_view kFrameworkDisplay[] = {"PyTorch", "TensorFlow", "JAX"};
constexpr std::string_view kAnswerNames[] = {"yes", "limited", "no", "unknown"};
constexpr std::string_view kSeverityNames[] = {"info", "warning", "error", "critical"};

std::size_t idx(Framework f) { return static_cast<std::size_t>(f); }

// --- reading helpers -------------------------------------------------------------------------

std::vector<std::string> strings(const util::Fields& f, const std::string& key, bool required) {
  std::vector<std::string> out;
  if (!f.has(key)) {
    if (required) f.fail(key, "missing");
    return out;
  }
  const auto& a = f.raw(key);
  if (!a.is_array()) f.fail(key, "expected an array of strings, got " + util::json_snippet(a));
  for (const auto& x : a) {
    if (!x.is_string()) f.fail(key, "expected an array of strings, got " + util::json_snippet(x));
    out.push_back(x.get<std::string>());
  }
  return out;
}

// A version field; ">=" prefixes (as Table 3 writes drivers) are dropped.
std::optional<std::string> opt_version(const util::Fields& f, const std::string& key) {
  auto s = f.opt_str(key);
  if (!s) return std::nullopt;
  std::string v = util::trim(*s);
  if (util::starts_with(v, ">=")) v = util::trim(v.substr(2));
  auto parsed = parse_version(v);
  if (!parsed) f.fail(key, parsed.error());
  return v;
}

std::string version(const util::Fields& f, const std::string& key) {
  auto v = opt_version(f, key);
  if (!v) f.fail(key, "missing");
  return *v;
}

// {"10.3": "the sm_100 code runs"}: per compute capability texts.
std::map<std::string, std::string> text_by_cc(const util::Fields& f, const std::string& key) {
  std::map<std::string, std::string> out;
  if (!f.has(key)) return out;
  const auto& obj = f.raw(key);
  if (!obj.is_object()) f.fail(key, "expected an object of compute capability -> text, got " + util::json_snippet(obj));
  util::Fields sub(f.doc(), obj, f.pointer(key), "");
  for (auto& [cc, v] : obj.items()) out[cc] = sub.str(cc);
  return out;
}

// {"8.6": "1.8", "8.7": null}: per compute capability versions, null = not checked.
std::map<std::string, std::optional<std::string>> by_cc(const util::Fields& f, const std::string& key) {
  std::map<std::string, std::optional<std::string>> out;
  if (!f.has(key)) return out;
  const auto& obj = f.raw(key);
  if (!obj.is_object())
    f.fail(key, "expected an object of compute capability -> version, got " + util::json_snippet(obj));
  util::Fields sub(f.doc(), obj, f.pointer(key), "");
  for (auto& [cc, v] : obj.items()) {
    if (v.is_null())
      out[cc] = std::nullopt;
    else
      out[cc] = version(sub, cc);
  }
  return out;
}

ArchCompat parse_arch(const util::JsonDoc& doc, const util::Json& j, const std::string& ptr) {
  std::string label;
  if (j.is_object() && j.contains("id") && j["id"].is_string())
    label = "architecture '" + j["id"].get<std::string>() + "'";
  util::Fields f(doc, j, ptr, label);
  ArchCompat a;
  a.id = f.str("id");
  if (!find_architecture(a.id)) f.fail("id", fmt::format("unknown architecture {}", util::quote(a.id)));
  a.compute_capabilities = strings(f, "compute_capabilities", true);
  if (a.compute_capabilities.empty()) f.fail("compute_capabilities", "must not be empty");
  for (const auto& cc : a.compute_capabilities)
    if (!parse_version(cc))
      f.fail("compute_capabilities", fmt::format("expected versions like 8.6, got {}", util::quote(cc)));
  a.first_cuda = version(f, "first_cuda");
  a.last_cuda = opt_version(f, "last_cuda");
  a.first_cuda_by_cc = by_cc(f, "first_cuda_by_cc");
  for (auto fw : kFrameworks) {
    std::string n(name(fw));
    auto& s = a.frameworks[idx(fw)];
    s.first = opt_version(f, n + "_first");
    s.runs_from = opt_version(f, n + "_runs_from");
    s.note = f.opt_str(n + "_note").value_or("");
    a.framework_first_by_cc[idx(fw)] = by_cc(f, n + "_first_by_cc");
    a.framework_runs_from_by_cc[idx(fw)] = by_cc(f, n + "_runs_from_by_cc");
    a.framework_note_by_cc[idx(fw)] = text_by_cc(f, n + "_note_by_cc");
  }
  a.renumbered_ccs = text_by_cc(f, "renumbered_ccs");
  for (const auto& [old_cc, new_cc] : a.renumbered_ccs)
    if (std::find(a.compute_capabilities.begin(), a.compute_capabilities.end(), new_cc) == a.compute_capabilities.end())
      f.fail("renumbered_ccs",
             fmt::format("{} is renumbered to {}, which is not one of {} ({})", util::quote(old_cc),
                         util::quote(new_cc), util::quote(a.id), util::join(a.compute_capabilities, ", ")));
  // A per compute capability override for a capability the architecture does not list is a typo.
  auto check_ccs = [&](const std::string& key, const auto& m) {
    for (const auto& entry : m) {
      // Not a structured binding: clang 14 (the fuzz and sanitizer builds) cannot capture one.
      const std::string& cc = entry.first;
      if (std::none_of(a.compute_capabilities.begin(), a.compute_capabilities.end(),
                       [&](const std::string& c) { return c == cc; }))
        f.fail(key, fmt::format("compute capability {} is not one of {} ({})", util::quote(cc), util::quote(a.id),
                                util::join(a.compute_capabilities, ", ")));
    }
  };
  check_ccs("first_cuda_by_cc", a.first_cuda_by_cc);
  for (auto fw : kFrameworks) {
    std::string n(name(fw));
    check_ccs(n + "_first_by_cc", a.framework_first_by_cc[idx(fw)]);
    check_ccs(n + "_runs_from_by_cc", a.framework_runs_from_by_cc[idx(fw)]);
    check_ccs(n + "_note_by_cc", a.framework_note_by_cc[idx(fw)]);
  }
  if (f.has("features")) {
    util::Fields ft(doc, f.raw("features"), f.pointer("features"), label + ": features");
    a.features.tf32 = ft.boolean("tf32");
    a.features.bf16 = ft.boolean("bf16");
    a.features.fp8 = ft.boolean("fp8");
    a.features.fp4 = ft.boolean("fp4");
    a.features.mig = ft.boolean("mig");
    a.features.structured_sparsity = ft.boolean("structured_sparsity");
    a.features.transformer_engine = ft.boolean("transformer_engine");
  }
  if (f.has("features_by_cc")) {
    const auto& obj = f.raw("features_by_cc");
    if (!obj.is_object())
      f.fail("features_by_cc", "expected an object of compute capability -> features, got " + util::json_snippet(obj));
    for (auto& [cc, feats] : obj.items()) {
      util::Fields ff(doc, feats, f.pointer("features_by_cc") + "/" + cc, label + ": features_by_cc");
      for (auto& [k, v] : feats.items()) {
        static const std::set<std::string> known = {
            "tf32", "bf16", "fp8", "fp4", "mig", "structured_sparsity", "transformer_engine"};
        if (!known.count(k)) ff.fail(k, "unknown feature");
        a.features_by_cc[cc][k] = ff.boolean(k);
        (void)v;
      }
    }
  }
  a.notes = f.opt_str("notes").value_or("");
  a.sources = read_sources(f);
  a.as_of = f.opt_str("as_of").value_or("");
  a.origin = doc.where(ptr);
  return a;
}

CudaDriver parse_cuda(const util::JsonDoc& doc, const util::Json& j, const std::string& ptr) {
  std::string label;
  if (j.is_object() && j.contains("cuda") && j["cuda"].is_string()) label = "CUDA " + j["cuda"].get<std::string>();
  util::Fields f(doc, j, ptr, label);
  CudaDriver c;
  c.cuda = version(f, "cuda");
  c.toolkit_release = f.opt_str("toolkit_release").value_or("");
  c.min_driver_linux = opt_version(f, "min_driver_linux");
  c.min_driver_windows = opt_version(f, "min_driver_windows");
  c.minor_compat_linux = opt_version(f, "minor_version_compat_linux");
  c.minor_compat_windows = opt_version(f, "minor_version_compat_windows");
  c.notes = f.opt_str("notes").value_or("");
  c.sources = read_sources(f);
  c.as_of = f.opt_str("as_of").value_or("");
  return c;
}

FrameworkRelease parse_release(const util::JsonDoc& doc, const util::Json& j, const std::string& ptr) {
  util::Fields f(doc, j, ptr, "");
  FrameworkRelease r;
  std::string fw = f.str("framework");
  auto parsed = framework_from(fw);
  if (!parsed) {
    std::vector<std::string> names(std::begin(kFrameworkNames), std::end(kFrameworkNames));
    f.fail("framework", fmt::format("expected one of {}, got {}{}", util::join(names, ", "), util::quote(fw),
                                    util::did_you_mean(fw, names)));
  }
  r.framework = *parsed;
  r.version = version(f, "version");
  r.release = f.opt_str("release").value_or(r.version);
  r.cuda = strings(f, "cuda", true);
  for (const auto& c : r.cuda)
    if (!parse_version(c)) f.fail("cuda", fmt::format("expected CUDA versions like 11.8, got {}", util::quote(c)));
  if (f.has("packages")) {
    const auto& obj = f.raw("packages");
    if (!obj.is_object())
      f.fail("packages", "expected an object of CUDA version -> package name, got " + util::json_snippet(obj));
    util::Fields sub(doc, obj, f.pointer("packages"), "");
    for (auto& [c, v] : obj.items()) {
      if (std::find(r.cuda.begin(), r.cuda.end(), c) == r.cuda.end())
        sub.fail(c, fmt::format("CUDA {} is not one of the release's builds ({})", c, util::join(r.cuda, ", ")));
      r.packages[c] = sub.str(c);
    }
  }
  r.cudnn = f.opt_str("cudnn");
  r.notes = f.opt_str("notes").value_or("");
  r.sources = read_sources(f);
  return r;
}

// Parses an embedded data file once; a broken embedded file is an internal error.
template <typename T>
T load_embedded(std::string_view file) {
  auto text = embedded::find(file);
  if (!text) throw Error(fmt::format("embedded {} missing", file), Exit::internal);
  auto doc = util::JsonDoc::parse(std::string(*text), fmt::format("<embedded>/{}", file));
  if (!doc) throw Error(doc.error(), Exit::internal);
  try {
    return T::parse(*doc);
  } catch (const Error& e) {
    throw Error(e.what(), Exit::internal);
  }
}

const util::Json& array_field(const util::Fields& top, const std::string& key, const char* what) {
  const auto& arr = top.raw(key);
  if (!arr.is_array()) top.fail(key, fmt::format("expected an array of {}, got {}", what, util::json_snippet(arr)));
  return arr;
}

Version must_parse(std::string_view s) {
  auto v = parse_version(s);
  if (!v) throw Error(v.error(), Exit::internal);
  return *v;
}

// "9.0" -> "sm_90"
std::string sm_name(const std::string& cc) {
  std::string s;
  for (char c : cc)
    if (c != '.') s += c;
  return "sm_" + s;
}

std::string arch_label(const ArchCompat& a, const std::string& cc) {
  const auto* info = find_architecture(a.id);
  return fmt::format("{} ({})", info ? std::string(info->display) : a.id, sm_name(cc));
}

// The oldest build of a release that can carry native code for the architecture.
std::optional<std::string> pick_build(const FrameworkRelease& rel, const std::optional<std::string>& first_cuda,
                                      const std::optional<std::string>& last_cuda) {
  if (!first_cuda) return std::nullopt;
  std::optional<std::string> best;
  for (const auto& c : rel.cuda) {
    if (compare_versions(c, *first_cuda) < 0) continue;
    if (last_cuda && compare_versions(c, *last_cuda) > 0) continue;
    if (!best || compare_versions(c, *best) < 0) best = c;
  }
  return best;
}

const Source kBinaryCompatibility{
    "NVIDIA CUDA C++ Programming Guide: Binary Compatibility (a cubin for compute capability X.y runs on X.z, z >= y)",
    "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility",
    {}};

// The newest compute capability of the same major below `cc` whose first toolkit is at most
// `cuda`: code built for it runs on `cc`.
std::optional<std::string> compatible_cc(const CompatTable& t, const std::string& cc, const Version& cuda) {
  Version target = must_parse(cc);
  std::optional<Version> best;
  std::string best_text;
  for (const auto& a : t.architectures())
    for (const auto& c : a.compute_capabilities) {
      Version v = must_parse(c);
      if (v.parts[0] != target.parts[0] || !(v < target)) continue;
      auto fc = a.first_cuda_for(c);
      if (!fc || must_parse(*fc) > cuda) continue;
      if (!best || *best < v) {
        best = v;
        best_text = c;
      }
    }
  if (!best) return std::nullopt;
  return best_text;
}

bool mentions(const Source& s, const std::set<std::string>& used) {
  if (s.fields.empty()) return true;
  return std::any_of(s.fields.begin(), s.fields.end(), [&](const std::string& f) {
    return used.count(f) || (util::starts_with(f, "features.") && used.count("features"));
  });
}

void add_sources(std::vector<Source>& out, const std::vector<Source>& more,
                 const std::set<std::string>* used = nullptr) {
  for (const auto& s : more) {
    if (used && !mentions(s, *used)) continue;
    bool dup =
        std::any_of(out.begin(), out.end(), [&](const Source& x) { return x.url == s.url && x.title == s.title; });
    if (!dup) out.push_back(Source{s.title, s.url, {}});
  }
}

std::string normalise(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (std::isspace(u)) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += static_cast<char>(std::tolower(u));
  }
  return out;
}

}  // namespace

// --- versions --------------------------------------------------------------------------------

std::string Version::prefix(std::size_t n) const {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += (i ? "." : "") + std::to_string(i < parts.size() ? parts[i] : 0);
  return out;
}

Result<Version> parse_version(std::string_view text) {
  std::string t = util::trim(text);
  auto bad = [&] {
    return Result<Version>::fail(fmt::format("expected a version like 12.4 or 535.104.05, got {}", util::quote(text)));
  };
  std::string_view s = t;
  if (!s.empty() && (s[0] == 'v' || s[0] == 'V')) s.remove_prefix(1);
  if (auto cut = s.find_first_of("+-"); cut != std::string_view::npos && cut > 0) s = s.substr(0, cut);
  if (s.empty()) return bad();
  Version v;
  v.text = std::string(s);
  std::size_t start = 0;
  while (true) {
    std::size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || part.size() > 9) return bad();
    long n = 0;
    auto r = std::from_chars(part.data(), part.data() + part.size(), n);
    if (r.ec != std::errc() || r.ptr != part.data() + part.size()) return bad();
    v.parts.push_back(n);
    if (v.parts.size() > 6) return bad();
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return v;
}

std::strong_ordering compare(const Version& a, const Version& b) {
  std::size_t n = std::max(a.parts.size(), b.parts.size());
  for (std::size_t i = 0; i < n; ++i) {
    long x = i < a.parts.size() ? a.parts[i] : 0;
    long y = i < b.parts.size() ? b.parts[i] : 0;
    if (x != y) return x <=> y;
  }
  return std::strong_ordering::equal;
}

std::strong_ordering compare_versions(std::string_view a, std::string_view b) {
  return compare(must_parse(a), must_parse(b));
}

// --- compat tables ---------------------------------------------------------------------------

std::string_view name(Framework f) { return kFrameworkNames[idx(f)]; }
std::string_view display(Framework f) { return kFrameworkDisplay[idx(f)]; }
std::optional<Framework> framework_from(std::string_view s) {
  std::string l = util::lower(util::trim(s));
  if (l == "torch") l = "pytorch";
  if (l == "tf") l = "tensorflow";
  for (auto f : kFrameworks)
    if (name(f) == l) return f;
  return std::nullopt;
}
std::string_view name(Answer a) { return kAnswerNames[static_cast<std::size_t>(a)]; }

std::optional<std::string> ArchCompat::first_cuda_for(const std::string& cc) const {
  if (auto it = first_cuda_by_cc.find(cc); it != first_cuda_by_cc.end()) return it->second;
  return first_cuda;
}

ArchFeatures ArchCompat::features_for(const std::string& cc) const {
  ArchFeatures f = features;
  auto it = features_by_cc.find(cc);
  if (it == features_by_cc.end()) return f;
  for (const auto& [k, v] : it->second) {
    if (k == "tf32")
      f.tf32 = v;
    else if (k == "bf16")
      f.bf16 = v;
    else if (k == "fp8")
      f.fp8 = v;
    else if (k == "fp4")
      f.fp4 = v;
    else if (k == "mig")
      f.mig = v;
    else if (k == "structured_sparsity")
      f.structured_sparsity = v;
    else if (k == "transformer_engine")
      f.transformer_engine = v;
  }
  return f;
}

FrameworkSupport ArchCompat::framework_for(Framework f, const std::string& cc) const {
  FrameworkSupport s = frameworks[idx(f)];
  const auto& m = framework_first_by_cc[idx(f)];
  if (auto it = m.find(cc); it != m.end()) {
    s.first = it->second;
    if (!it->second) s.runs_from.reset();
  }
  if (auto it = framework_runs_from_by_cc[idx(f)].find(cc); it != framework_runs_from_by_cc[idx(f)].end())
    s.runs_from = it->second;
  if (auto it = framework_note_by_cc[idx(f)].find(cc); it != framework_note_by_cc[idx(f)].end()) s.note = it->second;
  return s;
}

std::string FrameworkRelease::package(const std::string& c) const {
  auto it = packages.find(c);
  return it == packages.end() ? std::string() : it->second;
}

const CompatTable& CompatTable::embedded() {
  static const CompatTable t = load_embedded<CompatTable>("compat.json");
  return t;
}

CompatTable CompatTable::parse(const util::JsonDoc& doc) {
  util::Fields top(doc, doc.root(), "", "");
  CompatTable t;
  const auto& archs = array_field(top, "architectures", "architecture records");
  for (std::size_t i = 0; i < archs.size(); ++i)
    t.archs_.push_back(parse_arch(doc, archs[i], "/architectures/" + std::to_string(i)));
  const auto& cuda = array_field(top, "cuda_drivers", "CUDA driver records");
  for (std::size_t i = 0; i < cuda.size(); ++i)
    t.cuda_.push_back(parse_cuda(doc, cuda[i], "/cuda_drivers/" + std::to_string(i)));
  std::stable_sort(t.cuda_.begin(), t.cuda_.end(),
                   [](const CudaDriver& a, const CudaDriver& b) { return compare_versions(a.cuda, b.cuda) < 0; });
  const auto& fw = array_field(top, "frameworks", "framework releases");
  for (std::size_t i = 0; i < fw.size(); ++i)
    t.releases_.push_back(parse_release(doc, fw[i], "/frameworks/" + std::to_string(i)));
  std::stable_sort(t.releases_.begin(), t.releases_.end(), [](const FrameworkRelease& a, const FrameworkRelease& b) {
    if (a.framework != b.framework) return a.framework < b.framework;
    return compare_versions(a.version, b.version) < 0;
  });
  return t;
}

const ArchCompat* CompatTable::arch(std::string_view id) const {
  for (const auto& a : archs_)
    if (a.id == id) return &a;
  return nullptr;
}

const ArchCompat* CompatTable::arch_for_cc(std::string_view cc) const {
  auto v = parse_version(cc);
  if (!v) return nullptr;
  for (const auto& a : archs_)
    for (const auto& c : a.compute_capabilities)
      if (compare_versions(c, v->text) == 0) return &a;
  return nullptr;
}

const CudaDriver* CompatTable::cuda(const Version& v) const {
  std::string series = v.prefix(2);
  for (const auto& c : cuda_)
    if (compare_versions(c.cuda, series) == 0) return &c;
  return nullptr;
}

const CudaDriver* CompatTable::newest_cuda_for_driver(const Version& driver, bool windows) const {
  const CudaDriver* best = nullptr;
  for (const auto& c : cuda_) {
    const auto& min = c.min_driver(windows);
    if (min && must_parse(*min) <= driver) best = &c;  // rows are sorted oldest first
  }
  return best;
}

std::vector<const FrameworkRelease*> CompatTable::releases(Framework f) const {
  std::vector<const FrameworkRelease*> out;
  for (const auto& r : releases_)
    if (r.framework == f) out.push_back(&r);
  return out;
}

const FrameworkRelease* CompatTable::release(Framework f, const Version& v) const {
  for (const auto& r : releases_) {
    if (r.framework != f) continue;
    Version series = must_parse(r.version);
    if (compare(must_parse(v.prefix(series.parts.size())), series) == 0) return &r;
  }
  return nullptr;
}

// --- validating what users type ---------------------------------------------------------------

namespace {
// "the nearest are 12.6 and 12.8" for a version between two releases.
std::string nearest(const std::vector<std::string>& sorted, const Version& v) {
  std::optional<std::string> below, above;
  for (const auto& s : sorted) {
    if (compare(must_parse(s), v) < 0)
      below = s;
    else if (!above)
      above = s;
  }
  if (below && above) return fmt::format("the nearest are {} and {}", *below, *above);
  return fmt::format("the nearest is {}", below ? *below : above.value_or("?"));
}
}  // namespace

Result<Version> parse_cuda_release(const CompatTable& t, std::string_view text) {
  auto v = parse_version(text);
  if (!v) return Result<Version>::fail(fmt::format("expected a CUDA version like 12.4, got {}", util::quote(text)));
  const auto& rows = t.cuda_releases();
  if (rows.empty() || t.cuda(*v)) return v;
  Version series = must_parse(v->prefix(2));
  if (series < must_parse(rows.front().cuda) || series > must_parse(rows.back().cuda)) return v;
  std::vector<std::string> names;
  for (const auto& r : rows) names.push_back(r.cuda);
  return Result<Version>::fail(
      fmt::format("CUDA {} is not a toolkit release in the table; {}", v->text, nearest(names, series)));
}

Result<Version> parse_framework_release(const CompatTable& t, Framework f, std::string_view text) {
  auto v = parse_version(text);
  if (!v)
    return Result<Version>::fail(fmt::format("expected a {} version like {}, got {}", display(f),
                                             f == Framework::jax ? "0.4.12" : "2.0", util::quote(text)));
  auto rels = t.releases(f);
  if (rels.empty() || t.release(f, *v)) return v;
  const Version newest = must_parse(rels.back()->version);
  // Past the next major release there is nothing yet: "PyTorch 99.1" is a typo, not a future build.
  if (!v->parts.empty() && !newest.parts.empty() && v->parts[0] > newest.parts[0] + 1)
    return Result<Version>::fail(fmt::format("{} {} does not exist: the newest release in the table is {}", display(f),
                                             v->text, rels.back()->version));
  if (*v < must_parse(rels.front()->version) || newest < *v) return v;
  std::vector<std::string> names;
  for (const auto* r : rels) names.push_back(r->version);
  return Result<Version>::fail(
      fmt::format("{} {} is not a release in the table; {}", display(f), v->text, nearest(names, *v)));
}

Result<ArchRef> resolve_arch(const CompatTable& t, std::string_view text) {
  std::string q = util::lower(util::trim(text));
  for (const auto& a : t.architectures()) {
    const auto* info = find_architecture(a.id);
    if (q == a.id || (info && util::squash(info->display) == util::squash(q))) return ArchRef{&a, ""};
  }
  // A compute capability: "8.6", "sm_86", "sm86", "86".
  std::string cc = q;
  if (util::starts_with(cc, "sm_"))
    cc = cc.substr(3);
  else if (util::starts_with(cc, "sm"))
    cc = cc.substr(2);
  if (!cc.empty() && cc.find('.') == std::string::npos && cc.size() >= 2 &&
      std::all_of(cc.begin(), cc.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    cc = cc.substr(0, cc.size() - 1) + "." + cc.substr(cc.size() - 1);
  if (const auto* a = t.arch_for_cc(cc)) {
    for (const auto& c : a->compute_capabilities)
      if (compare_versions(c, cc) == 0) return ArchRef{a, c};
  }
  // A number NVIDIA has since changed: name the current one rather than answer for a stale one.
  for (const auto& a : t.architectures())
    for (const auto& [old_cc, new_cc] : a.renumbered_ccs)
      if (parse_version(cc) && compare_versions(old_cc, cc) == 0)
        return Result<ArchRef>::fail(
            fmt::format("NVIDIA renumbered compute capability {} to {}: ask with --arch {}", old_cc, new_cc, new_cc));
  std::vector<std::string> ids;
  for (const auto& a : t.architectures()) ids.push_back(a.id);
  return Result<ArchRef>::fail(fmt::format("unknown architecture {}{} (expected {}, or a compute capability like 8.6)",
                                           util::quote(text), util::did_you_mean(q, ids), util::join(ids, ", ")));
}

// --- the compat questions --------------------------------------------------------------------

Result<CompatReport> evaluate_compat(const CompatTable& t, const CompatQuery& q) {
  using R = Result<CompatReport>;
  CompatReport r;
  r.query = q;
  const std::string who = q.gpu_name.empty() ? q.arch : q.gpu_name;

  if (q.vendor != Vendor::nvidia) {
    // CUDA and the CUDA builds of the frameworks are NVIDIA-only.
    std::string stack = q.vendor == Vendor::amd     ? "ROCm"
                        : q.vendor == Vendor::intel ? "Intel's own software stack"
                                                    : "Metal (MLX, llama.cpp, PyTorch MPS)";
    std::string why = fmt::format(
        "{} is not an NVIDIA GPU: CUDA does not run on it; frameworks reach it through {} "
        "(not covered by this table)",
        who, stack);
    auto add = [&](std::string id, std::string subject) {
      r.checks.push_back({std::move(id), std::move(subject), Answer::no, why, "an NVIDIA GPU"});
    };
    if (q.cuda) add("cuda", "CUDA " + q.cuda->text);
    if (q.framework)
      add("framework",
          std::string(display(*q.framework)) + (q.framework_version ? " " + q.framework_version->text : ""));
    if (q.driver) add("driver", "driver " + q.driver->text);
    if (r.checks.empty()) add("cuda", "CUDA");
    r.answer = Answer::no;
    r.needed.push_back("an NVIDIA GPU");
    return r;
  }

  const ArchCompat* a = t.arch(q.arch);
  if (!a) {
    std::vector<std::string> ids;
    for (const auto& x : t.architectures()) ids.push_back(x.id);
    return R::fail(fmt::format("no compatibility data for architecture {} (known: {})", util::quote(q.arch),
                               util::join(ids, ", ")));
  }
  r.arch = a;
  r.cc = q.cc.empty() ? a->compute_capabilities.front() : q.cc;
  if (std::none_of(a->compute_capabilities.begin(), a->compute_capabilities.end(),
                   [&](const std::string& c) { return compare_versions(c, r.cc) == 0; }))
    return R::fail(fmt::format("compute capability {} is not one of {}'s ({})", util::quote(r.cc), a->id,
                               util::join(a->compute_capabilities, ", ")));
  const std::string label = arch_label(*a, r.cc);
  const std::string sm = sm_name(r.cc);
  r.first_cuda = a->first_cuda_for(r.cc);
  if (r.first_cuda) r.first_cuda_row = t.cuda(must_parse(*r.first_cuda));
  const auto& last = a->last_cuda;
  // Framework builds target the first compute capability of each major (sm_80, sm_100, sm_110, sm_120);
  // that code runs on the later capabilities of the same major (binary compatibility), so the toolkit
  // a build needs is the first one for that capability.
  const std::string base_cc = [&] {
    const Version target = must_parse(r.cc);
    std::string best = r.cc;
    for (const auto& c : a->compute_capabilities) {
      Version v = must_parse(c);
      if (v.parts[0] == target.parts[0] && v < must_parse(best)) best = c;
    }
    return best;
  }();
  const std::string base_cuda = a->first_cuda_for(base_cc).value_or(a->first_cuda);
  const std::string base_sm = sm_name(base_cc);
  // Source fields name the keys they back; "first_cuda_by_cc.10.3" backs one capability only.
  std::set<std::string> used = {"first_cuda", "compute_capabilities", "first_cuda_by_cc." + r.cc};
  bool summary_only = !q.cuda && !q.driver && !q.framework;
  if (summary_only) used.insert("features");

  for (auto fw : kFrameworks) {
    FrameworkSummary s{fw, a->framework_for(fw, r.cc), std::nullopt, ""};
    if (s.support.first)
      if (const auto* rel = t.release(fw, must_parse(*s.support.first))) {
        s.build_cuda = pick_build(*rel, base_cuda, last);
        if (s.build_cuda) s.build_package = rel->package(*s.build_cuda);
      }
    r.frameworks.push_back(s);
    if (summary_only || q.framework == fw) {
      std::string n(name(fw));
      for (const char* k : {"_first", "_runs_from", "_note", "_first_by_cc", "_native"}) used.insert(n + k);
      for (const char* k : {"_first_by_cc.", "_runs_from_by_cc.", "_note_by_cc."}) used.insert(n + k + r.cc);
    }
  }
  add_sources(r.sources, a->sources, &used);
  if (r.first_cuda_row) add_sources(r.sources, r.first_cuda_row->sources);

  // 1. The CUDA toolkit.
  if (q.cuda) {
    Version series = must_parse(q.cuda->prefix(2));
    CompatCheck c{"cuda", "CUDA " + q.cuda->text, Answer::yes, "", ""};
    if (!r.first_cuda) {
      c.answer = Answer::unknown;
      c.detail = fmt::format("the first CUDA toolkit for compute capability {} is not in gpuadvisor's data", r.cc);
    } else if (series < must_parse(*r.first_cuda)) {
      c.answer = Answer::no;
      c.detail = fmt::format("CUDA {} cannot build native code for {}: the first toolkit that can is {}", q.cuda->text,
                             label, *r.first_cuda);
      c.needed = fmt::format("CUDA {} or newer", *r.first_cuda);
      // Code for an older capability of the same major runs on this one (binary compatibility).
      if (auto older = compatible_cc(t, r.cc, series)) {
        c.answer = Answer::limited;
        c.detail = fmt::format(
            "CUDA {} cannot build native {} code (the first toolkit that can is {}), but the {} code it "
            "builds runs on {} (binary compatibility within compute capability {}.x)",
            q.cuda->text, sm, *r.first_cuda, sm_name(*older), sm, must_parse(r.cc).parts[0]);
        c.needed = fmt::format("CUDA {} or newer for native {} code", *r.first_cuda, sm);
        add_sources(r.sources, {kBinaryCompatibility});
      }
    } else if (last && series > must_parse(*last)) {
      c.answer = Answer::no;
      c.detail =
          fmt::format("CUDA {} dropped {}: the last toolkit that builds for it is {}", q.cuda->text, label, *last);
      c.needed = fmt::format("CUDA {} or older", *last);
    } else {
      c.detail = fmt::format("CUDA {} builds native {} code (first toolkit: {}{})", q.cuda->text, sm, *r.first_cuda,
                             last ? ", last: " + *last : "");
    }
    if (const auto* row = t.cuda(*q.cuda)) add_sources(r.sources, row->sources);
    r.checks.push_back(c);
  }

  // 2. The framework release.
  std::optional<std::string> framework_build;
  if (q.framework) {
    Framework fw = *q.framework;
    const std::string disp(display(fw));
    const FrameworkSupport s = a->framework_for(fw, r.cc);
    const FrameworkSummary& sum = r.frameworks[idx(fw)];
    // " (its CUDA 12.9 build, jax-cuda12-plugin)"
    const std::string first_build = sum.build_cuda
                                        ? fmt::format(" (its CUDA {} build{})", *sum.build_cuda,
                                                      sum.build_package.empty() ? "" : ", " + sum.build_package)
                                        : "";
    auto first_text = [&] { return fmt::format("{} {} or newer{}", disp, *s.first, first_build); };
    CompatCheck c{"framework", disp, Answer::yes, "", ""};
    const FrameworkRelease* rel = q.framework_version ? t.release(fw, *q.framework_version) : nullptr;
    if (rel) add_sources(r.sources, rel->sources);
    if (!q.framework_version) {
      if (s.first) {
        c.detail = fmt::format("the first release with prebuilt {} support is {}{}", label, *s.first, first_build);
      } else if (s.runs_from) {
        c.detail = fmt::format("it runs from {} on. {}", *s.runs_from, s.note);
      } else {
        c.answer = Answer::unknown;
        c.detail = s.note.empty() ? fmt::format("the first {} release for {} is not in gpuadvisor's data", disp, label)
                                  : s.note;
      }
    } else {
      const Version& v = *q.framework_version;
      c.subject = disp + " " + v.text;
      if (s.first) {
        if (v < must_parse(*s.first)) {
          c.answer = Answer::no;
          c.detail = fmt::format("{} {} has no prebuilt {} support: the first release with it is {}", disp, v.text,
                                 label, *s.first);
          if (rel)
            c.detail += fmt::format("; {} builds use CUDA {}, and {} code needs CUDA {} or newer", v.text,
                                    util::join_list(rel->cuda, "and"), base_sm, base_cuda);
          c.needed = first_text();
        } else if (rel) {
          auto build = pick_build(*rel, base_cuda, last);
          // With --cuda, the build for that toolkit when it has one that carries the code.
          if (build && q.cuda) {
            const std::string series = q.cuda->prefix(2);
            for (const auto& b : rel->cuda)
              if (compare_versions(b, series) == 0 && compare_versions(b, base_cuda) >= 0 &&
                  (!last || compare_versions(b, *last) <= 0))
                build = b;
          }
          if (!build) {
            c.answer = Answer::no;
            c.detail = fmt::format("{} {} builds use CUDA {}; none can carry {} code (it needs CUDA {} or newer{})",
                                   disp, v.text, util::join_list(rel->cuda, "and"), base_sm, base_cuda,
                                   last ? " and " + *last + " or older" : "");
            c.needed = fmt::format("a {} build with CUDA {} or newer", disp, base_cuda);
          } else {
            framework_build = build;
            std::vector<std::string> older;
            for (const auto& b : rel->cuda)
              if (compare_versions(b, base_cuda) < 0) older.push_back(b);
            const std::string pkg = rel->package(*build);
            c.detail = fmt::format("{} {} has prebuilt {} support in its CUDA {} build{}{}", disp, v.text, label,
                                   *build, pkg.empty() ? "" : " (" + pkg + ")",
                                   older.empty()
                                       ? ""
                                       : fmt::format(" (its CUDA {} build{} no {} code)", util::join_list(older, "and"),
                                                     older.size() > 1 ? "s have" : " has", base_sm));
          }
        } else {
          c.detail = fmt::format("{} {} is not older than {}, the first release with prebuilt {} support{}", disp,
                                 v.text, *s.first, label, rel ? "" : "; its builds are not in the table");
        }
      } else if (s.runs_from) {
        if (v < must_parse(*s.runs_from)) {
          c.answer = Answer::no;
          c.detail = fmt::format("the first {} release that runs on {} is {}: {}", disp, label, *s.runs_from, s.note);
          c.needed = fmt::format("{} {} or newer", disp, *s.runs_from);
        } else {
          c.detail = s.note.empty() ? fmt::format("{} runs on {} from {} on", disp, label, *s.runs_from) : s.note;
        }
      } else {
        c.answer = Answer::unknown;
        c.detail = s.note.empty() ? fmt::format("the first {} release for {} is not in gpuadvisor's data", disp, label)
                                  : s.note;
      }
    }
    r.checks.push_back(c);
    // The installed toolkit against the framework's builds.
    if (q.cuda && rel && c.answer == Answer::yes) {
      std::string series = q.cuda->prefix(2);
      bool has = std::any_of(rel->cuda.begin(), rel->cuda.end(),
                             [&](const std::string& b) { return compare_versions(b, series) == 0; });
      if (!has)
        r.checks.push_back({"framework-cuda",
                            fmt::format("{} {} with CUDA {}", disp, q.framework_version->text, q.cuda->text),
                            Answer::limited,
                            fmt::format("{} {} has official builds for CUDA {} only", disp, rel->version,
                                        util::join_list(rel->cuda, "and")),
                            fmt::format("one of those builds, or {} built from source against CUDA {}", disp, series)});
    }
  }

  // 3. The driver, for the toolkit asked about, the framework's build, or the architecture's first toolkit.
  if (q.driver) {
    const Version& d = *q.driver;
    const std::string os = q.windows ? "Windows" : "Linux";
    // The toolkit asked about (or the framework's build), but never older than the architecture's
    // first toolkit: a driver older than that toolkit's predates the architecture.
    std::optional<std::string> target;
    bool arch_mode = false;
    if (q.cuda)
      target = q.cuda->prefix(2);
    else if (framework_build)
      target = framework_build;
    if (!target || (r.first_cuda && compare_versions(*target, *r.first_cuda) < 0)) {
      target = r.first_cuda;
      arch_mode = true;
    }
    CompatCheck c{"driver", "driver " + d.text, Answer::yes, "", ""};
    const CudaDriver* newest = t.newest_cuda_for_driver(d, q.windows);
    std::string up_to = newest ? fmt::format("; with full support it runs toolkits up to CUDA {}", newest->cuda) : "";
    if (!target) {
      c.answer = Answer::unknown;
      c.detail =
          fmt::format("the first CUDA toolkit for compute capability {} is not in gpuadvisor's data{}", r.cc, up_to);
    } else {
      c.subject =
          fmt::format("driver {} for CUDA {}{}", d.text, *target, arch_mode ? fmt::format(" ({} code)", sm) : "");
      const CudaDriver* row = t.cuda(must_parse(*target));
      if (row) add_sources(r.sources, row->sources);
      if (!row || !row->min_driver(q.windows)) {
        c.answer = Answer::unknown;
        c.detail = fmt::format("the {} driver for CUDA {} is not in the table{}", os, *target, up_to);
      } else {
        Version min = must_parse(*row->min_driver(q.windows));
        const auto& minor = row->minor_compat(q.windows);
        // From CUDA 13.4 Table 3 gives no build (the Linux driver is no longer bundled): the table
        // holds the branch the release notes name, "615", shown as "branch 615".
        const bool branch = min.parts.size() == 1;
        const std::string min_text = branch ? "branch " + min.text : min.text;
        const std::string where = branch ? "release notes" : "Table 3";
        if (d >= min) {
          c.detail = fmt::format("{} is at least {}, the {} driver of CUDA {} ({}){}", d.text, min_text, os, row->cuda,
                                 where, up_to);
        } else if (!arch_mode && minor && d >= must_parse(*minor)) {
          c.answer = Answer::limited;
          c.detail = fmt::format(
              "{} is older than {} (CUDA {}, {}) but runs CUDA {}.x applications under minor version "
              "compatibility (>= {}): PTX that needs the newer driver cannot be JIT-compiled{}",
              d.text, min_text, row->cuda, where, must_parse(row->cuda).parts[0], *minor, up_to);
          c.needed = fmt::format("driver {} or newer for full CUDA {} support", min_text, row->cuda);
        } else {
          c.answer = Answer::no;
          c.detail =
              arch_mode ? fmt::format("{} is older than {}, the {} driver of CUDA {}, the first toolkit with {} code{}",
                                      d.text, min_text, os, row->cuda, label, up_to)
                        : fmt::format("{} is older than {}, the {} driver CUDA {} needs ({}){}", d.text, min_text, os,
                                      row->cuda, where, up_to);
          c.needed = fmt::format("driver {} or newer", min_text);
        }
      }
    }
    r.checks.push_back(c);
  }

  // The overall answer: any no, else any unknown, else any limited, else yes.
  auto has = [&](Answer x) {
    return std::any_of(r.checks.begin(), r.checks.end(), [&](const CompatCheck& c) { return c.answer == x; });
  };
  r.answer = has(Answer::no)        ? Answer::no
             : has(Answer::unknown) ? Answer::unknown
             : has(Answer::limited) ? Answer::limited
                                    : Answer::yes;
  for (const auto& c : r.checks)
    if (!c.needed.empty() && std::find(r.needed.begin(), r.needed.end(), c.needed) == r.needed.end())
      r.needed.push_back(c.needed);
  return r;
}

// --- Xid codes -------------------------------------------------------------------------------

std::string_view name(XidSeverity s) { return kSeverityNames[static_cast<std::size_t>(s)]; }

namespace {
XidSeverity severity_field(const util::Fields& f) {
  std::string sev = f.str("severity");
  for (std::size_t k = 0; k < std::size(kSeverityNames); ++k)
    if (kSeverityNames[k] == sev) return static_cast<XidSeverity>(k);
  std::vector<std::string> names(std::begin(kSeverityNames), std::end(kSeverityNames));
  f.fail("severity", fmt::format("expected one of {}, got {}{}", util::join(names, ", "), util::quote(sev),
                                 util::did_you_mean(sev, names)));
}
}  // namespace

const XidTable& XidTable::embedded() {
  static const XidTable t = load_embedded<XidTable>("xid.json");
  return t;
}

XidTable XidTable::parse(const util::JsonDoc& doc) {
  util::Fields top(doc, doc.root(), "", "");
  const auto& arr = array_field(top, "xids", "Xid records");
  XidTable t;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const auto& j = arr[i];
    std::string label = j.is_object() && j.contains("code") && j["code"].is_number() ? "Xid " + j["code"].dump() : "";
    util::Fields f(doc, j, "/xids/" + std::to_string(i), label);
    XidInfo x;
    x.code = static_cast<int>(f.integer("code", 1, 100000));
    x.name = f.str("name");
    x.mnemonic = f.opt_str("mnemonic").value_or("");
    x.meaning = f.str("meaning");
    x.causes = strings(f, "causes", false);
    x.actions = strings(f, "actions", false);
    x.severity = severity_field(f);
    x.category = f.opt_str("category").value_or("");
    x.immediate_action = f.opt_str("nvidia_immediate_action").value_or("");
    x.investigatory_action = f.opt_str("nvidia_investigatory_action").value_or("");
    x.notes = f.opt_str("notes").value_or("");
    if (f.has("message_severity")) {
      const auto& ms = f.raw("message_severity");
      if (!ms.is_array()) f.fail("message_severity", "expected an array of {contains, severity, label}");
      for (std::size_t k = 0; k < ms.size(); ++k) {
        util::Fields m(doc, ms[k], f.pointer("message_severity") + "/" + std::to_string(k), label);
        XidMessageSeverity r;
        r.contains = m.str("contains");
        if (r.contains.empty()) m.fail("contains", "must not be empty");
        r.after = m.opt_str("after").value_or("");
        r.severity = severity_field(m);
        r.label = m.str("label");
        x.message_severity.push_back(std::move(r));
      }
    }
    x.sources = read_sources(f);
    x.as_of = f.opt_str("as_of").value_or("");
    for (const auto& y : t.xids_)
      if (y.code == x.code) f.fail("code", fmt::format("Xid {} is listed twice", x.code));
    t.xids_.push_back(std::move(x));
  }
  std::stable_sort(t.xids_.begin(), t.xids_.end(), [](const XidInfo& a, const XidInfo& b) { return a.code < b.code; });
  t.by_code_.assign(static_cast<std::size_t>(t.xids_.empty() ? 0 : t.xids_.back().code + 1), nullptr);
  for (const auto& x : t.xids_) t.by_code_[static_cast<std::size_t>(x.code)] = &x;
  if (top.has("log_messages")) {
    const auto& ms = top.raw("log_messages");
    if (!ms.is_array()) top.fail("log_messages", "expected an array of messages");
    for (std::size_t i = 0; i < ms.size(); ++i) {
      util::Fields f(doc, ms[i], "/log_messages/" + std::to_string(i), "");
      LogMessage m;
      m.id = f.str("id");
      m.contains = f.str("contains");
      if (m.contains.empty()) f.fail("contains", "must not be empty");
      m.name = f.str("name");
      m.meaning = f.str("meaning");
      m.severity = severity_field(f);
      if (auto c = f.opt_integer("same_as_xid", 1, 100000)) m.same_as_xid = static_cast<int>(*c);
      m.sources = read_sources(f);
      m.as_of = f.opt_str("as_of").value_or("");
      t.messages_.push_back(std::move(m));
    }
  }
  return t;
}

const XidInfo* XidTable::find(int code) const {
  if (code < 0 || static_cast<std::size_t>(code) >= by_code_.size()) return nullptr;
  return by_code_[static_cast<std::size_t>(code)];
}

// --- error texts -----------------------------------------------------------------------------

const ErrorTable& ErrorTable::embedded() {
  static const ErrorTable t = load_embedded<ErrorTable>("errors.json");
  return t;
}

ErrorTable ErrorTable::parse(const util::JsonDoc& doc) {
  util::Fields top(doc, doc.root(), "", "");
  const auto& arr = array_field(top, "errors", "error records");
  ErrorTable t;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const auto& j = arr[i];
    std::string label =
        j.is_object() && j.contains("id") && j["id"].is_string() ? "error '" + j["id"].get<std::string>() + "'" : "";
    util::Fields f(doc, j, "/errors/" + std::to_string(i), label);
    ErrorPattern e;
    e.id = f.str("id");
    e.patterns = strings(f, "patterns", true);
    if (e.patterns.empty()) f.fail("patterns", "must not be empty");
    for (const auto& p : e.patterns)
      if (util::trim(p).empty()) f.fail("patterns", "must not contain an empty pattern");
    e.component = f.opt_str("component").value_or("");
    e.meaning = f.str("meaning");
    e.causes = strings(f, "causes", false);
    e.actions = strings(f, "actions", false);
    e.notes = f.opt_str("notes").value_or("");
    e.sources = read_sources(f);
    e.as_of = f.opt_str("as_of").value_or("");
    if (t.find(e.id)) f.fail("id", fmt::format("{} is listed twice", util::quote(e.id)));
    t.errors_.push_back(std::move(e));
  }
  return t;
}

const ErrorPattern* ErrorTable::find(std::string_view id) const {
  for (const auto& e : errors_)
    if (e.id == id) return &e;
  return nullptr;
}

std::vector<const ErrorPattern*> ErrorTable::match(std::string_view text) const {
  const std::string t = normalise(text);
  std::vector<std::pair<std::size_t, const ErrorPattern*>> scored;
  if (t.empty()) return {};
  for (const auto& e : errors_) {
    std::size_t score = 0;
    if (normalise(e.id) == t) score = 100000;
    for (const auto& p : e.patterns) {
      std::string np = normalise(p);
      if (t.find(np) != std::string::npos)
        score = std::max(score, np.size() * 2);
      else if (t.size() >= 6 && np.find(t) != std::string::npos)
        score = std::max(score, t.size());
    }
    if (score) scored.emplace_back(score, &e);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<const ErrorPattern*> out;
  for (const auto& [s, e] : scored) out.push_back(e);
  return out;
}

std::vector<std::string> ErrorTable::names() const {
  std::vector<std::string> out;
  for (const auto& e : errors_) {
    out.push_back(e.id);
    out.insert(out.end(), e.patterns.begin(), e.patterns.end());
  }
  return out;
}

}  // namespace gpuadvisor::catalog
