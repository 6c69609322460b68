#pragma once
// Runs a gpuadvisor command in-process and captures stdout, stderr and the exit code.
#include <sstream>
#include <string>
#include <vector>

#include "gpuadvisor/cli/cli.h"

namespace gpuadvisor::test {

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

inline CliResult run_cli(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = cli::run(args, out, err);
  return {code, out.str(), err.str()};
}

inline std::string source_path(const std::string& rel) { return std::string(GPUADVISOR_SOURCE_DIR) + "/" + rel; }

}  // namespace gpuadvisor::test
