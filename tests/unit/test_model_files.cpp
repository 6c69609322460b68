#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_fixture.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/util/text.h"

using namespace gpuadvisor;
namespace fs = std::filesystem;

namespace {

std::string fixture(const std::string& name) { return test::source_path("tests/fixtures/modelfiles/" + name); }

// The one-line message read_model_file throws for `path` (and that it is a usage error, exit 2).
std::string read_error(const std::string& path) {
  try {
    auto s = catalog::read_model_file(path);
    FAIL("no error for " << path << " (params " << s.params << ")");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::usage);
    std::string what = e.what();
    CHECK(what.find('\n') == std::string::npos);
    return what;
  }
  return {};
}

std::string config_error(const std::string& json) {
  auto doc = util::JsonDoc::parse(json, "config.json");
  REQUIRE(doc);
  try {
    catalog::model_from_hf_config(*doc);
    FAIL("no error for " << json);
  } catch (const Error& e) {
    CHECK(e.code() == Exit::usage);
    return e.what();
  }
  return {};
}

catalog::Model config(const std::string& json) {
  auto doc = util::JsonDoc::parse(json, "config.json");
  REQUIRE(doc);
  return catalog::model_from_hf_config(*doc);
}

// Little-endian bytes for hand-made headers.
struct Bytes {
  std::string b;
  Bytes& u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  Bytes& u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  Bytes& raw(const std::string& s) {
    b += s;
    return *this;
  }
  Bytes& str(const std::string& s) { return u64(s.size()).raw(s); }
  Bytes& zeros(std::size_t n) { return raw(std::string(n, '\0')); }
  Bytes& pad_to(std::size_t align) { return zeros((align - b.size() % align) % align); }
};

// A GGUF v3 header: no metadata unless given, then tensor infos (name, dims, type, offset).
struct GgufTensor {
  std::string name;
  std::vector<std::uint64_t> dims;
  std::uint32_t type;
  std::uint64_t offset;
};
Bytes gguf_header(const std::vector<GgufTensor>& tensors, const Bytes& kvs = {}, std::uint64_t kv_count = 0) {
  Bytes b;
  b.raw("GGUF").u32(3).u64(tensors.size()).u64(kv_count).raw(kvs.b);
  for (const auto& t : tensors) {
    b.str(t.name).u32(static_cast<std::uint32_t>(t.dims.size()));
    for (auto d : t.dims) b.u64(d);
    b.u32(t.type).u64(t.offset);
  }
  return b;
}

// Files written for one test case under the system temp folder, removed afterwards.
class TempDir {
 public:
  explicit TempDir(const std::string& name) : dir_(fs::temp_directory_path() / ("gpuadvisor-test-" + name)) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream out(dir_ / name, std::ios::binary);
    out << bytes;
    return (dir_ / name).string();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

std::string safetensors(const std::string& header, std::size_t data_bytes) {
  return Bytes().u64(header.size()).raw(header).zeros(data_bytes).b;
}

}  // namespace

TEST_CASE("catalog::read_model_file reads the good fixtures exactly", "[modelfiles]") {
  SECTION("safetensors") {
    auto s = catalog::read_model_file(fixture("tiny.safetensors"));
    CHECK(s.params == 312);
    CHECK(s.bytes == 672);
    CHECK(s.dtypes == "BF16 x 3, F32 x 2");
    CHECK(s.origin == fixture("tiny.safetensors"));
  }
  SECTION("sharded safetensors index with both shards beside it") {
    auto s = catalog::read_model_file(fixture("sharded/model.safetensors.index.json"));
    CHECK(s.params == 328);
    CHECK(s.bytes == 672);
    CHECK(s.dtypes == "BF16 x 3, F32 x 1");
  }
  SECTION("index without its shards: bytes from metadata.total_size, params unknown") {
    auto s = catalog::read_model_file(fixture("missing-shards/model.safetensors.index.json"));
    CHECK(s.params == 0);
    CHECK(s.bytes == 16060522496.0);
    CHECK(s.dtypes == "unknown dtypes");
    CHECK(s.note ==
          "2 of 2 shards not beside the index: weight bytes from the index's metadata.total_size, "
          "parameters unknown");
  }
  SECTION("GGUF v3 with F32, Q4_K, Q6_K and Q8_0 tensors and string arrays in the metadata") {
    auto s = catalog::read_model_file(fixture("tiny.gguf"));
    CHECK(s.params == 1024 + 64 + 512 + 256 + 1024);
    CHECK(s.bytes == 576 + 256 + 544 + 1024 + 840);
    CHECK(s.dtypes == "F32 x 2, Q4_K x 1, Q6_K x 1, Q8_0 x 1");
  }
}

TEST_CASE("catalog::read_model_file rejects the malformed fixtures", "[modelfiles]") {
  CHECK(read_error(fixture("truncated.gguf")) == fixture("truncated.gguf") + ": truncated GGUF header at byte 101");
  CHECK(read_error(fixture("bad-magic.gguf")) ==
        fixture("bad-magic.gguf") + ": not a GGUF file (starts with \"ggjt\", expected \"GGUF\")");
  CHECK(read_error(fixture("huge-header.safetensors")) ==
        fixture("huge-header.safetensors") +
            ": safetensors header length 1000 runs past the end of the file (28 bytes)");
  CHECK(read_error(fixture("overlapping-offsets.safetensors")) ==
        fixture("overlapping-offsets.safetensors") + ": tensors \"a\" (bytes 0-16) and \"b\" (bytes 8-24) overlap");
  CHECK(read_error(fixture("empty.safetensors")) ==
        fixture("empty.safetensors") + ": empty file, expected a safetensors header");
  CHECK(read_error(fixture("garbage.bin")) ==
        fixture("garbage.bin") + ": expected a .safetensors, .safetensors.index.json or .gguf file");
  CHECK(read_error(fixture("absent.gguf")) == fixture("absent.gguf") + ": no such file");
}

TEST_CASE("catalog::read_model_file checks every safetensors header field", "[modelfiles]") {
  TempDir tmp("safetensors-fields");
  SECTION("header length over the 100 MB limit") {
    auto p = tmp.write("big.safetensors", Bytes().u64(200'000'000).raw("{}").b);
    CHECK(read_error(p) == p + ": safetensors header length 200000000 is over the 100 MB limit");
  }
  SECTION("shorter than the length field") {
    auto p = tmp.write("short.safetensors", "\x10\x00\x00");
    CHECK(read_error(p) == p + ": truncated safetensors header at byte 0");
  }
  SECTION("header that is not JSON") {
    auto p = tmp.write("bad.safetensors", safetensors("{\"a\": [1,", 0));
    CHECK(read_error(p).rfind(p + ":1:", 0) == 0);
  }
  SECTION("a number too large for a double") {
    auto p = tmp.write("overflow.safetensors",
                       safetensors(R"({"w":{"dtype":"F32","shape":[1e400],"data_offsets":[0,0]}})", 0));
    CHECK(read_error(p) == p + ": invalid JSON: number overflow parsing '1e400'");
  }
  SECTION("unknown dtype") {
    auto p = tmp.write("dtype.safetensors", safetensors(R"({"w":{"dtype":"Q4","shape":[2],"data_offsets":[0,1]}})", 1));
    CHECK(read_error(p) == p + ":1: tensor \"w\": field 'dtype': unknown dtype \"Q4\" (expected F64, F32, F16, BF16, "
                               "F8_E4M3, F8_E5M2, I64, I32, I16, I8, U8 or BOOL)");
  }
  SECTION("bytes that do not match the shape") {
    auto p = tmp.write("size.safetensors", safetensors(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8));
    CHECK(read_error(p) == p + ":1: tensor \"w\": field 'data_offsets': spans 8 bytes, but F32 [3] needs 12");
  }
  SECTION("offsets past the end of the file") {
    auto p =
        tmp.write("past.safetensors", safetensors(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8));
    CHECK(read_error(p) == p + ":1: tensor \"w\": field 'data_offsets': end 16 is past the end of the file (8 data "
                               "bytes after the header)");
  }
  SECTION("offsets in the wrong order") {
    auto p =
        tmp.write("order.safetensors", safetensors(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", 8));
    CHECK(read_error(p) == p + ":1: tensor \"w\": field 'data_offsets': begin 8 is after end 0");
  }
  SECTION("negative and overflowing shapes") {
    auto neg =
        tmp.write("neg.safetensors", safetensors(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", 0));
    CHECK(read_error(neg) == neg + ":1: tensor \"w\": field 'shape': expected whole numbers >= 0, got -1");
    auto huge = tmp.write(
        "huge.safetensors",
        safetensors(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,0]}})", 0));
    CHECK(read_error(huge) ==
          huge + ":1: tensor \"w\": field 'shape': [4294967296, 4294967296, 4294967296] has too many elements");
  }
  SECTION("a header with only metadata") {
    auto p = tmp.write("meta.safetensors", safetensors(R"({"__metadata__":{"format":"pt"}})", 0));
    CHECK(read_error(p) == p + ": the safetensors header lists no tensors");
  }
}

TEST_CASE("catalog::read_model_file checks safetensors indexes", "[modelfiles]") {
  TempDir tmp("index");
  fs::copy_file(fixture("tiny.safetensors"), tmp.path("model-00001-of-00001.safetensors"));
  SECTION("a tensor mapped to a shard that does not hold it") {
    auto p = tmp.write(
        "model.safetensors.index.json",
        R"({"metadata": {"total_size": 672}, "weight_map": {"model.norm.weight": "model-00001-of-00001.safetensors", "nope": "model-00001-of-00001.safetensors"}})");
    CHECK(read_error(p) == p + ": tensor \"nope\" is mapped to \"model-00001-of-00001.safetensors\", whose header does "
                               "not list it");
  }
  SECTION("a shard path outside the folder") {
    auto p = tmp.write("x.index.json", R"({"weight_map": {"w": "../w.safetensors"}})");
    CHECK(read_error(p) ==
          p + ":1: weight_map: field 'w': shard \"../w.safetensors\" must be a file name beside the index");
  }
  SECTION("missing shards and no total_size") {
    auto p = tmp.write("y.index.json", R"({"weight_map": {"w": "gone.safetensors"}})");
    CHECK(read_error(p) == p + ": 1 of 1 shards not beside the index and the index has no metadata.total_size");
  }
  SECTION("one present shard is read like a single file") {
    auto p = tmp.write("z.safetensors.index.json",
                       R"({"weight_map": {"model.norm.weight": "model-00001-of-00001.safetensors"}})");
    auto s = catalog::read_model_file(p);
    CHECK(s.params == 312);
    CHECK(s.bytes == 672);
  }
}

TEST_CASE("catalog::read_model_file checks every GGUF header field", "[modelfiles]") {
  TempDir tmp("gguf-fields");
  SECTION("IQ and BF16 types use ggml's block sizes") {
    // IQ4_XS (23): 136 bytes per 256; IQ2_XXS (16): 66 per 256; BF16 (30): 2 per element.
    std::vector<GgufTensor> t = {{"a", {256, 2}, 23, 0}, {"b", {512}, 16, 288}, {"c", {8, 2}, 30, 448}};
    Bytes b = gguf_header(t);
    b.pad_to(32).zeros(448 + 32);
    auto p = tmp.write("iq.gguf", b.b);
    auto s = catalog::read_model_file(p);
    CHECK(s.params == 512 + 512 + 16);
    CHECK(s.bytes == 272 + 132 + 32);
    CHECK(s.dtypes == "BF16 x 1, IQ2_XXS x 1, IQ4_XS x 1");
  }
  SECTION("an unsupported tensor type") {
    auto p = tmp.write("type.gguf", gguf_header({{"w", {32}, 40, 0}}).b);
    CHECK(read_error(p) == p + ": tensor \"w\": unsupported GGUF tensor type 40");
  }
  SECTION("rows that are not whole blocks") {
    auto p = tmp.write("block.gguf", gguf_header({{"w", {100, 4}, 12, 0}}).b);
    CHECK(read_error(p) == p + ": tensor \"w\": first dimension 100 is not a multiple of the Q4_K block size 256");
  }
  SECTION("tensor data past the end of the file") {
    Bytes b = gguf_header({{"w", {64}, 0, 0}});
    b.pad_to(32).zeros(100);
    auto p = tmp.write("data.gguf", b.b);
    CHECK(read_error(p) == p + fmt::format(": tensor \"w\" data (256 bytes at offset 0 after the header) runs past "
                                           "the end of the file ({} bytes)",
                                           b.b.size()));
  }
  SECTION("overlapping tensors") {
    Bytes b = gguf_header({{"a", {64}, 0, 0}, {"b", {64}, 0, 128}});
    b.pad_to(32).zeros(512);
    auto p = tmp.write("overlap.gguf", b.b);
    CHECK(read_error(p) == p + ": tensors \"a\" (bytes 0-256) and \"b\" (bytes 128-384) overlap");
  }
  SECTION("too many dimensions") {
    auto p = tmp.write("dims.gguf", gguf_header({{"w", {1, 1, 1, 1, 1}, 0, 0}}).b);
    CHECK(read_error(p) == p + ": tensor \"w\" has 5 dimensions, expected 1 to 4");
  }
  SECTION("counts and lengths over the limits") {
    auto count = tmp.write("count.gguf", Bytes().raw("GGUF").u32(3).u64(std::uint64_t{1} << 40).u64(0).b);
    CHECK(read_error(count) == count + ": GGUF tensor count 1099511627776 is over the limit of 1000000");
    auto kvs = tmp.write("kvs.gguf", Bytes().raw("GGUF").u32(3).u64(1).u64(2'000'000).b);
    CHECK(read_error(kvs) == kvs + ": GGUF metadata count 2000000 is over the limit of 1000000");
    auto str = tmp.write("str.gguf", Bytes().raw("GGUF").u32(3).u64(1).u64(1).u64(std::uint64_t{1} << 60).b);
    CHECK(read_error(str) == str + ": GGUF string at byte 24 is 1152921504606846976 bytes long, over the 1 MiB limit");
    // An array claiming 2^62 uint32 elements in a file of a few dozen bytes.
    Bytes arr;
    arr.str("k").u32(9).u32(4).u64(std::uint64_t{1} << 62);
    auto a = tmp.write("array.gguf", gguf_header({}, arr, 1).b);
    CHECK(read_error(a) == a + ": truncated GGUF header at byte 49");
    Bytes strs;
    strs.str("k").u32(9).u32(8).u64(std::uint64_t{1} << 50);
    auto s = tmp.write("strings.gguf", gguf_header({}, strs, 1).b);
    CHECK(read_error(s) == s + ": truncated GGUF header at byte 49");
  }
  SECTION("unknown metadata value type") {
    Bytes kv;
    kv.str("k").u32(13).u32(0);
    auto p = tmp.write("value.gguf", gguf_header({}, kv, 1).b);
    CHECK(read_error(p) == p + ": GGUF key \"k\": unknown value type 13 at byte 33");
  }
  SECTION("versions and byte order") {
    auto v1 = tmp.write("v1.gguf", Bytes().raw("GGUF").u32(1).u64(0).u64(0).b);
    CHECK(read_error(v1) == v1 + ": unsupported GGUF version 1 (expected 2 or 3)");
    auto be = tmp.write("be.gguf", Bytes().raw("GGUF").u32(0x03000000).u64(0).u64(0).b);
    CHECK(read_error(be) == be + ": big-endian GGUF files are not supported");
  }
  SECTION("no tensors") {
    auto p = tmp.write("empty-list.gguf", gguf_header({}).b);
    CHECK(read_error(p) ==
          p + ": the GGUF file lists no tensors (a vocabulary-only file, as llama.cpp's tokenizer tests "
              "use?): no weights to count");
  }
  SECTION("every truncation of a good file fails cleanly") {
    std::ifstream in(fixture("tiny.gguf"), std::ios::binary);
    std::string whole((std::istreambuf_iterator<char>(in)), {});
    REQUIRE(whole.size() == 4224);
    // The last 24 bytes are alignment padding after the last tensor; cuts there lose no data.
    for (std::size_t n = 0; n < whole.size() - 24; n += 7) {
      auto p = tmp.write("cut.gguf", whole.substr(0, n));
      INFO("cut at " << n);
      CHECK_THROWS_AS(catalog::read_model_file(p), Error);
    }
  }
}

TEST_CASE("catalog::read_model_file survives corrupted header bytes", "[modelfiles]") {
  // Any header byte set to 0xff or 0x00 yields numbers or a gpuadvisor::Error, never a crash or
  // another exception (the sanitizer build checks the rest).
  TempDir tmp("corrupt");
  for (const char* name : {"tiny.gguf", "tiny.safetensors"}) {
    std::ifstream in(fixture(name), std::ios::binary);
    std::string whole((std::istreambuf_iterator<char>(in)), {});
    std::size_t header = std::string(name).ends_with(".gguf") ? 940 : 8 + 448;
    REQUIRE(whole.size() > header);
    int errors = 0;
    for (std::size_t i = 0; i < header; ++i) {
      for (char c : {'\xff', '\0'}) {
        std::string bad = whole;
        bad[i] = c;
        auto p = tmp.write(name, bad);
        try {
          catalog::read_model_file(p);
        } catch (const Error&) {
          ++errors;
        }
      }
    }
    INFO(name);
    CHECK(errors > 0);
  }
}

TEST_CASE("catalog::model_from_hf_config matches data/models.json for the fixture configs", "[modelfiles]") {
  auto presets = catalog::ModelSet::load({});
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(test::source_path("tests/fixtures/hf")))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  REQUIRE(dirs.size() >= 11);
  for (const auto& dir : dirs) {
    std::string name = dir.filename().string();
    INFO(name);
    auto doc = util::JsonDoc::load((dir / "config.json").string());
    REQUIRE(doc);
    catalog::Model m = catalog::model_from_hf_config(*doc);
    auto preset = presets.resolve(name);
    REQUIRE(preset);
    const catalog::Model& p = **preset;
    CHECK(m.layers == p.layers);
    CHECK(m.hidden == p.hidden);
    CHECK(m.heads == p.heads);
    CHECK(m.kv_heads == p.kv_heads);
    CHECK(m.head_dim == p.head_dim);
    CHECK(m.intermediate == p.intermediate);
    CHECK(m.vocab == p.vocab);
    CHECK(m.tied_embeddings == p.tied_embeddings);
    CHECK(m.gated_mlp == p.gated_mlp);
    CHECK(m.bias == p.bias);
    CHECK(m.norm == p.norm);
    CHECK(m.position == p.position);
    CHECK(m.max_context == p.max_context);
    CHECK(m.kind == p.kind);
    CHECK(m.family == p.family);
    CHECK(m.moe.has_value() == p.moe.has_value());
    CHECK(m.params == 0);
    CHECK(m.origin == (dir / "config.json").string());
  }
}

TEST_CASE("catalog::count_params of the fixture configs is within 0.5% of EXPECTED.json", "[modelfiles]") {
  auto expected = util::JsonDoc::load(test::source_path("tests/fixtures/hf/EXPECTED.json"));
  REQUIRE(expected);
  int checked = 0;
  for (const auto& [id, rec] : expected->root().items()) {
    INFO(id);
    auto doc = util::JsonDoc::load(test::source_path("tests/fixtures/hf/" + id + "/config.json"));
    REQUIRE(doc);
    double counted = catalog::count_params(catalog::model_from_hf_config(*doc));
    double published = rec["params"].get<double>();
    INFO("counted " << counted << ", expected " << published);
    CHECK(std::fabs(counted - published) / published < 0.005);
    ++checked;
  }
  CHECK(checked >= 11);
}

TEST_CASE("catalog::model_from_hf_config reads the other model types", "[modelfiles]") {
  auto presets = catalog::ModelSet::load({});
  // A config without max_position_embeddings (Falcon) leaves the context unknown; the preset takes
  // it from the model card.
  auto same_shape = [&](const catalog::Model& m, const std::string& id, bool same_context = true) {
    const catalog::Model* p = presets.find(id);
    REQUIRE(p);
    INFO(id);
    CHECK(m.layers == p->layers);
    CHECK(m.encoder_layers == p->encoder_layers);
    CHECK(m.hidden == p->hidden);
    CHECK(m.heads == p->heads);
    CHECK(m.kv_heads == p->kv_heads);
    CHECK(m.head_dim == p->head_dim);
    CHECK(m.intermediate == p->intermediate);
    CHECK(m.vocab == p->vocab);
    CHECK(m.tied_embeddings == p->tied_embeddings);
    CHECK(m.gated_mlp == p->gated_mlp);
    CHECK(m.bias == p->bias);
    CHECK(m.norm == p->norm);
    CHECK(m.position == p->position);
    if (same_context) CHECK(m.max_context == p->max_context);
    CHECK(m.kind == p->kind);
    CHECK(m.family == p->family);
  };
  SECTION("t5-3b: encoder-decoder, d_kv heads, relative positions") {
    auto m = config(R"({"architectures": ["T5WithLMHeadModel"], "d_ff": 16384, "d_kv": 128, "d_model": 1024,
      "decoder_start_token_id": 0, "dropout_rate": 0.1, "eos_token_id": 1, "initializer_factor": 1.0,
      "is_encoder_decoder": true, "layer_norm_epsilon": 1e-06, "model_type": "t5", "n_positions": 512,
      "num_heads": 32, "num_layers": 24, "pad_token_id": 0, "relative_attention_num_buckets": 32,
      "vocab_size": 32128})");
    same_shape(m, "t5-3b");
    CHECK(std::fabs(catalog::count_params(m) - 2851598336.0) / 2851598336.0 < 0.005);
    auto v11 = config(R"({"model_type": "t5", "d_model": 768, "d_kv": 64, "d_ff": 2048, "num_heads": 12,
      "num_layers": 12, "num_decoder_layers": 12, "vocab_size": 32128, "feed_forward_proj": "gated-gelu",
      "tie_word_embeddings": false})");
    CHECK(v11.gated_mlp);
    CHECK_FALSE(v11.tied_embeddings);
  }
  SECTION("falcon-40b: new decoder architecture with 8 KV heads; falcon-7b: multi-query") {
    auto m = config(R"({"alibi": false, "apply_residual_connection_post_layernorm": false,
      "architectures": ["FalconForCausalLM"], "bias": false, "hidden_size": 8192, "model_type": "falcon",
      "new_decoder_architecture": true, "num_attention_heads": 128, "num_hidden_layers": 60,
      "num_kv_heads": 8, "parallel_attn": true, "vocab_size": 65024})");
    same_shape(m, "falcon-40b", false);
    CHECK_FALSE(m.max_context);
    CHECK(presets.find("falcon-40b")->max_context == 2048);
    auto f7 = config(R"({"model_type": "falcon", "hidden_size": 4544, "num_attention_heads": 71,
      "num_hidden_layers": 32, "multi_query": true, "new_decoder_architecture": false, "vocab_size": 65024})");
    CHECK(f7.kv_heads == 1);
    CHECK(f7.head_dim == 64);
    CHECK(f7.intermediate == 4 * 4544);
  }
  SECTION("deepseek-v3: MLA and shared plus routed experts after 3 dense layers") {
    auto m = config(R"({"architectures": ["DeepseekV3ForCausalLM"], "first_k_dense_replace": 3,
      "hidden_size": 7168, "intermediate_size": 18432, "kv_lora_rank": 512, "max_position_embeddings": 163840,
      "model_type": "deepseek_v3", "moe_intermediate_size": 2048, "moe_layer_freq": 1, "n_group": 8,
      "n_routed_experts": 256, "n_shared_experts": 1, "num_attention_heads": 128, "num_experts_per_tok": 8,
      "num_hidden_layers": 61, "num_key_value_heads": 128, "num_nextn_predict_layers": 1, "q_lora_rank": 1536,
      "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "tie_word_embeddings": false, "v_head_dim": 128,
      "vocab_size": 129280})");
    same_shape(m, "deepseek-v3");
    REQUIRE(m.moe);
    CHECK(m.moe->experts == 256);
    CHECK(m.moe->experts_per_token == 8);
    CHECK(m.moe->shared_experts == 1);
    CHECK(m.moe->expert_intermediate == 2048);
    CHECK(m.moe->dense_layers == 3);
    CHECK(m.moe->dense_intermediate == 18432);
    REQUIRE(m.mla);
    CHECK(m.mla->kv_lora_rank == 512);
    CHECK(m.mla->q_lora_rank == 1536);
    CHECK(m.mla->v_head_dim == 128);
    // models.json notes: counting the main model from the config gives 671,026,419,200.
    CHECK(catalog::count_params(m) == Approx(671026419200.0).epsilon(0.001));
  }
  SECTION("mixtral: experts of intermediate_size") {
    auto doc = util::JsonDoc::load(test::source_path("tests/fixtures/hf/mixtral-8x7b/config.json"));
    REQUIRE(doc);
    auto m = catalog::model_from_hf_config(*doc);
    REQUIRE(m.moe);
    CHECK(m.moe->experts == 8);
    CHECK(m.moe->experts_per_token == 2);
    CHECK(m.moe->expert_intermediate == 14336);
    CHECK(m.moe->dense_layers == 0);
  }
  SECTION("qwen2_moe: Qwen1.5-MoE-A2.7B, 14.3B parameters") {
    auto m = config(R"({"model_type": "qwen2_moe", "hidden_size": 2048, "intermediate_size": 5632,
      "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632, "num_experts": 60,
      "num_experts_per_tok": 4, "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16,
      "vocab_size": 151936, "decoder_sparse_step": 1, "max_position_embeddings": 8192,
      "tie_word_embeddings": false, "mlp_only_layers": []})");
    REQUIRE(m.moe);
    CHECK(m.moe->experts == 60);
    CHECK(m.moe->shared_experts == 4);
    CHECK(m.moe->dense_layers == 0);
    CHECK(m.family == "qwen2");
    CHECK(std::fabs(catalog::count_params(m) - 14.3e9) / 14.3e9 < 0.005);
  }
  SECTION("gemma: head_dim key, tied by default; gpt2 n_inner; _name_or_path as id") {
    auto g = config(R"({"model_type": "gemma", "hidden_size": 3072, "head_dim": 256, "intermediate_size": 24576,
      "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 16, "vocab_size": 256000,
      "max_position_embeddings": 8192, "_name_or_path": "google/gemma-7b"})");
    CHECK(g.head_dim == 256);
    CHECK(g.tied_embeddings);
    CHECK(g.gated_mlp);
    CHECK(g.id == "google/gemma-7b");
    auto gpt = config(R"({"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2, "n_inner": 100,
      "n_positions": 128, "vocab_size": 1000})");
    CHECK(gpt.intermediate == 100);
    CHECK(gpt.id == "config");
    CHECK(gpt.origin == "config.json");
  }
}

TEST_CASE("catalog::model_from_hf_config errors name the file, line and field", "[modelfiles]") {
  CHECK(config_error("{\n  \"model_type\": \"llamma\",\n  \"hidden_size\": 8\n}") ==
        "config.json:1: field 'num_hidden_layers': missing (also looked for 'n_layer', 'num_layers', 'n_layers'); the "
        "number of layers is required (model type \"llamma\" is not one gpuadvisor knows, did you mean 'llama'?, so it "
        "was read from the standard keys)");
  CHECK(
      config_error(R"({"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10,
    "intermediate_size": 16})") ==
      "config.json:1: field 'hidden_size': missing (also looked for 'n_embd', 'd_model'); the model width is required");
  CHECK(config_error("{\"model_type\": \"llama\",\n\"num_hidden_layers\": \"32\"}") ==
        "config.json:2: field 'num_hidden_layers': expected a whole number, got \"32\"");
  CHECK(config_error(R"({"model_type": "llama", "num_hidden_layers": 0})") ==
        "config.json:1: field 'num_hidden_layers': expected a whole number from 1 to 100000, got 0");
  CHECK(config_error(R"({"model_type": "mistral", "num_hidden_layers": 2, "hidden_size": 64,
    "num_attention_heads": 8, "num_key_value_heads": 3, "vocab_size": 10, "intermediate_size": 16})") ==
        "config.json:2: field 'num_key_value_heads': 3 key/value heads do not divide the 8 attention heads");
  CHECK(config_error(R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 100,
    "num_attention_heads": 8, "vocab_size": 10, "intermediate_size": 16})") ==
        "config.json:2: field 'num_attention_heads': 8 heads do not divide the model width 100, and the config "
        "gives no head_dim");
  CHECK(config_error(R"({"hidden_size": 8})") ==
        "config.json:1: field 'model_type': missing; a Hugging Face config.json names its model_type (llama, qwen3, "
        "gemma3, ...)");
  CHECK(config_error("[1, 2]") == "config.json:1: expected an object, got [1,2]");
}

TEST_CASE("catalog::read_model_file names Git LFS pointers and reads indexes beside them", "[modelfiles]") {
  TempDir tmp("lfs");
  const std::string pointer =
      "version https://git-lfs.github.com/spec/v1\n"
      "oid sha256:5d5a6f0b7e0b1b3bdfc9fa3a5cd0bd8a3e1f6bd2b2fb0a8e4ac8b0d3c1f0e2a1\n"
      "size 4976698672\n";
  auto shard = tmp.write("model-00001-of-00002.safetensors", pointer);
  tmp.write("model-00002-of-00002.safetensors", pointer);
  SECTION("a pointer given directly") {
    CHECK(read_error(shard) ==
          shard +
              ": a Git LFS pointer to 4,976,698,672 bytes (4.63 GiB), not the weights (the clone was made "
              "without git-lfs): run 'git lfs pull' there, or give the "
              ".safetensors.index.json, whose metadata.total_size is read");
  }
  SECTION("an index whose shards are pointers: bytes from metadata.total_size") {
    auto p =
        tmp.write("model.safetensors.index.json",
                  R"({"metadata": {"total_size": 9953397248}, "weight_map": {"a": "model-00001-of-00002.safetensors",
                       "b": "model-00002-of-00002.safetensors"}})");
    auto s = catalog::read_model_file(p);
    CHECK(s.params == 0);
    CHECK(s.bytes == 9953397248.0);
    CHECK(s.note ==
          "2 of 2 shards are Git LFS pointers: weight bytes from the index's metadata.total_size, "
          "parameters unknown");
  }
}

TEST_CASE("catalog::read_model_file reads the architecture from GGUF metadata", "[modelfiles]") {
  TempDir tmp("gguf-meta");
  auto u32 = [](Bytes& b, const std::string& key, std::uint32_t v) { b.str(key).u32(4).u32(v); };
  Bytes kvs;
  kvs.str("general.architecture").u32(8).str("llama");
  u32(kvs, "llama.block_count", 32);
  u32(kvs, "llama.embedding_length", 4096);
  u32(kvs, "llama.attention.head_count", 32);
  u32(kvs, "llama.attention.head_count_kv", 8);
  u32(kvs, "llama.context_length", 131072);
  u32(kvs, "llama.feed_forward_length", 14336);
  // tokenizer.ggml.tokens: an array (9) of 3 strings (8).
  kvs.str("tokenizer.ggml.tokens").u32(9).u32(8).u64(3).str("a").str("b").str("c");
  Bytes b = gguf_header({{"w", {32}, 0, 0}}, kvs, 8);
  b.pad_to(32).zeros(128);
  auto p = tmp.write("llama.gguf", b.b);
  auto s = catalog::read_model_file(p);
  REQUIRE(s.shape);
  CHECK(s.shape->architecture == "llama");
  CHECK(s.shape->layers == 32);
  CHECK(s.shape->kv_heads == 8);
  CHECK(s.shape->vocab == 3);
  auto m = catalog::model_from_gguf(s);
  REQUIRE(m);
  CHECK(m->is_transformer());
  CHECK(m->head_dim == 128);
  CHECK(m->max_context == 131072);
  CHECK(m->params == 32);
  // Llama 3.1 8B's KV cache: 2 x 32 layers x 8 heads x 128 x 2 bytes = 128 KiB per token.
  CHECK(estimate::kv_bytes_per_token(*m, "fp16") == 131072);
  CHECK(m->assumptions.back() ==
        "architecture from the GGUF metadata (llama): 32 blocks, hidden 4096, 32 heads, 8 KV heads of 128, context "
        "131,072");

  SECTION("no block count: the model says what is missing") {
    Bytes k2;
    k2.str("general.architecture").u32(8).str("qwen3");
    Bytes b2 = gguf_header({{"w", {32}, 0, 0}}, k2, 1);
    b2.pad_to(32).zeros(128);
    auto p2 = tmp.write("bare.gguf", b2.b);
    auto m2 = catalog::model_from_gguf(catalog::read_model_file(p2));
    REQUIRE_FALSE(m2);
    CHECK(m2.error() == p2 + ": the GGUF metadata lacks qwen3.block_count, qwen3.embedding_length, "
                             "qwen3.attention.head_count: no shape for the KV cache");
  }
}

TEST_CASE("catalog::read_model_file reads every part of a split GGUF set", "[modelfiles]") {
  TempDir tmp("gguf-split");
  for (int i = 1; i <= 2; ++i) {
    Bytes b = gguf_header({{fmt::format("w{}", i), {32}, 0, 0}});
    b.pad_to(32).zeros(128);
    tmp.write(fmt::format("m-0000{}-of-00002.gguf", i), b.b);
  }
  auto s = catalog::read_model_file(tmp.path("m-00001-of-00002.gguf"));
  CHECK(s.params == 64);
  CHECK(s.bytes == 256);
  CHECK(s.dtypes == "F32 x 2");
  CHECK(s.note == "the 2 parts of a split GGUF set");
  fs::remove(tmp.path("m-00002-of-00002.gguf"));
  CHECK(read_error(tmp.path("m-00001-of-00002.gguf")) == tmp.path("m-00001-of-00002.gguf") +
                                                             ": part 2 of the split GGUF set (" +
                                                             tmp.path("m-00002-of-00002.gguf") + ") is not beside it");
}

TEST_CASE("catalog::read_model_file caps GGUF metadata work and safetensors tensor counts", "[modelfiles]") {
  TempDir tmp("caps");
  SECTION("arrays of many tiny strings end at 2^24 elements, before any is read") {
    Bytes kvs;
    kvs.str("k").u32(9).u32(8).u64(20'000'000);
    // The file is only as long as 20M 8-byte lengths would need: a sparse file in the wild.
    std::string body = gguf_header({}, kvs, 1).b;
    body.resize(body.size() + std::size_t{20'000'000} * 8 + 64, '\0');
    auto p = tmp.write("many.gguf", body);
    CHECK(read_error(p) == p + ": GGUF key \"k\": metadata arrays add up to more than 16777216 elements");
  }
  SECTION("tensor names longer than 256 bytes") {
    Bytes b = gguf_header({{std::string(300, 'n'), {32}, 0, 0}});
    b.pad_to(32).zeros(128);
    auto p = tmp.write("name.gguf", b.b);
    CHECK(read_error(p) == p + ": GGUF string at byte 24 is 300 bytes long, over the 256-byte limit");
  }
}

TEST_CASE("catalog::read_model_file counts GPTQ and AWQ packed weights", "[modelfiles]") {
  TempDir tmp("gptq");
  // One 4-bit GPTQ layer of 64 x 16 weights: qweight [64/8, 16] int32, scales and qzeros.
  std::string header = R"({"l.qweight":{"dtype":"I32","shape":[8,16],"data_offsets":[0,512]},)"
                       R"("l.scales":{"dtype":"F16","shape":[1,16],"data_offsets":[512,544]},)"
                       R"("l.qzeros":{"dtype":"I32","shape":[1,2],"data_offsets":[544,552]},)"
                       R"("norm.weight":{"dtype":"F16","shape":[16],"data_offsets":[552,584]}})";
  auto p = tmp.write("gptq.safetensors", safetensors(header, 584));
  auto s = catalog::read_model_file(p);
  CHECK(s.params == 64 * 16 + 16);
  CHECK(s.bytes == 584);
  CHECK(s.dtypes == "F16 x 2, I32 x 2 (1 GPTQ/AWQ qweight tensors counted as 4-bit, 8 weights per int32)");
}

TEST_CASE("catalog::model_from_hf_config reads the model types that were refused", "[modelfiles]") {
  // Key sets as these types' config.json files spell them; the shape read is checked, the counts
  // of real configs are in test_real_configs.cpp.
  SECTION("chatglm: num_layers, multi_query_group_num, kv_channels, ffn_hidden_size, padded_vocab_size") {
    auto m = config(R"({"model_type": "chatglm", "num_layers": 28, "hidden_size": 4096, "num_attention_heads": 32,
      "multi_query_attention": true, "multi_query_group_num": 2, "kv_channels": 128, "ffn_hidden_size": 13696,
      "padded_vocab_size": 65024, "seq_length": 8192, "add_qkv_bias": true, "tie_word_embeddings": false})");
    CHECK(m.layers == 28);
    CHECK(m.kv_heads == 2);
    CHECK(m.head_dim == 128);
    CHECK(m.intermediate == 13696);
    CHECK(m.vocab == 65024);
    CHECK(m.max_context == 8192);
    CHECK(m.qkv_bias);
    CHECK(m.assumptions.empty());
  }
  SECTION("deepseek_v2: MLA without q_lora_rank, shared experts after one dense layer") {
    auto m = config(R"({"model_type": "deepseek_v2", "num_hidden_layers": 27, "hidden_size": 2048,
      "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 512, "q_lora_rank": null,
      "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "intermediate_size": 10944,
      "moe_intermediate_size": 1408, "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": 6,
      "first_k_dense_replace": 1, "vocab_size": 102400, "max_position_embeddings": 163840})");
    REQUIRE(m.mla);
    CHECK(m.mla->q_lora_rank == 0);
    REQUIRE(m.moe);
    CHECK(m.moe->shared_experts == 2);
    CHECK(m.moe->dense_layers == 1);
    CHECK(m.moe->dense_intermediate == 10944);
    // DeepSeek-V2-Lite: 15.7B parameters (DeepSeek-V2 paper, appendix B).
    CHECK(catalog::count_params(m) == Approx(15.7e9).epsilon(0.005));
  }
  SECTION("granitemoe and olmoe: experts of intermediate_size") {
    auto g = config(R"({"model_type": "granitemoe", "num_hidden_layers": 24, "hidden_size": 1024,
      "num_attention_heads": 16, "num_key_value_heads": 8, "intermediate_size": 512, "num_local_experts": 32,
      "num_experts_per_tok": 8, "vocab_size": 49155, "tie_word_embeddings": true, "max_position_embeddings": 4096})");
    REQUIRE(g.moe);
    CHECK(g.moe->experts == 32);
    CHECK(g.moe->expert_intermediate == 512);
    CHECK(g.tied_embeddings);
  }
  SECTION("phi (phi-2): plain MLP with biases, untied, LayerNorm") {
    auto m = config(R"({"model_type": "phi", "num_hidden_layers": 32, "hidden_size": 2560, "num_attention_heads": 32,
      "intermediate_size": 10240, "vocab_size": 51200, "max_position_embeddings": 2048, "partial_rotary_factor": 0.4,
      "tie_word_embeddings": false})");
    CHECK_FALSE(m.gated_mlp);
    CHECK(m.bias);
    CHECK(m.norm == "layernorm");
    // microsoft/phi-2: 2,779,683,840 parameters in its safetensors (the card: 2.7B).
    CHECK(catalog::count_params(m) == Approx(2779683840.0).epsilon(0.001));
  }
  SECTION("llava: text_config of llama with the LlamaConfig sizes given, CLIP vision tower and projector") {
    auto m = config(R"({"model_type": "llava", "text_config": {"model_type": "llama", "hidden_size": 4096,
      "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32064,
      "max_position_embeddings": 4096}, "vision_config": {"hidden_size": 1024, "image_size": 336,
      "intermediate_size": 4096, "model_type": "clip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 24,
      "patch_size": 14}, "tie_word_embeddings": false})");
    // CLIP ViT-L/14 at 336 px: 303.5M; the two-layer projector 1024 x 4096 + 4096 x 4096 with biases.
    CHECK(m.extra_params == Approx(303.5e6 + 4096.0 * 1024 + 4096 + 4096.0 * 4096 + 4096).epsilon(0.002));
    CHECK(m.family == "llava");
  }
  SECTION("qwen2_5_vl: the text keys at the top level, a windowed ViT with gated MLP in vision_config") {
    auto m = config(R"({"model_type": "qwen2_5_vl", "hidden_size": 3584, "intermediate_size": 18944,
      "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
      "max_position_embeddings": 128000, "tie_word_embeddings": false, "vision_config": {"depth": 32,
      "hidden_size": 1280, "intermediate_size": 3420, "num_heads": 16, "out_hidden_size": 3584, "patch_size": 14,
      "spatial_merge_size": 2, "temporal_patch_size": 2, "in_chans": 3}})");
    CHECK(m.qkv_bias);
    CHECK(m.extra_params > 6.5e8);
    CHECK(m.extra_params < 7.0e8);
  }
  SECTION("a hybrid layout says what it cannot count") {
    CHECK(config_error(R"({"model_type": "qwen3_next", "num_hidden_layers": 2, "hidden_size": 64,
      "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 16,
      "layer_types": ["linear_attention", "full_attention"]})") ==
          "config.json:3: field 'layer_types': layer kind \"linear_attention\" is not attention: gpuadvisor counts "
          "attention layers only, and the parameters and state of \"linear_attention\" layers are not known (model "
          "type \"qwen3_next\" is not one gpuadvisor knows, so it was read from the standard keys)");
  }
}

// tests/fixtures/real/modelfiles: real model files and indexes from public repositories (SOURCES
// names each one's origin), read through `memory --model-file` as a user would.
TEST_CASE("real model files: counted as their headers say, or refused naming why", "[modelfiles][real]") {
  std::ifstream sources(test::source_path("tests/fixtures/real/modelfiles/SOURCES"));
  REQUIRE(sources);
  std::string line;
  int checked = 0;
  while (std::getline(sources, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto cells = util::split(line, '|');
    REQUIRE(cells.size() == 4);
    const std::string file = util::trim(cells[0]), expected = util::trim(cells[3]);
    INFO(file);
    CHECK(util::trim(cells[1]).find("https://github.com/") != std::string::npos);
    auto r = test::run_cli(
        {"memory", "--model-file", test::source_path("tests/fixtures/real/modelfiles/" + file), "--format", "json"});
    if (util::starts_with(expected, "error: ")) {
      CHECK(r.code == 2);
      CHECK(r.err.find(expected.substr(7)) != std::string::npos);
    } else {
      REQUIRE(r.code == 0);
      auto j = util::Json::parse(r.out);
      if (expected == "unknown")
        CHECK(j["workload"]["params"].is_null());
      else
        CHECK(j["workload"]["params"].get<double>() == std::stod(expected));
    }
    ++checked;
  }
  CHECK(checked == 8);
  // The tiny GGUF's metadata gives the KV cache: 2 x 1 layer x 2 KV heads x 4 dims x 2 bytes x 4096 tokens.
  auto r =
      test::run_cli({"memory", "--model-file",
                     test::source_path("tests/fixtures/real/modelfiles/llama-2-tiny-random.gguf"), "--format", "json"});
  CHECK(util::Json::parse(r.out)["kv_cache_bytes"].get<double>() == 2 * 1 * 2 * 4 * 2 * 4096);
}
