#include <catch2/catch.hpp>

#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

using namespace gpuadvisor::util;

TEST_CASE("units::parse_count", "[units]") {
  CHECK(*parse_count("10B") == 10e9);
  CHECK(*parse_count("7b") == 7e9);
  CHECK(*parse_count("350M") == 350e6);
  CHECK(*parse_count("1.5T") == 1.5e12);
  CHECK(*parse_count("175e9") == 175e9);
  CHECK(*parse_count("125k") == 125e3);
  CHECK(*parse_count("7,000,000,000") == 7e9);
  CHECK(*parse_count(" 8B ") == 8e9);
  SECTION("bad input names the expected form and quotes the text") {
    CHECK(parse_count("ten").error() == "expected a count like 10B, 350M, 1.5T or 175e9, got \"ten\"");
    CHECK(parse_count("-5B").error() == "expected a count like 10B, 350M, 1.5T or 175e9, got a negative value \"-5B\"");
    CHECK(!parse_count(""));
    CHECK(!parse_count("nan"));
    CHECK(!parse_count("inf"));
    CHECK(!parse_count("1e400"));
    CHECK(!parse_count("10Q"));
    CHECK(!parse_count("1,00"));
    CHECK(!parse_count("10B extra"));
    CHECK(parse_count("1e30").error() == "\"1e30\" is too large (at most 1,000,000,000,000,000,000)");
  }
}

TEST_CASE("units::parse_bytes", "[units]") {
  CHECK(*parse_bytes("24GB") == 24e9);
  CHECK(*parse_bytes("24GiB") == 24.0 * (1ull << 30));
  CHECK(*parse_bytes("80G") == 80.0 * (1ull << 30));
  CHECK(*parse_bytes("512 MiB") == 512.0 * (1 << 20));
  CHECK(*parse_bytes("1.5TB") == 1.5e12);
  CHECK(*parse_bytes("1024") == 1024);
  CHECK(parse_bytes("24 gigs").error() == "expected a size like 24GB, 24GiB or 80G, got \"24 gigs\"");
  CHECK(!parse_bytes("-1GB"));
}

TEST_CASE("units::parse_money", "[units]") {
  CHECK(*parse_money("3000") == 3000);
  CHECK(*parse_money("$3,000") == 3000);
  CHECK(*parse_money("3k") == 3000);
  CHECK(*parse_money("1.2M") == 1.2e6);
  CHECK(*parse_money("$2.5k") == 2500);
  CHECK(parse_money("three grand").error() ==
        "expected an amount in USD like 3000, $3,000, 3k or 1.2M, got \"three grand\"");
  CHECK(!parse_money("$-5"));
  CHECK(!parse_money("NaN"));
}

TEST_CASE("units::parse_power", "[units]") {
  CHECK(*parse_power("30W") == 30);
  CHECK(*parse_power("0.7kW") == 700);
  CHECK(*parse_power("700") == 700);
  CHECK(parse_power("30 horses").error() == "expected a power like 30W, 0.7kW or 700, got \"30 horses\"");
}

TEST_CASE("units::parse_duration and parse_int", "[units]") {
  CHECK(*parse_duration("24h") == 86400);
  CHECK(*parse_duration("90min") == 5400);
  CHECK(*parse_duration("500ms") == Approx(0.5));
  CHECK(*parse_duration("2w") == 14 * 86400);
  CHECK(!parse_duration("soon"));
  CHECK(*parse_int("8", 1, 1024) == 8);
  CHECK(parse_int("0", 1, 1024).error() == "expected a whole number from 1 to 1024, got \"0\"");
  CHECK(parse_int("2.5", 1, 8).error() == "expected a whole number, got \"2.5\"");
}

TEST_CASE("units::format", "[units]") {
  CHECK(format_bytes(24.0 * (1ull << 30)) == "24.00 GiB");
  CHECK(format_bytes(512.0 * (1 << 20)) == "512.0 MiB");
  CHECK(format_bytes(1000.0 * (1 << 20)) == "0.98 GiB");  // never "1000.0 MiB"
  CHECK(format_bytes(6646889.92 * 0x1p40) == "6.34 EiB");
  CHECK(format_bytes(2000 * 0x1p40) == "1.95 PiB");
  CHECK(format_bytes(999.0 * (1 << 20)) == "999.0 MiB");
  CHECK(format_bytes(1023.0) == "1.0 KiB");
  CHECK(format_count(10e9) == "10B");
  CHECK(format_count(1.5e12) == "1.5T");
  CHECK(format_money(3000) == "$3,000");
  CHECK(format_money(25e6) == "$25.00M");
  CHECK(format_money(57.04) == "$57.04");  // cents below $100
  CHECK(format_money(57) == "$57");
  CHECK(format_money(0.45) == "$0.45");
  CHECK(format_money(1398.4) == "$1,398");
  CHECK(format_number(1008) == "1,008");
  CHECK(format_number(82.58) == "82.6");
  CHECK(format_duration(3 * 86400) == "3.0 days");
  CHECK(format_duration(8 * 365.25 * 86400) == "8.0 years");
}

TEST_CASE("util::LineReader: lines without their ends, numbered from 1", "[text]") {
  gpuadvisor::util::LineReader lines("a\r\n\nb\nlast");
  std::string_view line;
  std::vector<std::pair<int, std::string>> got;
  while (lines.next(line)) got.emplace_back(lines.number(), std::string(line));
  CHECK(got == std::vector<std::pair<int, std::string>>{{1, "a"}, {2, ""}, {3, "b"}, {4, "last"}});
  gpuadvisor::util::LineReader empty("");
  CHECK_FALSE(empty.next(line));
  CHECK(empty.number() == 0);
}
