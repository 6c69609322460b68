#pragma once
/// The data/*.json files, compiled into the binary by cmake/embed.cmake.
#include <optional>
#include <span>
#include <string_view>

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

}  // namespace gpuadvisor::embedded
