// The JSON output contract (docs/json-output.md): every command's --format json output validates
// against its schema under data/schema/, and survives a parse -> dump -> parse round trip.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_fixture.h"
#include "gpuadvisor/util/json.h"

using namespace gpuadvisor;
using util::Json;

namespace {

// A small JSON Schema (draft 2020-12) validator: the keywords our schemas use, no more.
// Supported: type (a name or an array of names; "integer" is a number without a fractional part,
// as the draft says), required, properties, additionalProperties (false or a schema), items,
// minItems, enum, const, minimum, and $ref to "#/$defs/<name>" in the same document.
// Annotations ($schema, $id, title, description, default, $defs) are ignored.
class SchemaValidator {
 public:
  explicit SchemaValidator(const Json& root) : root_(root) {}

  /// Errors as "<json pointer>: <what>"; empty when the value is valid.
  std::vector<std::string> validate(const Json& value) {
    errors_.clear();
    check(root_, value, "");
    return errors_;
  }

  /// Keywords that appear in the schema but that this validator does not implement (which would
  /// otherwise be skipped silently).
  static std::vector<std::string> unsupported_keywords(const Json& schema, const std::string& path = "") {
    static const std::set<std::string> known = {"type",        "required", "properties", "additionalProperties",
                                                "items",       "minItems", "enum",       "const",
                                                "minimum",     "$ref",     "if",         "then",
                                                "else",        "$schema",  "$id",        "title",
                                                "description", "default",  "$defs"};
    std::vector<std::string> out;
    if (!schema.is_object()) return out;
    for (const auto& [key, sub] : schema.items()) {
      if (!known.count(key)) out.push_back(path + "/" + key);
      auto walk = [&](const Json& s, const std::string& p) {
        auto more = unsupported_keywords(s, p);
        out.insert(out.end(), more.begin(), more.end());
      };
      if (key == "properties" || key == "$defs")
        for (const auto& [name, s] : sub.items()) walk(s, path + "/" + key + "/" + name);
      if (key == "items" || key == "if" || key == "then" || key == "else" ||
          (key == "additionalProperties" && sub.is_object()))
        walk(sub, path + "/" + key);
    }
    return out;
  }

 private:
  const Json& root_;
  std::vector<std::string> errors_;

  void fail(const std::string& path, const std::string& what) {
    errors_.push_back((path.empty() ? "/" : path) + ": " + what);
  }

  static bool is_type(const Json& v, const std::string& t) {
    if (t == "null") return v.is_null();
    if (t == "boolean") return v.is_boolean();
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "number") return v.is_number();
    if (t == "integer") {
      if (v.is_number_integer()) return true;
      if (!v.is_number_float()) return false;
      const double d = v.get<double>();
      return std::isfinite(d) && std::trunc(d) == d;
    }
    return false;
  }

  // JSON equality for enum/const: numbers compare by value (1 == 1.0), as the draft says.
  static bool equal(const Json& a, const Json& b) {
    if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
    return a == b;
  }

  const Json& resolve(const std::string& ref) {
    const std::string prefix = "#/$defs/";
    if (ref.rfind(prefix, 0) != 0) throw std::runtime_error("unsupported $ref " + ref);
    return root_.at("$defs").at(ref.substr(prefix.size()));
  }

  void check(const Json& s, const Json& v, const std::string& path) {
    if (s.contains("$ref")) check(resolve(s["$ref"].get<std::string>()), v, path);
    if (s.contains("type")) {
      const Json& t = s["type"];
      bool ok = false;
      if (t.is_string())
        ok = is_type(v, t.get<std::string>());
      else
        for (const auto& x : t) ok = ok || is_type(v, x.get<std::string>());
      if (!ok) {
        fail(path, "expected type " + t.dump() + ", got " + v.dump().substr(0, 80));
        return;
      }
    }
    if (s.contains("const") && !equal(s["const"], v)) fail(path, "expected " + s["const"].dump() + ", got " + v.dump());
    if (s.contains("enum")) {
      bool found = false;
      for (const auto& x : s["enum"]) found = found || equal(x, v);
      if (!found) fail(path, "expected one of " + s["enum"].dump() + ", got " + v.dump());
    }
    if (s.contains("minimum") && v.is_number() && v.get<double>() < s["minimum"].get<double>())
      fail(path, "below the minimum " + s["minimum"].dump() + ": " + v.dump());
    if (s.contains("if")) {  // then when the value validates against if, else otherwise
      const auto before = errors_.size();
      check(s["if"], v, path);
      const bool matched = errors_.size() == before;
      errors_.resize(before);
      if (matched && s.contains("then")) check(s["then"], v, path);
      if (!matched && s.contains("else")) check(s["else"], v, path);
    }
    if (v.is_object()) {
      if (s.contains("required"))
        for (const auto& k : s["required"])
          if (!v.contains(k.get<std::string>())) fail(path, "missing required key '" + k.get<std::string>() + "'");
      const Json empty = Json::object();
      const Json& props = s.contains("properties") ? s["properties"] : empty;
      for (const auto& [key, val] : v.items()) {
        if (props.contains(key))
          check(props[key], val, path + "/" + key);
        else if (s.contains("additionalProperties")) {
          const Json& ap = s["additionalProperties"];
          if (ap.is_boolean() && !ap.get<bool>())
            fail(path, "unexpected key '" + key + "'");
          else if (ap.is_object())
            check(ap, val, path + "/" + key);
        }
      }
    }
    if (v.is_array()) {
      if (s.contains("minItems") && v.size() < s["minItems"].get<std::size_t>())
        fail(path, "expected at least " + s["minItems"].dump() + " items, got " + std::to_string(v.size()));
      if (s.contains("items"))
        for (std::size_t i = 0; i < v.size(); ++i) check(s["items"], v[i], path + "/" + std::to_string(i));
    }
  }
};

Json load_schema(const std::string& name) {
  std::ifstream in(test::source_path("data/schema/" + name + ".schema.json"));
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str());
}

std::string join_errors(const std::vector<std::string>& errors) {
  std::string s;
  for (std::size_t i = 0; i < errors.size() && i < 10; ++i) s += errors[i] + "\n";
  return s;
}

// The schemas this test owns (one per command with --format json; check, compat, diagnose and
// inspect have their own).
const std::vector<std::string> kSchemas = {
    "recommend",    "memory",       "estimate",         "cost",        "compare",     "fit",
    "catalog-list", "catalog-show", "catalog-validate", "models-list", "models-show", "rules-list",
    "rules-show",   "compat",       "diagnose",         "inspect",     "check",       "calibrate"};

struct Case {
  std::string schema;
  std::vector<std::string> args;  // without --format json
  int exit;
};

// Representative invocations: each output shape (training, inference, vision; fits or not;
// with and without --gpu, a workload, --pareto, --explain).
const std::vector<Case> kCases = {
    {"compat", {"compat", "--gpu", "b200"}, 0},
    {"compat", {"compat", "--gpu", "h100-sxm", "--framework", "pytorch"}, 0},
    {"compat", {"compat", "--gpu", "h100-sxm", "--driver", "535.104"}, 0},
    {"compat", {"compat", "--gpu", "mi300x"}, 1},
    {"compat", {"compat", "--gpu", "rtx-4090", "--framework", "jax"}, 0},
    {"diagnose", {"diagnose", "79"}, 0},
    {"diagnose", {"diagnose", "CUDA error: out of memory"}, 0},
    {"diagnose", {"diagnose", "--log", test::source_path("tests/fixtures/logs/dmesg-xid.log")}, 1},
    {"diagnose", {"diagnose", "--log", test::source_path("tests/fixtures/logs/syslog-no-xid.log")}, 0},
    {"diagnose", {"diagnose", "--list"}, 0},
    {"calibrate",
     {"calibrate", test::source_path("tests/fixtures/calibrate/llama-bench-rtx3090-llama3-b2824.md"), "--model",
      "llama-3.1-8b", "-o", "/tmp/gpuadvisor-schema-calibration.json"},
     0},
    {"calibrate",
     {"calibrate", test::source_path("tests/fixtures/calibrate/nemo-16xh100-llama2-7b-gbs2048.log"), "--model",
      "llama-2-7b", "--gpu", "h100-sxm", "--gpus", "16", "--seq-len", "4096", "-o",
      "/tmp/gpuadvisor-schema-calibration-train.json"},
     0},
    {"inspect", {"inspect", "--from", test::source_path("docs/examples/nvidia-smi-a100.csv")}, 0},
    {"inspect", {"inspect", "--from", test::source_path("tests/fixtures/inspect/h100-ecc.csv")}, 1},
    {"inspect", {"inspect", "--from", test::source_path("tests/fixtures/inspect/a100-mig.csv")}, 0},
    {"recommend", {"recommend", "--model", "10B", "--budget", "3000"}, 0},
    {"recommend", {"recommend", "--model", "10B", "--budget", "3000", "--pareto", "--explain"}, 0},
    {"recommend", {"recommend", "--model", "llama-3.1-70b", "--task", "train", "--budget", "3000"}, 1},
    {"recommend", {"recommend", "--model", "llama-3.1-70b", "--task", "qlora", "--budget", "50000"}, 0},
    {"recommend", {"recommend", "--model", "yolov8s", "--scenario", "edge", "--power-limit", "30W"}, 0},
    {"recommend",
     {"recommend", "--model", "gpt2", "--task", "train", "--tokens", "10B", "--max-gpus", "4", "--used"},
     0},
    {"recommend",
     {"recommend", "--model", "llama-3.1-70b", "--task", "qlora", "--cloud", "--budget", "5/h", "--pareto"},
     0},
    {"recommend",
     {"recommend", "--model", "llama-3.1-8b", "--task", "train", "--tokens", "20B", "--cloud", "--budget", "500"},
     1},
    {"memory", {"memory", "--model", "llama-3.1-8b", "--task", "qlora"}, 0},
    {"memory", {"memory", "--model", "10B", "--precision", "fp16", "--gpu", "rtx-4090"}, 1},
    {"memory", {"memory", "--model", "10B", "--precision", "int8", "--gpu", "rtx-4090"}, 0},
    {"memory",
     {"memory", "--model", "llama-3.1-70b", "--task", "train", "--gpus", "64", "--zero", "3", "--gpu", "h100-sxm"},
     0},
    {"memory", {"memory", "--model", "yolov8s", "--gpu", "jetson-orin-nano-8gb", "--batch", "8"}, 0},
    {"memory", {"memory", "--model", "t5-3b", "--task", "lora"}, 0},
    {"estimate", {"estimate", "--model", "llama-3.1-8b", "--precision", "fp16", "--gpu", "rtx-4090"}, 0},
    {"estimate",
     {"estimate", "--model", "gpt-3-175b", "--task", "train", "--tokens", "300B", "--gpu", "a100-80gb-sxm", "--gpus",
      "8"},
     1},
    {"estimate", {"estimate", "--model", "yolov8s", "--gpu", "jetson-agx-orin-64gb", "--batch", "8"}, 0},
    {"cost",
     {"cost", "--model", "gpt-3-175b", "--task", "train", "--tokens", "300B", "--gpu", "a100-80gb-sxm", "--gpus", "8"},
     1},
    {"cost",
     {"cost", "--model", "gpt-3-175b", "--task", "train", "--tokens", "300B", "--gpu", "a100-80gb-sxm", "--gpus",
      "1024"},
     0},
    {"cost", {"cost", "--model", "llama-3.1-8b", "--gpu", "jetson-agx-orin-64gb"}, 0},
    {"cost",
     {"cost", "--model", "llama-3.1-70b", "--precision", "int4", "--gpu", "a100-80gb-sxm", "--hours", "720"},
     0},
    {"compare", {"compare", "a100-80gb-sxm", "h100-sxm", "rtx-4090"}, 0},
    {"compare", {"compare", "a100-80gb-sxm", "h100-sxm", "rtx-4090", "--model", "llama-3.1-8b"}, 0},
    {"compare", {"compare", "a100-80gb-sxm", "h100-sxm", "--model", "llama-3.1-8b", "--precision", "fp8"}, 0},
    {"compare",
     {"compare", "h100-sxm", "mi300x", "--model", "llama-3.1-70b", "--task", "train", "--tokens", "1T", "--gpus", "64"},
     0},
    {"fit", {"fit", "--gpu", "rtx-4090"}, 0},
    {"fit", {"fit", "--gpu", "a100-80gb-sxm", "--gpus", "8", "--kind", "decoder"}, 0},
    {"catalog-list", {"catalog", "list"}, 0},
    {"catalog-list", {"catalog", "list", "--vendor", "amd"}, 0},
    {"catalog-show", {"catalog", "show", "4090"}, 0},
    {"catalog-show", {"catalog", "show", "mi300x"}, 0},
    {"catalog-validate", {"catalog", "validate"}, 0},
    {"catalog-validate", {"catalog", "validate", test::source_path("tests/fixtures/catalog/wrong-bandwidth.json")}, 1},
    {"rules-show", {"rules", "show", "memory-fit"}, 0},
    {"rules-show", {"rules", "show", "budget"}, 0},
    {"rules-show", {"rules", "show", "power-psu-headroom"}, 0},
    {"models-list", {"models", "list"}, 0},
    {"models-show", {"models", "show", "llama-3.1-8b"}, 0},
    {"models-show", {"models", "show", "10B"}, 0},
    {"models-show", {"models", "show", "mixtral-8x7b"}, 0},
    {"models-show", {"models", "show", "yolov8s"}, 0},
    {"rules-list", {"rules", "list"}, 0},
    {"check", {"check", test::source_path("docs/examples/h100-training-server.json")}, 0},
    {"check", {"check", test::source_path("docs/examples/h100-psu-undersized.json")}, 1},
};

}  // namespace

TEST_CASE("schema validator: catches what it should", "[schema]") {
  const Json schema = Json::parse(R"({
    "type": "object",
    "required": ["n", "kind"],
    "properties": {
      "n": {"type": "integer", "minimum": 1},
      "kind": {"enum": ["a", "b"]},
      "v": {"const": 1},
      "maybe": {"type": ["number", "null"]},
      "list": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/item"}}
    },
    "$defs": {"item": {"type": "object", "required": ["x"], "additionalProperties": false, "properties": {"x": {"type": "string"}}}}
  })");
  SchemaValidator v(schema);
  auto errors = [&](const char* text) { return v.validate(Json::parse(text)); };
  CHECK(errors(R"({"n": 2, "kind": "a", "v": 1, "maybe": null, "list": [{"x": "y"}]})").empty());
  CHECK(errors(R"({"n": 2.0, "kind": "b", "maybe": 0.5})").empty());  // 2.0 is an integer
  CHECK(errors(R"({"n": 2.5, "kind": "a"})").size() == 1);
  CHECK(errors(R"({"n": 0, "kind": "a"})").size() == 1);
  CHECK(errors(R"({"kind": "a"})") == std::vector<std::string>{"/: missing required key 'n'"});
  CHECK(errors(R"({"n": 1, "kind": "c"})").size() == 1);
  CHECK(errors(R"({"n": 1, "kind": "a", "v": 2})").size() == 1);
  CHECK(errors(R"({"n": 1, "kind": "a", "maybe": "x"})").size() == 1);
  CHECK(errors(R"({"n": 1, "kind": "a", "list": []})").size() == 1);
  CHECK(errors(R"({"n": 1, "kind": "a", "list": [{"x": 1}]})") ==
        std::vector<std::string>{"/list/0/x: expected type \"string\", got 1"});
  CHECK(errors(R"({"n": 1, "kind": "a", "list": [{"x": "y", "z": 1}]})") ==
        std::vector<std::string>{"/list/0: unexpected key 'z'"});
  CHECK(errors("[]").size() == 1);
  CHECK(SchemaValidator::unsupported_keywords(schema).empty());
  const Json cond = Json::parse(
      R"({"if": {"properties": {"ok": {"const": true}}}, "then": {"required": ["a"]}, "else": {"required": ["b"]}})");
  SchemaValidator c(cond);
  CHECK(c.validate(Json::parse(R"({"ok": true, "a": 1})")).empty());
  CHECK(c.validate(Json::parse(R"({"ok": true, "b": 1})")).size() == 1);
  CHECK(c.validate(Json::parse(R"({"ok": false, "b": 1})")).empty());
  CHECK(c.validate(Json::parse(R"({"ok": false, "a": 1})")).size() == 1);
  CHECK(SchemaValidator::unsupported_keywords(Json::parse(R"({"properties": {"a": {"oneOf": []}}})")) ==
        std::vector<std::string>{"/properties/a/oneOf"});
}

TEST_CASE("schemas: one per command, draft 2020-12, only keywords the tests check", "[schema]") {
  for (const auto& name : kSchemas) {
    DYNAMIC_SECTION(name) {
      const Json s = load_schema(name);
      CHECK(s["$schema"] == "https://json-schema.org/draft/2020-12/schema");
      CHECK(s["$id"].get<std::string>().find("/data/schema/" + name + ".schema.json") != std::string::npos);
      CHECK(s["type"] == "object");
      for (const char* key : {"schema_version", "gpuadvisor_version", "command"})
        CHECK(std::find(s["required"].begin(), s["required"].end(), Json(key)) != s["required"].end());
      CHECK(s["properties"]["schema_version"]["const"] == 1);
      // "catalog-list" is the schema of "catalog list".
      std::string command = name;
      std::replace(command.begin(), command.end(), '-', ' ');
      CHECK(s["properties"]["command"]["const"] == command);
      CHECK(SchemaValidator::unsupported_keywords(s).empty());
    }
  }
}

TEST_CASE("schemas: every command's JSON output validates and round-trips", "[schema]") {
  std::set<std::string> covered;
  for (const auto& c : kCases) {
    std::string label;
    for (const auto& a : c.args) label += (label.empty() ? "" : " ") + a;
    DYNAMIC_SECTION(label) {
      auto args = c.args;
      args.insert(args.end(), {"--format", "json"});
      auto r = test::run_cli(args);
      INFO("stderr: " << r.err);
      CHECK(r.code == c.exit);
      REQUIRE_FALSE(r.out.empty());
      const Json doc = Json::parse(r.out);
      const Json s = load_schema(c.schema);
      SchemaValidator v(s);
      const auto errors = v.validate(doc);
      INFO(join_errors(errors));
      CHECK(errors.empty());
      // Round trip: what a script parses and writes back reads the same.
      const Json again = Json::parse(doc.dump());
      CHECK(again == doc);
      CHECK(Json::parse(doc.dump(2)) == doc);
    }
    covered.insert(c.schema);
  }
  CHECK(covered == std::set<std::string>(kSchemas.begin(), kSchemas.end()));
}

namespace {

std::vector<std::string> help_lines(std::vector<std::string> path) {
  path.push_back("--help");
  auto r = test::run_cli(path);
  REQUIRE(r.code == 0);
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Every command path below `path` (depth first), read from --help's "Subcommands:" lists.
void command_paths(const std::vector<std::string>& path, std::vector<std::vector<std::string>>& out) {
  out.push_back(path);
  bool in_subcommands = false;
  for (const auto& line : help_lines(path)) {
    if (line == "Subcommands:") {
      in_subcommands = true;
      continue;
    }
    if (line.empty() || line[0] != ' ') in_subcommands = false;
    if (!in_subcommands) continue;
    std::istringstream w(line);
    std::string name;
    w >> name;
    auto sub = path;
    sub.push_back(name);
    command_paths(sub, out);
  }
}

// The formats a command declares, as its --help lists them ("Output format: table, json or csv
// (table by default)"); empty when it has no --format.
std::vector<std::string> declared_formats(const std::vector<std::string>& path) {
  for (const auto& line : help_lines(path)) {
    const auto at = line.find("Output format: ");
    if (line.find("--format") == std::string::npos || at == std::string::npos) continue;
    std::string list = line.substr(at + 15);
    list = list.substr(0, list.find(" ("));
    for (auto o = list.find(" or "); o != std::string::npos; o = list.find(" or ")) list.replace(o, 4, ", ");
    std::vector<std::string> out;
    std::stringstream ss(list);
    for (std::string f; std::getline(ss, f, ',');) {
      f.erase(0, f.find_first_not_of(' '));
      out.push_back(f);
    }
    return out;
  }
  return {};
}

// The first string under one of `keys` (in that order of preference), depth first.
std::string first_string(const Json& j, const std::vector<std::string>& keys) {
  for (const auto& key : keys) {
    std::vector<const Json*> todo = {&j};
    while (!todo.empty()) {
      const Json* x = todo.front();
      todo.erase(todo.begin());
      if (x->is_object()) {
        if (x->contains(key) && (*x)[key].is_string() && !(*x)[key].get<std::string>().empty())
          return (*x)[key].get<std::string>();
        for (const auto& [k, v] : x->items()) todo.push_back(&v);
      } else if (x->is_array()) {
        for (const auto& v : *x) todo.push_back(&v);
      }
    }
  }
  return {};
}

// A name as HTML and markdown write it (& and < escaped).
std::string report_name(std::string name) {
  for (std::size_t at = name.find('&'); at != std::string::npos; at = name.find('&', at + 5))
    name.replace(at, 1, "&amp;");
  return name;
}

// RFC 4180 records.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      row.push_back(cell);
      cell.clear();
      any = true;
    } else if (c == '\n') {
      row.push_back(cell);
      rows.push_back(row);
      row.clear();
      cell.clear();
      any = false;
    } else if (c != '\r') {
      cell += c;
      any = true;
    }
  }
  if (any) {
    row.push_back(cell);
    rows.push_back(row);
  }
  return rows;
}

// A number written for people, not for a spreadsheet: grouped digits, a unit or a suffix glued
// on ("1,008", "24 GiB", "$749", "6.74B", "45.1 tok/s", "14%").
bool is_decorated_number(const std::string& cell) {
  static const std::regex plain(R"(^-?\d+(\.\d+)?([eE][-+]?\d+)?$)");
  static const std::regex decorated(R"(^[-+]?\$?\d[\d,]*(\.\d+)? ?(%|[A-Za-z/]+)?$)");
  return !std::regex_match(cell, plain) && std::regex_match(cell, decorated);
}

}  // namespace

TEST_CASE("formats: every command in every format it declares", "[schema][formats]") {
  std::vector<std::vector<std::string>> paths;
  command_paths({}, paths);
  std::size_t walked = 0;
  static const std::regex column(R"(^[a-z][a-z0-9_]*$)");
  for (const auto& path : paths) {
    const auto formats = declared_formats(path);
    if (formats.empty()) continue;
    std::string name;
    for (const auto& p : path) name += (name.empty() ? "" : " ") + p;
    INFO("command: " << name);
    if (name == "catalog export") {
      // A data file: its one format is JSON that loads back as a catalog.
      CHECK(formats == std::vector<std::string>{"json"});
      auto r = test::run_cli({"catalog", "export", "--format", "json"});
      CHECK(r.code == 0);
      const auto list = test::run_cli({"catalog", "list", "--format", "json"});
      const Json doc = Json::parse(r.out);
      CHECK(doc["gpus"].size() == Json::parse(list.out)["gpus"].size());
      const Json schema = load_schema("catalog-export");
      CHECK(SchemaValidator::unsupported_keywords(schema).empty());
      SchemaValidator v(schema);
      const auto errors = v.validate(doc);
      INFO(join_errors(errors));
      CHECK(errors.empty());
      continue;
    }
    std::vector<const Case*> cases;
    for (const auto& c : kCases)
      if (c.args.size() >= path.size() && std::equal(path.begin(), path.end(), c.args.begin())) cases.push_back(&c);
    CHECK_FALSE(cases.empty());  // every command with --format has a case above
    for (const auto* c : cases) {
      // The fact every format must carry: the first GPU the JSON answer names (the top plan, the
      // GPU checked or inspected), else the model; the same answer in each format's shape.
      // A text format may give the display name instead of the id.
      std::string fact, fact_name;
      if (std::find(formats.begin(), formats.end(), "json") != formats.end()) {
        auto args = c->args;
        args.insert(args.end(), {"--format", "json"});
        const Json doc = Json::parse(test::run_cli(args).out);
        fact = first_string(doc, {"gpu_id"});
        if (!fact.empty()) {
          const auto shown = test::run_cli({"catalog", "show", fact, "--format", "json"});
          if (shown.code == 0) fact_name = first_string(Json::parse(shown.out), {"name"});
        } else if (fact = first_string(doc, {"model"}); !fact.empty()) {
          const auto shown = test::run_cli({"models", "show", fact, "--format", "json"});
          if (shown.code == 0) fact_name = first_string(Json::parse(shown.out), {"name"});
        } else {
          fact = first_string(doc, {"id"});
        }
      }
      for (const auto& f : formats) {
        auto args = c->args;
        args.insert(args.end(), {"--format", f});
        std::string label;
        for (const auto& a : args) label += " " + a;
        INFO("gpuadvisor" << label);
        auto r = test::run_cli(args);
        INFO("stderr: " << r.err);
        ++walked;
        // The exit code is the verdict, the same in every format.
        CHECK(r.code == c->exit);
        CHECK(r.err.empty());
        CHECK_FALSE(r.out.empty());
        if (r.out.empty()) continue;
        const bool header_only = f == "csv" && std::count(r.out.begin(), r.out.end(), '\n') <= 1;
        if (!fact.empty() && f != "sarif" && f != "junit" && !header_only) {
          INFO("the answer names " << fact << " (" << fact_name << ")");
          CHECK((r.out.find(fact) != std::string::npos ||
                 (!fact_name.empty() && r.out.find(report_name(fact_name)) != std::string::npos)));
        }
        if (f == "json") {
          const Json doc = Json::parse(r.out);
          const Json schema = load_schema(c->schema);
          SchemaValidator v(schema);
          const auto errors = v.validate(doc);
          INFO(join_errors(errors));
          CHECK(errors.empty());
        } else if (f == "sarif") {
          CHECK(Json::parse(r.out)["runs"].size() == 1);
        } else if (f == "junit") {
          CHECK(r.out.rfind("<?xml", 0) == 0);
          CHECK(r.out.find("<testsuites") != std::string::npos);
        } else if (f == "csv") {
          const auto rows = parse_csv(r.out);
          // A header, and a record a row (none when nothing fits or nothing was found).
          CHECK(rows.size() >= 1);
          if (rows.empty()) continue;
          for (const auto& h : rows[0]) {
            INFO("column: " << h);
            CHECK(std::regex_match(h, column));  // snake_case, the unit in the name
          }
          for (std::size_t i = 1; i < rows.size(); ++i) {
            INFO("record " << i);
            CHECK(rows[i].size() == rows[0].size());
            for (std::size_t k = 0; k < rows[i].size(); ++k) {
              INFO("column " << (k < rows[0].size() ? rows[0][k] : "?") << ": " << rows[i][k]);
              CHECK_FALSE(is_decorated_number(rows[i][k]));
            }
          }
        } else if (f == "html") {
          CHECK(r.out.rfind("<!DOCTYPE html>", 0) == 0);
        } else if (f == "markdown") {
          CHECK(r.out.find("|") != std::string::npos);
        }
      }
    }
  }
  CHECK(walked > 100);
}

TEST_CASE("schemas: docs/json-output.md names every schema", "[schema]") {
  std::ifstream in(test::source_path("docs/json-output.md"));
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  for (const auto& name : kSchemas) {
    INFO(name);
    CHECK(doc.find("data/schema/" + name + ".schema.json") != std::string::npos);
  }
}
