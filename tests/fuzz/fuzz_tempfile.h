#pragma once
// read_model_file and --model-config take a path: the targets that need one write each input to a
// file in a per-process temporary folder (removed at exit).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gpuadvisor::fuzz {

inline const std::filesystem::path& temp_dir() {
  static const std::filesystem::path dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpuadvisor-fuzz-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(temp_dir(), ec);
    });
    return std::filesystem::path(tmpl);
  }();
  return dir;
}

/// Writes `data` to <temp dir>/<name> (replacing it) and returns the path.
inline std::string write_temp(const std::string& name, const std::uint8_t* data, std::size_t size) {
  auto path = temp_dir() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::perror("write_temp");
    std::abort();
  }
  return path.string();
}

}  // namespace gpuadvisor::fuzz
