#pragma once
/// Health and acceptance checks from `nvidia-smi --query-gpu=... --format=csv` output: parse the
/// CSV, identify each card in the catalog, evaluate the checks (ECC, retired pages, remapped rows,
/// temperature, clocks throttle reasons, power cap, PCIe link, persistence mode, driver) as
/// PASS/WARN/FAIL items. Pure: text in, structs out; running nvidia-smi is the CLI's business.
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/ops.h"
#include "gpuadvisor/util/error.h"

namespace gpuadvisor::rules {

/// The --query-gpu fields inspect asks for, in order (docs/inspect.md). `level` 0 is the full list;
/// 1 drops temperature.gpu.tlimit (drivers before R530 reject it); 2 also drops remapped_rows.*
/// (drivers before R460): nvidia-smi rejects a whole query that names a field it does not know.
std::vector<std::string_view> smi_query_fields(int level = 0);
inline constexpr int kSmiQueryLevels = 3;

/// One GPU row: its cells (trimmed) in the capture's column order, and the line it came from.
struct SmiRow {
  int line = 0;
  std::vector<std::string> cells;
};

/// At most this many GPU rows in one capture: 1,024 eight-GPU servers captured into one file. A
/// larger capture is refused ("split it by host") rather than reported card by card.
inline constexpr std::size_t kMaxSmiRows = 8192;

/// What nvidia-smi printed: the --query-gpu CSV, the plain table, or the -q report.
enum class SmiShape { csv, table, query };

struct SmiCapture {
  std::string origin;
  SmiShape shape = SmiShape::csv;
  std::vector<std::string> fields;  ///< canonical names in column order ("memory.total", not "memory.total [MiB]")
  std::unordered_map<std::string, std::size_t> column;  ///< field -> its index in `fields` and in each row's cells
  std::vector<SmiRow> rows;
  bool has_header = true;     ///< false: a csv,noheader capture, read as the documented field list
  bool header_units = false;  ///< the header carries units ("memory.total [MiB]"); false for nounits
  /// A capture without a header whose cells are not inspect's field list: the name, memory total,
  /// bus id and driver version were told by their look; the other cells are not read.
  bool guessed_columns = false;

  /// The row's cell for `field`, or nullptr when the capture has no such column.
  const std::string* cell(const SmiRow& row, std::string_view field) const {
    auto it = column.find(std::string(field));
    return it == column.end() ? nullptr : &row.cells[it->second];
  }
};

/// The nvidia-smi command inspect runs (and a capture elsewhere should use).
std::string smi_query_command();

/// Parses nvidia-smi CSV with its header ("name, pci.bus_id, memory.total [MiB], ..."): units in
/// headers and values, "[N/A]" and "[Not Supported]" cells, CRLF line ends, renamed headers
/// (clocks_event_reasons.* for clocks_throttle_reasons.*). Fails with "origin:line: ..." on empty
/// or binary input, a missing header, a header without rows, or a row with the wrong cell count.
/// The plain table and -q text are recognised by their banner and read with the two parsers below.
Result<SmiCapture> parse_smi_csv(std::string_view text, const std::string& origin);

/// nvidia-smi's boxed table (plain `nvidia-smi`): index, name (cut to the column width by older
/// drivers), bus id, persistence, uncorrected volatile ECC, temperature, performance state, power
/// draw and cap, memory total, utilisation, MIG mode; the driver version from the banner.
Result<SmiCapture> parse_smi_table(std::string_view text, const std::string& origin);
/// `nvidia-smi -q`: the fields of inspect's query that the report shows, by their section path
/// ("FB Memory Usage/Total"); ECC counts summed over SRAM and DRAM. Clock event reasons are not read.
Result<SmiCapture> parse_smi_query(std::string_view text, const std::string& origin);
/// "00000000:3B:00.0" or "0000:3b:00.0": a PCI bus id as nvidia-smi prints it.
bool looks_like_bus_id(std::string_view s);
/// "0x268410DE" (nvidia-smi's pci.device_id: device id, then the vendor, NVIDIA's 0x10DE) -> "0x2684";
/// nullopt for anything else.
std::optional<std::string> parse_pci_device_id(std::string_view s);
bool looks_like_smi_table(std::string_view text);
bool looks_like_smi_query(std::string_view text);

enum class Verdict { pass, warn, fail };
std::string_view name(Verdict v);  ///< "PASS", "WARN", "FAIL"

struct InspectItem {
  std::string check;  ///< stable id: ecc-uncorrected, pcie-width, ...
  Verdict verdict = Verdict::pass;
  std::string message;
};

struct CardReport {
  int line = 0;  ///< the row's line in the input
  std::string index, name, pci_bus_id, serial, driver_version, vbios_version;
  std::string pci_device_id;          ///< "0x2684", or empty where the capture has none
  const catalog::Gpu* gpu = nullptr;  ///< the catalog record it was identified as
  std::vector<InspectItem> items;
  Verdict verdict = Verdict::pass;  ///< the worst item
};

struct InspectReport {
  std::string origin;
  std::string input;  ///< what the capture was ("CSV with a header and units"), set by the caller
  std::vector<CardReport> cards;
  std::size_t passes = 0, warnings = 0, failures = 0;
  Verdict verdict = Verdict::pass;
  std::vector<std::string> next_steps;
  std::vector<std::pair<std::string, std::string>> maintenance;  ///< interval, what to do
};

/// The check ids, in the order items are reported (docs/inspect.md documents each).
std::span<const std::string_view> inspect_checks();

/// Evaluates every card. Fails with "origin:line: field 'x': expected ..., got ..." on a cell that
/// cannot be read.
Result<InspectReport> inspect(const SmiCapture& capture, const catalog::Catalog& catalog,
                              const catalog::CompatTable& compat);

}  // namespace gpuadvisor::rules
