#pragma once
/// Operations knowledge: which CUDA toolkits, drivers and framework releases support an
/// architecture (data/compat.json), what NVIDIA Xid codes mean (data/xid.json) and what common
/// CUDA, cuDNN, NCCL and driver error texts mean (data/errors.json). Loading, lookups, version
/// comparison and the `compat` questions: pure functions returning plain structs.
#include <array>
#include <compare>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/source.h"
#include "gpuadvisor/util/error.h"
#include "gpuadvisor/util/json.h"

namespace gpuadvisor::catalog {

// ---------------------------------------------------------------------------------------------
// Versions

/// A dotted version number: "12.4", "525.60.13", "0.4.12". A leading 'v' and any local or
/// pre-release suffix after '+' or '-' ("2.0.1+cu118") are ignored.
struct Version {
  std::vector<long> parts;
  std::string text;  ///< the numeric part as given ("2.0.1" for "2.0.1+cu118")

  /// The first `n` parts joined with dots, missing parts as 0: "12.4.1" -> "12.4" for n = 2.
  std::string prefix(std::size_t n) const;
};

/// Parses a version; the error says what was expected and quotes the text.
Result<Version> parse_version(std::string_view text);
/// Part by part, a missing part counting as 0: "525.60" < "525.60.13", "12" == "12.0".
std::strong_ordering compare(const Version& a, const Version& b);
inline bool operator<(const Version& a, const Version& b) { return compare(a, b) < 0; }
inline bool operator<=(const Version& a, const Version& b) { return compare(a, b) <= 0; }
inline bool operator>(const Version& a, const Version& b) { return compare(a, b) > 0; }
inline bool operator>=(const Version& a, const Version& b) { return compare(a, b) >= 0; }
inline bool operator==(const Version& a, const Version& b) { return compare(a, b) == 0; }
/// Compares two version strings from the data; throws Error (internal) when one is malformed.
std::strong_ordering compare_versions(std::string_view a, std::string_view b);

// ---------------------------------------------------------------------------------------------
// Compatibility tables (data/compat.json)

enum class Framework { pytorch, tensorflow, jax };
inline constexpr std::array<Framework, 3> kFrameworks = {Framework::pytorch, Framework::tensorflow, Framework::jax};
std::string_view name(Framework f);     ///< "pytorch"
std::string_view display(Framework f);  ///< "PyTorch"
std::optional<Framework> framework_from(std::string_view s);

/// Hardware features of an architecture (Tensor Core precisions and partitioning).
struct ArchFeatures {
  bool tf32 = false, bf16 = false, fp8 = false, fp4 = false, mig = false, structured_sparsity = false,
       transformer_engine = false;
};

/// Prebuilt framework support for an architecture (or one compute capability of it).
struct FrameworkSupport {
  std::optional<std::string> first;      ///< first release whose official builds carry native code
  std::optional<std::string> runs_from;  ///< first release that runs through binary-compatible code
  std::string note;
};

struct ArchCompat {
  std::string id;  ///< matches catalog architecture ids (ampere, hopper, ...)
  std::vector<std::string> compute_capabilities;
  std::string first_cuda;                ///< first toolkit that builds native code (for the first compute capability)
  std::optional<std::string> last_cuda;  ///< last toolkit that still builds for it, if support was dropped
  /// Per compute capability overrides of first_cuda; a null value means "not checked".
  std::map<std::string, std::optional<std::string>> first_cuda_by_cc;
  std::array<FrameworkSupport, 3> frameworks;  ///< indexed by Framework
  /// Per compute capability overrides of FrameworkSupport::first; null means "not checked".
  std::array<std::map<std::string, std::optional<std::string>>, 3> framework_first_by_cc;
  /// Per compute capability overrides of FrameworkSupport::runs_from (10.3 runs the sm_100 code).
  std::array<std::map<std::string, std::optional<std::string>>, 3> framework_runs_from_by_cc;
  /// Per compute capability overrides of FrameworkSupport::note.
  std::array<std::map<std::string, std::string>, 3> framework_note_by_cc;
  ArchFeatures features;
  /// Compute capabilities NVIDIA renumbered, old -> new ({"10.1": "11.0"}: Jetson Thor from CUDA 13.0).
  std::map<std::string, std::string> renumbered_ccs;
  /// Per compute capability feature overrides ({"8.6": {"mig": false}}: GA10x has no MIG).
  std::map<std::string, std::map<std::string, bool>> features_by_cc;
  std::string notes;
  std::vector<Source> sources;
  std::string as_of;
  std::string origin;  ///< "file:line"

  /// Features at `cc` ("" = the architecture's), with the per-CC overrides applied.
  ArchFeatures features_for(const std::string& cc) const;

  /// First CUDA toolkit with native code for `cc` ("" = the architecture's first); nullopt when unknown.
  std::optional<std::string> first_cuda_for(const std::string& cc) const;
  /// Framework support for `cc` ("" = the architecture's), with the per-CC overrides applied.
  FrameworkSupport framework_for(Framework f, const std::string& cc) const;
};

/// One CUDA toolkit release and the drivers it needs (CUDA release notes, Tables 2 and 3).
struct CudaDriver {
  std::string cuda;  ///< "12.4"
  std::string toolkit_release;
  std::optional<std::string> min_driver_linux, min_driver_windows;  ///< Table 3, without ">="
  /// Table 2: the oldest driver that runs this major's applications under minor version compatibility.
  std::optional<std::string> minor_compat_linux, minor_compat_windows;
  std::string notes;
  std::vector<Source> sources;
  std::string as_of;

  const std::optional<std::string>& min_driver(bool windows) const {
    return windows ? min_driver_windows : min_driver_linux;
  }
  const std::optional<std::string>& minor_compat(bool windows) const {
    return windows ? minor_compat_windows : minor_compat_linux;
  }
};

/// One framework release series ("2.0") and the CUDA versions of its official builds.
struct FrameworkRelease {
  Framework framework = Framework::pytorch;
  std::string version;  ///< series, "2.0"
  std::string release;  ///< first release of the series, "2.0.0"
  std::vector<std::string> cuda;
  /// The package of a build, by its CUDA version ({"13.0": "jax-cuda13-plugin"}); may be empty.
  std::map<std::string, std::string> packages;
  std::optional<std::string> cudnn;

  /// The package of the build for `cuda`, or "" when the table does not name it.
  std::string package(const std::string& cuda) const;
  std::string notes;
  std::vector<Source> sources;
};

class CompatTable {
 public:
  /// The embedded data/compat.json, parsed once.
  static const CompatTable& embedded();
  /// Parses a compat document; throws Error naming file, line and field on a schema error.
  static CompatTable parse(const util::JsonDoc& doc);

  const std::vector<ArchCompat>& architectures() const { return archs_; }
  const ArchCompat* arch(std::string_view id) const;
  /// The architecture with this compute capability ("8.6"), if any.
  const ArchCompat* arch_for_cc(std::string_view cc) const;
  const std::vector<CudaDriver>& cuda_releases() const { return cuda_; }
  /// The toolkit row for a version's major.minor ("12.4.1" -> 12.4), if in the table.
  const CudaDriver* cuda(const Version& v) const;
  /// The newest toolkit whose Table 3 driver is at most `driver`; nullptr when none is.
  const CudaDriver* newest_cuda_for_driver(const Version& driver, bool windows) const;
  /// Release series of a framework, oldest first.
  std::vector<const FrameworkRelease*> releases(Framework f) const;
  /// The series a version belongs to ("2.0.1" -> "2.0"), if in the table.
  const FrameworkRelease* release(Framework f, const Version& v) const;

 private:
  std::vector<ArchCompat> archs_;
  std::vector<CudaDriver> cuda_;
  std::vector<FrameworkRelease> releases_;
};

/// A --cuda value: a version that is a toolkit release in the table, or outside the table's range
/// (older or newer toolkits are answered with what the table knows). "12.7" fails: no such release.
Result<Version> parse_cuda_release(const CompatTable& t, std::string_view text);
/// A framework version: a release series in the table ("2.0", "2.0.1"), or outside its range.
Result<Version> parse_framework_release(const CompatTable& t, Framework f, std::string_view text);

/// An architecture and, when asked by compute capability, that capability.
struct ArchRef {
  const ArchCompat* arch = nullptr;
  std::string cc;  ///< "" when asked by name
};
/// An architecture by id ("hopper"), name ("Ada Lovelace") or compute capability ("8.6", "sm_86").
Result<ArchRef> resolve_arch(const CompatTable& t, std::string_view text);

// ---------------------------------------------------------------------------------------------
// The compat questions

/// An answer: yes; limited (works with a restriction); no; unknown (not in the data).
enum class Answer { yes, limited, no, unknown };
std::string_view name(Answer a);

struct CompatQuery {
  std::string gpu_id, gpu_name;  ///< empty when asked by architecture
  Vendor vendor = Vendor::nvidia;
  std::string arch;  ///< architecture id
  std::string cc;    ///< compute capability; "" = the architecture's first
  std::optional<Version> cuda, driver;
  std::optional<Framework> framework;
  std::optional<Version> framework_version;
  bool windows = false;
};

struct CompatCheck {
  std::string id;       ///< "cuda", "driver", "framework", "framework-cuda"
  std::string subject;  ///< "CUDA 11.7", "driver 525.60 for CUDA 12.4", "PyTorch 1.12"
  Answer answer = Answer::unknown;
  std::string detail;  ///< why
  std::string needed;  ///< what would make it work; "" when nothing is needed
};

/// What an architecture (at a compute capability) needs, from the tables.
struct FrameworkSummary {
  Framework framework = Framework::pytorch;
  FrameworkSupport support;
  std::optional<std::string> build_cuda;  ///< CUDA version of the first release's build that works
  std::string build_package;              ///< that build's package ("jax-cuda12-plugin"), "" when not named
};

struct CompatReport {
  CompatQuery query;
  const ArchCompat* arch = nullptr;  ///< nullptr for a GPU of another vendor
  std::string cc;                    ///< the compute capability answered for
  std::optional<std::string> first_cuda;
  const CudaDriver* first_cuda_row = nullptr;  ///< drivers of first_cuda, when in the table
  std::vector<FrameworkSummary> frameworks;
  std::vector<CompatCheck> checks;
  Answer answer = Answer::yes;  ///< the worst answer of the checks (no > unknown > limited > yes)
  std::vector<std::string> needed;
  std::vector<Source> sources;
};

/// Answers the questions in `q` from the tables. Fails (a usage error) for an architecture not in
/// the data, a CUDA version or framework release inside the table's range that is not a release.
Result<CompatReport> evaluate_compat(const CompatTable& table, const CompatQuery& q);

// ---------------------------------------------------------------------------------------------
// Xid codes (data/xid.json)

enum class XidSeverity { info, warning, error, critical };
std::string_view name(XidSeverity s);

/// A part of an Xid line's message that sets that event's severity (Xid 154 states the recovery
/// action: "... to 0x1 (GPU Reset Required)").
struct XidMessageSeverity {
  std::string contains;  ///< matched case-sensitively in the text after the code
  std::string after;     ///< when set, only the text after its last occurrence is searched (" to ")
  XidSeverity severity = XidSeverity::info;
  std::string label;  ///< what the event is called in a log summary ("GPU Reset Required")
};

struct XidInfo {
  int code = 0;
  std::string name, mnemonic, meaning;
  std::vector<std::string> causes, actions;
  XidSeverity severity = XidSeverity::error;
  std::string category;
  std::string immediate_action, investigatory_action;  ///< NVIDIA's catalog columns
  std::string notes;
  std::vector<XidMessageSeverity> message_severity;  ///< first match wins; none: `severity`
  std::vector<Source> sources;
  std::string as_of;
};

/// A driver message without an Xid number that a log scan reports ("NVRM: GPU 0000:01:00.0: GPU
/// has fallen off the bus.").
struct LogMessage {
  std::string id, contains, name, meaning;
  XidSeverity severity = XidSeverity::error;
  std::optional<int> same_as_xid;
  std::vector<Source> sources;
  std::string as_of;
};

class XidTable {
 public:
  static const XidTable& embedded();
  static XidTable parse(const util::JsonDoc& doc);
  const std::vector<XidInfo>& all() const { return xids_; }
  const XidInfo* find(int code) const;
  const std::vector<LogMessage>& log_messages() const { return messages_; }

 private:
  std::vector<XidInfo> xids_;
  std::vector<const XidInfo*> by_code_;  ///< indexed by code, for find()
  std::vector<LogMessage> messages_;
};

// ---------------------------------------------------------------------------------------------
// Error texts (data/errors.json)

struct ErrorPattern {
  std::string id;
  std::vector<std::string> patterns;
  std::string component;  ///< cuda, cudnn, cublas, nccl, pytorch, nvml, docker
  std::string meaning;
  std::vector<std::string> causes, actions;
  std::string notes;
  std::vector<Source> sources;
  std::string as_of;
};

class ErrorTable {
 public:
  static const ErrorTable& embedded();
  static ErrorTable parse(const util::JsonDoc& doc);
  const std::vector<ErrorPattern>& all() const { return errors_; }
  const ErrorPattern* find(std::string_view id) const;
  /// Entries whose id or one of whose patterns occurs in `text` (case and spacing ignored), or
  /// which contain `text` when it is at least 6 characters; best (longest pattern) first.
  std::vector<const ErrorPattern*> match(std::string_view text) const;
  /// Every id and pattern, for suggestions.
  std::vector<std::string> names() const;

 private:
  std::vector<ErrorPattern> errors_;
};

}  // namespace gpuadvisor::catalog
