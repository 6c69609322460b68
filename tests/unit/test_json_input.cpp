#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "gpuadvisor/util/json.h"

using namespace gpuadvisor;
using util::Json;

TEST_CASE("util::Json objects keep insertion order and find members through the index", "[json]") {
  Json o = Json::object();
  for (int i = 0; i < 1000; ++i) o[fmt::format("k{}", 999 - i)] = i;
  REQUIRE(o.size() == 1000);
  CHECK(o.begin().key() == "k999");
  CHECK(o.dump().substr(0, 18) == R"({"k999":0,"k998":1)");
  CHECK(o.at("k0") == 999);
  CHECK(o.contains("k500"));
  CHECK_FALSE(o.contains("k1000"));
  CHECK(o.count("k7") == 1);
  o["k7"] = "seven";  // an existing key: replaced in place, not appended
  CHECK(o.size() == 1000);
  CHECK(o["k7"] == "seven");
  o.erase("k999");  // erase drops the index; look-ups still find every other member
  CHECK(o.size() == 999);
  CHECK(o.begin().key() == "k998");
  CHECK_FALSE(o.contains("k999"));
  for (int i = 0; i < 999; ++i) CHECK(o.contains(fmt::format("k{}", i)));
  Json copy = o;  // a copy starts without an index and builds its own
  copy["new"] = 1;
  CHECK(copy.contains("new"));
  CHECK_FALSE(o.contains("new"));
  CHECK(copy.size() == 1000);
  Json small = Json::parse(R"({"b": 1, "a": 2, "b": 3})");  // a repeated key: the last one wins
  CHECK(small.dump() == R"({"b":3,"a":2})");
}

TEST_CASE("JsonDoc parses an object of 200k members in linear time", "[json]") {
  std::string text = "{";
  for (int i = 0; i < 200000; ++i) text += fmt::format("{}\"key{}\": {}", i ? ",\n" : "", i, i);
  text += "}";
  const auto start = std::chrono::steady_clock::now();
  auto doc = util::JsonDoc::parse(text, "many.json");
  REQUIRE(doc);
  const util::Fields f(*doc, doc->root(), "", "");
  std::int64_t sum = 0;
  for (const auto& [k, v] : doc->root().items()) sum += f.integer(k, 0, 1 << 20);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(sum == 199999LL * 200000 / 2);
  // A bound far above the ~0.1 s it takes (ASan on a loaded CI machine included) that still fails the
  // quadratic parse: nlohmann::ordered_json takes about a minute (a linear search per insert and look-up).
  CHECK(s < 20.0);
  CHECK(doc->line_of("/key123") == 124);
}

TEST_CASE("JsonDoc refuses more than kMaxJsonValues values before building any", "[json]") {
  std::string text = "[";
  for (std::size_t i = 0; i < util::kMaxJsonValues / 3 + 10; ++i) text += i ? ",{}" : "{}";
  text += "]";
  auto doc = util::JsonDoc::parse(text, "empties.json");
  REQUIRE_FALSE(doc);
  CHECK(doc.error() ==
        "empties.json:1:2000000: JSON with more than 2000000 values (objects, arrays, strings, numbers)");
  // Just under the bound: accepted.
  std::string ok = "[";
  for (std::size_t i = 0; i < 600000; ++i) ok += i ? ",0" : "0";
  ok += "]";
  CHECK(util::JsonDoc::parse(ok, "zeros.json"));
}

TEST_CASE("util::read_file says why a path cannot be read and never blocks on a pipe", "[json]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("gpuadvisor-read-file-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string missing = (dir / "missing.json").string();
  CHECK(util::read_file(missing).error() == missing + ": cannot open file: no such file or directory");
  CHECK(util::read_file(dir.string()).error() == dir.string() + ": is a directory, expected a file");
  const std::string loop = (dir / "loop.json").string();
  fs::create_symlink(loop, loop);
  CHECK(util::read_file(loop).error() == loop + ": cannot open file: too many levels of symbolic links");
  const std::string plain = (dir / "plain.json").string();
  std::ofstream(plain) << "{}";
  CHECK(util::read_file(plain).value() == "{}");
  // A named pipe whose writer comes after the open: read to its end (the no-writer case waits
  // kPipeTimeoutSeconds and is run by tests/fuzz/hostile_sizes.py).
  const std::string fifo = (dir / "fifo.json").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] {
    std::ofstream out(fifo);  // blocks until read_file has opened the pipe
    out << R"({"a": 1})";
  });
  auto piped = util::read_file(fifo);
  writer.join();
  CHECK(piped.value() == R"({"a": 1})");
  fs::remove_all(dir);
}
