#pragma once
/// Scanning kernel logs (dmesg, journalctl -k, /var/log/syslog, /var/log/messages) for the NVIDIA
/// driver's Xid lines, "NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus.", and
/// summarising them by GPU (PCI address) and code, most severe first. Pure: text in, struct out.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/ops.h"
#include "gpuadvisor/util/error.h"

namespace gpuadvisor::rules {

struct XidEvent {
  int line = 0;           ///< 1-based line in the input
  int code = 0;           ///< the Xid number
  std::string pci;        ///< "0000:3b:00", as the driver prints it
  std::string timestamp;  ///< the log's own timestamp text ("[ 8123.456789]" -> "8123.456789"), "" if none
  std::string message;    ///< the text after the code
};

/// All events of one code on one GPU.
struct XidGroup {
  std::string pci;
  int code = 0;
  const catalog::XidInfo* info = nullptr;  ///< nullptr for a code gpuadvisor does not know
  int count = 0;
  int first_line = 0, last_line = 0;
  std::string first_time, last_time;
  std::string sample;  ///< the message of the first event
};

struct XidScan {
  std::string origin;
  std::size_t lines = 0;
  std::vector<XidEvent> events;  ///< in log order
  std::vector<XidGroup> groups;  ///< critical first, then error, unknown, warning, info; then by count
  std::vector<std::string> gpus;  ///< PCI addresses with events, in order of first appearance
  std::size_t critical = 0;       ///< events of critical severity
};

/// Scans log text. Fails with "origin:line: ..." on binary data or an "NVRM: Xid" line whose
/// address or code cannot be read.
Result<XidScan> scan_xid_log(std::string_view text, const std::string& origin, const catalog::XidTable& table);

/// How `scan_xid_log` ranks a group: critical 4, error 3, unknown code 2, warning 1, info 0.
int severity_rank(const catalog::XidInfo* info);

}  // namespace gpuadvisor::rules
