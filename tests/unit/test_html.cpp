#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <regex>
#include <sstream>

#include "cli_fixture.h"
#include "gpuadvisor/report/html.h"

using namespace gpuadvisor;
namespace html = report::html;

namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

const std::string kEvil = R"(<script>alert("x")</script> & 'Co' 7B)";
const std::string kEscaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;Co&#39; 7B";

}  // namespace

TEST_CASE("report::html::escape", "[html]") {
  CHECK(html::escape(kEvil) == kEscaped);
  CHECK(html::escape("plain text, 24 GiB") == "plain text, 24 GiB");
  CHECK(html::escape("") == "");
  CHECK(html::escape("&amp;") == "&amp;amp;");
}

TEST_CASE("report::html: a model name from a user file is escaped everywhere on the page", "[html]") {
  const auto models = test::source_path("tests/fixtures/html/models-evil.json");
  const std::vector<std::vector<std::string>> commands = {
      {"memory", "--models", models, "--model", "evil-7b", "--task", "qlora", "--gpu", "rtx-4090", "--format", "html"},
      {"recommend", "--models", models, "--model", "evil-7b", "--budget", "5000", "--format", "html"},
      {"compare", "rtx-4090", "a100-80gb-sxm", "--models", models, "--model", "evil-7b", "--format", "html"},
      {"cost", "--models", models, "--model", "evil-7b", "--gpu", "rtx-4090", "--hours", "100", "--format", "html"},
  };
  for (const auto& args : commands) {
    INFO(args.front());
    auto r = test::run_cli(args);
    CHECK((r.code == 0 || r.code == 1));
    CHECK(r.err.empty());
    CHECK(r.out.find("<script") == std::string::npos);
    CHECK(r.out.find("'Co'") == std::string::npos);
    CHECK(r.out.find(kEscaped) != std::string::npos);
    CHECK(r.out.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(r.out.find("</html>\n") == r.out.size() - 8);
  }
}

TEST_CASE("report::html::nice_ticks", "[html]") {
  CHECK(html::nice_ticks(0, 100) == std::vector<double>{0, 20, 40, 60, 80, 100});
  CHECK(html::nice_ticks(0, 73) == std::vector<double>{0, 20, 40, 60, 80});
  CHECK(html::nice_ticks(0, 9.3) == std::vector<double>{0, 2, 4, 6, 8, 10});
  CHECK(html::nice_ticks(0, 0.34) == std::vector<double>{0, 0.1, 0.2, 0.3, 0.4});
  CHECK(html::nice_ticks(1200, 41000) == std::vector<double>{0, 10000, 20000, 30000, 40000, 50000});
  SECTION("the ticks cover the range") {
    for (double hi : {0.7, 3.0, 17.0, 123.0, 5e6}) {
      auto t = html::nice_ticks(0, hi);
      CHECK(t.front() <= 0);
      CHECK(t.back() >= hi);
      CHECK(t.size() >= 3);
      CHECK(t.size() <= 11);
    }
  }
  SECTION("an empty range still gives an axis") {
    auto t = html::nice_ticks(5, 5);
    CHECK(t.size() >= 2);
    CHECK(t.front() <= 5);
    CHECK(t.back() >= 10);
  }
}

TEST_CASE("report::html: log axis for a wide price range", "[html]") {
  CHECK(html::log_ticks(300, 250000) == std::vector<double>{100, 1000, 10000, 100000, 1000000});
  CHECK(html::log_ticks(600, 40000) == std::vector<double>{500, 1000, 2000, 5000, 10000, 20000, 50000});
  auto money = [](double v) { return html::short_money(v); };
  SECTION("a range of 20x or more is drawn on a log scale") {
    auto ax = html::make_axis(600, 240000, 0, 100, true, "Price (USD)", money);
    CHECK(ax.scale.log);
    CHECK(ax.scale(1000) ==
          Approx(0 + 100 * (3 - std::log10(ax.scale.lo)) / (std::log10(ax.scale.hi) - std::log10(ax.scale.lo))));
    CHECK(ax.scale(ax.ticks.front()) == Approx(0));
    CHECK(ax.scale(ax.ticks.back()) == Approx(100));
  }
  SECTION("a narrow range stays linear and starts at zero") {
    auto ax = html::make_axis(1500, 9000, 0, 100, true, "Price (USD)", money);
    CHECK_FALSE(ax.scale.log);
    CHECK(ax.ticks.front() == 0);
    CHECK(ax.scale(ax.ticks.back()) == Approx(100));
  }
  CHECK(html::short_money(800) == "$800");
  CHECK(html::short_money(0.5) == "$0.5");
  CHECK(html::short_money(2.25) == "$2.25");
  CHECK(html::short_money(1500) == "$1.5k");
  CHECK(html::short_money(20000) == "$20k");
  CHECK(html::short_money(1.2e6) == "$1.2M");
}

TEST_CASE("report::html: charts", "[html]") {
  SECTION("scatter: one circle per point, the front as a step path, the axis labels") {
    html::Scatter s;
    s.title = "t";
    s.x_label = "Price (USD)";
    s.y_label = "Speed (tokens/s)";
    s.x_format = html::short_money;
    s.y_format = [](double v) { return html::num(v); };
    s.points = {{700, 10, "1. a", "a", 1}, {1500, 30, "2. b", "b", 2}, {9000, 35, "", "c", 0}, {3000, 5, "", "d", 0}};
    s.front = {0, 1, 2};
    auto svg = html::scatter(s);
    CHECK(count(svg, "<circle ") == 4 + 3);  // the plans and the three legend marks
    CHECK(count(svg, R"(class="plan)") == 4);
    CHECK(count(svg, R"(class="plan best front")") == 1);
    CHECK(std::regex_search(
        svg,
        std::regex(R"re(<path d="M[0-9.]+ [0-9.]+ H[0-9.]+ V[0-9.]+ H[0-9.]+ V[0-9.]+ H[0-9.]+" class="pareto"/>)re")));
    CHECK(svg.find(">Price (USD)") != std::string::npos);
    CHECK(svg.find(">Speed (tokens/s)</text>") != std::string::npos);
    CHECK(svg.find(">1. a</text>") != std::string::npos);
  }
  SECTION("stacked bar: a segment and a legend entry per line, markers") {
    auto svg =
        html::stacked_bar({{"weights", 75, "75 B", false}, {"<kv>", 25, "25 B", false}}, "m", {{120, "capacity"}});
    CHECK(count(svg, R"(class="segment")") == 2);
    CHECK(count(svg, R"(class="swatch")") == 2);
    CHECK(svg.find("&lt;kv&gt;: 25 B, 25.0%") != std::string::npos);
    CHECK(svg.find(R"(class="marker")") != std::string::npos);
  }
  SECTION("bar chart: the best is marked") {
    auto svg = html::bar_chart({{"a", 2, "2.0", false}, {"b", 4, "4.0", true}}, "TFLOPS per W", "higher is better");
    CHECK(count(svg, R"(class="bar")") == 1);
    CHECK(count(svg, R"(class="bar best")") == 1);
    CHECK(svg.find("4.0 (best)") != std::string::npos);
  }
}

TEST_CASE("report::html: --format html only where a page is defined", "[html]") {
  auto r = test::run_cli({"estimate", "--model", "7B", "--gpu", "rtx-4090", "--format", "html"});
  CHECK(r.code == 2);
  CHECK(r.err.find("--format: expected one of table, json, csv, markdown, got \"html\"") != std::string::npos);
  auto ok = test::run_cli({"memory", "--model", "7B", "--format", "html"});
  CHECK(ok.code == 0);
  CHECK(ok.out.find("<svg") != std::string::npos);
  auto none = test::run_cli(
      {"recommend", "--model", "llama-3.1-70b", "--task", "train", "--budget", "3000", "--format", "html"});
  CHECK(none.code == 1);
  CHECK(none.out.find("Nothing fits") != std::string::npos);
}

TEST_CASE("report::Style: locale, ASCII override and width", "[style]") {
  auto detect = [](std::map<std::string, std::string> env, bool tty = false, int cols = 0) {
    return report::Style::detect(
        [&](const char* name) -> const char* {
          auto it = env.find(name);
          return it == env.end() ? nullptr : it->second.c_str();
        },
        tty, cols);
  };
  CHECK_FALSE(detect({}).unicode);
  CHECK(detect({{"LANG", "en_US.UTF-8"}}).unicode);
  CHECK(detect({{"LC_CTYPE", "de_DE.utf8"}}).unicode);
  CHECK_FALSE(detect({{"LC_ALL", "C"}, {"LANG", "en_US.UTF-8"}}).unicode);
  CHECK(detect({{"LC_ALL", "C.UTF-8"}, {"LANG", "C"}}).unicode);
  CHECK_FALSE(detect({{"LC_ALL", "C.UTF-8"}, {"GPUADVISOR_ASCII", "1"}}).unicode);
  CHECK(detect({{"LC_ALL", "C.UTF-8"}, {"GPUADVISOR_ASCII", "0"}}).unicode);
  CHECK(detect({}).width == 100);
  CHECK(detect({{"COLUMNS", "60"}}).width == 60);
  CHECK(detect({}, true, 132).width == 132);
  CHECK(detect({{"COLUMNS", "80"}}, true, 132).width == 80);
  CHECK(detect({}, false, 132).width == 100);
  CHECK(detect({}, true, 0).width == 100);
}

TEST_CASE("report::wrap_prose_line: running text hangs under its item, its value or its indent", "[output]") {
  using report::wrap_prose_line;
  CHECK(wrap_prose_line("short enough", 20) == "short enough");
  // A list item continues under its text.
  CHECK(wrap_prose_line("  - task: inference (set --task train for training)", 30) ==
        "  - task: inference (set\n    --task train for training)");
  // A key/value line continues under its value.
  CHECK(wrap_prose_line("Driver  570.26 or newer on Linux, 570.65 on Windows", 34) ==
        "Driver  570.26 or newer on Linux,\n        570.65 on Windows");
  CHECK(wrap_prose_line("Also matches  a100-40gb-pcie, a100-40gb-sxm, a100-80gb-pcie", 46) ==
        "Also matches  a100-40gb-pcie, a100-40gb-sxm,\n              a100-80gb-pcie");
  // Plain text continues two spaces in.
  CHECK(wrap_prose_line("dense decoder, 10B parameters, inference, batch 1", 30) ==
        "dense decoder, 10B parameters,\n  inference, batch 1");
  // A word longer than the room (a URL) is kept whole on its own line, never cut.
  const std::string url = "<https://example.com/a/very/long/path/that/does/not/fit>";
  CHECK(wrap_prose_line("  - see " + url, 30) == "  - see\n    " + url);
  // A number keeps its unit on its line.
  CHECK(wrap_prose_line("  - the KV cache 2.34 GiB", 24) == "  - the KV cache\n    2.34 GiB");
  // A diagnostic stays one line, for the editors and CI that read FILE:LINE: from it.
  const std::string diag = "spec.json:12: warning: the quote is 131% above the used-market price";
  CHECK(wrap_prose_line(diag, 30) == diag);
}

TEST_CASE("report::SafeStreambuf::wrap_lines wraps whole lines, also across writes", "[output]") {
  std::ostringstream dest;
  {
    report::SafeStreambuf buf(dest.rdbuf(), 4);
    std::ostream os(&buf);
    os << "fits\n";
    buf.wrap_lines(26);
    os << "  - one two three ";
    os << "four five six\nlast";
  }
  CHECK(dest.str() == "fits\n  - one two three four\n    five six\nlast");
}

TEST_CASE("report: ASCII fallbacks and fitting a table to the width", "[style]") {
  report::Style ascii{false, false, 100};
  report::Style utf{false, true, 100};
  CHECK(report::ascii("2 \u00d7 A100 \u2265 80 GB \u2014 ok\u2026 \u2192 \u2500\u2502\u250c \u2588") ==
        "2 x A100 >= 80 GB -- ok... -> -|+ #");
  CHECK(report::ascii("caf\xc3\xa9") == "caf?");
  CHECK(report::bar(0.5, 10, ascii) == "#####");
  CHECK(report::truncate("abcdefghij", 6, ascii) == "abc...");
  CHECK(report::truncate("abcdefghij", 6, utf) == "abcde\u2026");
  CHECK(report::wrap("one two three four", 9, utf) == std::vector<std::string>{"one two", "three", "four"});

  report::Table t({{"#", report::Align::right}, {"GPU"}, {"Why"}});
  t.add({"1", "rtx-4090", "a long reason that goes on and on about memory and speed"});
  t.add({"2", "a100", "short"});
  SECTION("fits: unchanged") {
    CHECK(t.render(report::Format::table, utf) ==
          "#  GPU       Why\n1  rtx-4090  a long reason that goes on and on about memory and speed\n2  a100      "
          "short\n");
  }
  SECTION("wraps the free-text column in place") {
    report::Style narrow{false, true, 40};
    CHECK(t.render(report::Format::table, narrow) ==
          "#  GPU       Why\n1  rtx-4090  a long reason that goes on\n             and on about memory and\n           "
          "  speed\n2  a100      short\n");
  }
  SECTION("too narrow to wrap: the free-text column under each row") {
    report::Style narrow{false, false, 20};
    auto out = t.render(report::Format::table, narrow);
    INFO(out);
    CHECK(out.rfind("#  GPU\n1  rtx-4090\n   Why: a long reason\n        that goes on and\n", 0) == 0);
    CHECK(out.find("\n2  a100\n   Why: short\n") != std::string::npos);
  }
  SECTION("narrower still: each row a block") {
    report::Style tiny{false, false, 10};
    auto out = t.render(report::Format::table, tiny);
    CHECK(out.rfind("# 1\n  GPU  rtx-4090\n  Why  a long reason\n       that goes on and\n", 0) == 0);
  }
  SECTION("CSV and markdown are never cut") {
    report::Style narrow{false, true, 40};
    CHECK(t.render(report::Format::csv, narrow).find("on and on about memory and speed\n") != std::string::npos);
    CHECK(t.render(report::Format::markdown, narrow).find("on and on about memory and speed |") != std::string::npos);
  }
}

TEST_CASE("report::html: a wide table puts its running-text column under each row", "[html]") {
  auto table = [](std::size_t ncols) {
    std::vector<report::Column> cols;
    for (std::size_t i = 0; i + 1 < ncols; ++i) cols.push_back({"c" + std::to_string(i), report::Align::right});
    cols.push_back({"Why"});
    report::Table t(cols);
    std::vector<std::string> row(ncols, "1");
    row.back() = "a reason longer than thirty-two characters, <escaped>";
    t.add(row);
    return t;
  };
  const std::string wide = report::html::Page("t", "s").table(table(10)).str("f");
  CHECK(wide.find("<tr class=\"more\"><td></td><td colspan=\"8\">Why: a reason longer than thirty-two characters, "
                  "&lt;escaped&gt;</td></tr>") != std::string::npos);
  CHECK(wide.find("<th>Why</th>") == std::string::npos);
  const std::string narrow = report::html::Page("t", "s").table(table(9)).str("f");
  CHECK(narrow.find("class=\"more\"") == std::string::npos);
  CHECK(narrow.find("<th>Why</th>") != std::string::npos);
}
