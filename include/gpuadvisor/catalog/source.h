#pragma once
/// Where a number came from: every record in data/ carries sources and an as-of date.
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/util/json.h"
#include "gpuadvisor/util/serial.h"

namespace gpuadvisor::catalog {

struct Source {
  std::string title;
  std::string url;                  ///< may be empty when the source is a paper or repository path
  std::vector<std::string> fields;  ///< the fields it backs; empty = the whole record

  bool operator==(const Source&) const = default;
};

template <class Ar, util::serial::Of<Source> T>
void fields(Ar& ar, T& s) {
  ar(s.title, s.url, s.fields);
}

/// Reads `key` (an array of source objects) from a record. Missing or empty yields an empty list;
/// the validator reports it.
std::vector<Source> read_sources(const util::Fields& f, const std::string& key = "sources");
Source read_source(const util::Fields& f, const std::string& key);
util::Json sources_json(const std::vector<Source>& sources);
util::Json source_json(const Source& s);

/// A date as written in data ("2024-05" or "2024-05-17") in months since year 0; nullopt if
/// malformed.
std::optional<int> months_of(const std::string& date);

/// When a price dated `as_of` is more than 12 months before `today` (a year alone counts from its
/// January; an undated price is old too): "street price $1,623 from 2024-09"; else nullopt.
std::optional<std::string> stale_price(std::string_view what, double usd, const std::string& as_of,
                                       const std::string& today);

}  // namespace gpuadvisor::catalog
