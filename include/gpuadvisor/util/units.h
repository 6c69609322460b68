#pragma once
/// The one units parser and formatter. Parsers accept what people type and return a Result whose
/// error names the expected form and quotes the bad text; callers prefix the flag or field.
///
/// Conventions (docs/units.md):
/// - counts (parameters, tokens): 10B, 7b, 350M, 1.5T, 125k, 175e9, 7,000,000,000
/// - bytes: SI units are decimal (24GB = 24e9), IEC units binary (24GiB = 24 x 2^30); a bare
///   K/M/G/T is binary, as nvidia-smi and `ls -h` print it (80G = 80 GiB); no unit = bytes
/// - money (USD): 3000, $3,000, 3k, 1.2M, 2.5B
/// - power: 30W, 0.7kW, 700 (watts)
/// - durations: 3600, 3600s, 90min, 24h, 30d, 2w, 1.5y
#include <string>
#include <string_view>

#include "gpuadvisor/util/error.h"

namespace gpuadvisor::util {

Result<double> parse_count(std::string_view text);
Result<double> parse_bytes(std::string_view text);
Result<double> parse_money(std::string_view text);
Result<double> parse_power(std::string_view text);
Result<double> parse_duration(std::string_view text);
/// A plain number with optional fraction/exponent; rejects NaN, infinities, trailing text.
Result<double> parse_number(std::string_view text);
/// An integer in [lo, hi].
Result<long long> parse_int(std::string_view text, long long lo, long long hi);

/// "20.0 GiB", "512 MiB"; binary units, as GPU memory is sold.
std::string format_bytes(double bytes);
/// "10.0B", "350M", "1.5T"
std::string format_count(double n);
/// "$3,000", "$1.25M"
std::string format_money(double usd);
/// Dollars and cents with thousands separators: "$0.45", "$1,832.96" (hourly rates, where cents matter).
std::string format_cents(double usd);
/// An hourly rate: "$2.69/h", "$1,832.96/h".
std::string format_rate(double usd_per_hour);
/// "7.9 years", "3.2 days", "5.4 h", "12 min", "40 s"
std::string format_duration(double seconds);
/// Three significant digits with thousands grouping where large: "1,008", "82.6", "0.125".
std::string format_number(double v);
/// A whole number with thousands grouping: "8", "1,144".
std::string format_int(long long n);

}  // namespace gpuadvisor::util
