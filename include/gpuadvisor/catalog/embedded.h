#pragma once
/// The data/*.json files, compiled into the binary by cmake/embed.cmake, and the snapshots of
/// the records parsed from them, made at build time by gpuadvisor_snapshot (src/snapshot_main.cpp).
#include <optional>
#include <span>
#include <string_view>

#include "gpuadvisor/util/json.h"

namespace gpuadvisor::embedded {

struct File {
  std::string_view name;  ///< file name, e.g. "gpus.json"
  std::string_view text;
};

std::span<const File> files();

/// The text of an embedded file by name, or nothing.
inline std::optional<std::string_view> find(std::string_view name) {
  for (const auto& f : files())
    if (f.name == name) return f.text;
  return std::nullopt;
}

/// An embedded file parsed, named "<embedded>/NAME" in messages; an internal error if it is not
/// there or not JSON.
util::JsonDoc doc(std::string_view name);

/// The records of an embedded file ("gpus.json") as parsed at build time from that file by the
/// same code that parses it at run time, in util::serial form: loading them skips the JSON. Empty
/// in the program that makes the snapshots (and in the fuzz build, which parses the JSON).
std::optional<std::string_view> snapshot(std::string_view name);

}  // namespace gpuadvisor::embedded
