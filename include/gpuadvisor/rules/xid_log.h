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

/// All events of one code (or Xid-less message) and one effective severity on one GPU.
struct XidGroup {
  std::string pci;
  int code = 0;                                      ///< 0 for an Xid-less message
  const catalog::XidInfo* info = nullptr;            ///< nullptr for a code gpuadvisor does not know
  const catalog::LogMessage* log_message = nullptr;  ///< set when code is 0
  std::optional<catalog::XidSeverity> severity;      ///< the events' severity; nullopt: unknown code
  std::string label;                                 ///< the message part that set the severity ("GPU Reset Required")
  int count = 0;
  int first_line = 0, last_line = 0;
  std::string first_time, last_time;
  std::string sample;  ///< the message of the first event
};

/// A line the scan skipped: an "NVRM: Xid" line that is cut off or malformed.
struct XidWarning {
  int line = 0;
  std::string what;
};

struct XidScan {
  std::string origin;
  std::vector<XidWarning> warnings;  ///< skipped lines and unreadable addresses, in log order
  std::size_t lines = 0;
  std::size_t events = 0;           ///< Xid lines and Xid-less driver messages read
  std::size_t warnings_total = 0;   ///< skipped lines (the first 100 are in `warnings`)
  std::vector<XidGroup> groups;     ///< critical first, then error, unknown, warning, info; then by count
  std::vector<std::string> gpus;    ///< PCI addresses with events, in order of first appearance
  std::size_t critical = 0;         ///< events of critical severity (Xid 154 by the action it states)
  std::size_t unlisted_events = 0;  ///< events past the 10,000th GPU-and-code group: counted, not grouped
};

/// Scans log text. Fails with "origin:line: ..." on binary data; an "NVRM: Xid" line whose address
/// or code cannot be read is a warning and the scan goes on. Linear in the input (hashed grouping).
Result<XidScan> scan_xid_log(std::string_view text, const std::string& origin, const catalog::XidTable& table);

/// How `scan_xid_log` ranks a group: critical 4, error 3, unknown code 2, warning 1, info 0.
int severity_rank(std::optional<catalog::XidSeverity> s);

/// "0000:3b:00.0", "00000000:3B:00.0", "3b:00.0", "PCI:0000:3b:00" -> "0000:3b:00"; "" when the text
/// is not a PCI address.
std::string normalise_pci(std::string_view text);

/// The log's own timestamp in the text before the message: dmesg ("[ 8123.456789]"), dmesg -T,
/// --time-format iso, journalctl (short, short-iso, short-precise, short-full, short-unix,
/// short-monotonic), syslog (RFC 3164 with or without "<pri>", RFC 5424), /dev/kmsg
/// ("4,1234,8123456789,-;"). "" when there is none.
std::string log_timestamp(std::string_view before);

}  // namespace gpuadvisor::rules
