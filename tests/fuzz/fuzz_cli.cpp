// The command line: the input, split on NUL bytes, is the argument vector of an in-process
// cli::run with string streams. It must never crash, hang or exit with anything but 0, 1 or 2
// (3 is an internal error: a bug). Standard input is /dev/null; paths under /dev, /proc and /sys
// are skipped (reading a character device is not a parser question; see docs/fuzzing.md).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "gpuadvisor/cli/cli.h"

using namespace gpuadvisor;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (!std::freopen("/dev/null", "r", stdin)) std::abort();
  setenv("NO_COLOR", "1", 1);
  setenv("COLUMNS", "100", 1);
  setenv("GPUADVISOR_TODAY", "2026-11-29", 1);
  unsetenv("GPUADVISOR_CATALOG");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args;
  std::string cur;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(data[i]));
    }
  }
  if (!cur.empty() || args.empty()) args.push_back(cur);
  if (args.size() > 64) return -1;  // not a command line anyone types; keeps runs short
  for (const auto& a : args) {
    for (const char* dev : {"/dev/", "/proc/", "/sys/"})
      if (a.find(dev) != std::string::npos) return -1;
  }
  std::ostringstream out, err;
  int code = 3;
  try {
    code = cli::run(args, out, err);
  } catch (const std::exception& e) {
    fuzz::finding(std::string("exception escaped cli::run: ") + e.what());
  } catch (...) {
    fuzz::finding("non-std exception escaped cli::run");
  }
  if (code != 0 && code != 1 && code != 2)
    fuzz::finding("exit code " + std::to_string(code) + "; stderr:\n" + err.str());
  if (code == 2 && err.str().empty()) fuzz::finding("exit code 2 without a message on stderr");
  return 0;
}
