#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "cli_fixture.h"
#include "gpuadvisor/report/html.h"
#include "gpuadvisor/report/output.h"
#include "gpuadvisor/util/text.h"

using namespace gpuadvisor;

TEST_CASE("util::escape_controls: C0 as \\xNN, DEL and C1 as \\u00NN, the rest unchanged", "[output]") {
  CHECK(util::escape_controls("Clear \x1b[2J GPU") == "Clear \\x1b[2J GPU");
  CHECK(util::escape_controls("a\nb\tc\rd\x7f\x07") == "a\\x0ab\\x09c\\x0dd\\u007f\\x07");
  CHECK(util::escape_controls("CSI \xC2\x9B"
                              "2J") == "CSI \\u009b2J");
  CHECK(util::escape_controls("RTX 4090 \xC3\x97 2 \xE2\x80\x94 \xC2\xA0") ==
        "RTX 4090 \xC3\x97 2 \xE2\x80\x94 \xC2\xA0");
  CHECK(util::escape_controls("keep\nthis", "\n") == "keep\nthis");
  CHECK(util::has_control("x\x1b"));
  CHECK(util::has_control("\xC2\x85"));
  CHECK_FALSE(util::has_control("H100 SXM \xC2\xB1"));
  // Error lines and quoted values show control bytes the same way.
  CHECK(util::quote("a\x1b"
                    "b") == "\"a\\x1bb\"");
}

TEST_CASE("report::safe_text and SafeStreambuf: no raw control byte from input reaches the output", "[output]") {
  CHECK(report::safe_text("Title \x1b]0;owned\x07 GPU") == "Title \\x1b]0;owned\\x07 GPU");
  CHECK(report::safe_text("two\nlines") == "two\\x0alines");

  auto through = [](std::initializer_list<std::string_view> writes, std::size_t hold) {
    std::ostringstream dest;
    {
      report::SafeStreambuf buf(dest.rdbuf(), hold);
      std::ostream os(&buf);
      for (auto w : writes) os << w;
    }
    return dest.str();
  };
  CHECK(through({"Fits on Clear \x1b[2J GPU\n", "next line\n"}, 0) == "Fits on Clear \\x1b[2J GPU\nnext line\n");
  CHECK(through({"a\x1b", "[2J\n"}, 0) == "a\\x1b[2J\n");
  CHECK(through({"C1 \xC2",
                 "\x9B"
                 "2J\n"},
                0) == "C1 \\u009b2J\n");
  // JSON strings may hold DEL and C1 raw; their escapes keep the JSON valid.
  CHECK(through({"{\"name\": \"a\x7f\xC2\x85\"}\n"}, 0) == "{\"name\": \"a\\u007f\\u0085\"}\n");
  CHECK(through({"ends in ESC \x1b"}, 1 << 14) == "ends in ESC \\x1b");

  SECTION("gpuadvisor's own colours pass, whole or split across writes; input cannot spell them") {
    report::Style colour;
    colour.color = true;
    const std::string bad = colour.bad("Does not fit");
    CHECK(through({bad, "\n"}, 0) == "\x1b[31mDoes not fit\x1b[0m\n");
    CHECK(through({bad.substr(0, 5), bad.substr(5), "\n"}, 0) == "\x1b[31mDoes not fit\x1b[0m\n");
    // Cells keep the mark until the stream: widths do not count it.
    CHECK(report::display_width(report::safe_text(bad)) == 12);
    CHECK(through({"\x1b[31mred\x1b[0m\n"}, 0) == "\\x1b[31mred\\x1b[0m\n");
  }
}

TEST_CASE("report::Table: hostile cells escaped in every format, CSV formulas neutralised", "[output]") {
  report::Style plain;
  plain.color = false;
  report::Table t({{"id"}, {"name"}, {"value", report::Align::right}});
  t.add({"hostile-clear", "Clear \x1b[2J GPU", "-1.5"});
  t.add({"hostile-formula", "=HYPERLINK(\"http://x\",\"y\")", "+3"});
  t.add({"hostile-at", "@SUM(A1)", "-"});
  t.add({"hostile-script", "<script>alert(1)</script> | x", "2.5e-05"});
  t.add({"hostile-minus", "-2+3", "-inf"});

  SECTION("text: escaped, aligned by what is shown") {
    const std::string text = t.render(report::Format::table, plain);
    CHECK(text.find("Clear \\x1b[2J GPU") != std::string::npos);
    CHECK(text.find('\x1b') == std::string::npos);
  }
  SECTION("csv: text cells that start with = + - @ get a leading quote, numbers and a lone - do not") {
    const std::string csv = t.render(report::Format::csv, plain);
    CHECK(csv ==
          "id,name,value\n"
          "hostile-clear,Clear \\x1b[2J GPU,-1.5\n"
          "hostile-formula,\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",+3\n"
          "hostile-at,'@SUM(A1),-\n"
          "hostile-script,<script>alert(1)</script> | x,2.5e-05\n"
          "hostile-minus,'-2+3,'-inf\n");
  }
  SECTION("markdown: no HTML tag passes, pipes escaped, autolinks kept") {
    const std::string md = t.render(report::Format::markdown, plain);
    CHECK(md.find("<script>") == std::string::npos);
    CHECK(md.find("&lt;script>alert(1)&lt;/script> \\| x") != std::string::npos);
    report::Table links({{"source"}});
    links.add({"NVIDIA datasheet <https://www.nvidia.com/a|b.pdf>"});
    CHECK(links.render(report::Format::markdown, plain) ==
          "| source |\n| --- |\n| NVIDIA datasheet <https://www.nvidia.com/a\\|b.pdf> |\n");
  }
  SECTION("markdown running text: < escaped once, autolinks kept") {
    const std::string once = report::markdown_text("Model <script>x</script> <https://example.org/a>");
    CHECK(once == "Model &lt;script>x&lt;/script> <https://example.org/a>");
    CHECK(report::markdown_text(once) == once);
    const std::string md = t.render(report::Format::markdown, plain);
    CHECK(report::markdown_text(md) == md);
  }
  SECTION("html: escaped text, no control byte") {
    CHECK(report::html::escape("<b>\x1b[2J</b>") == "&lt;b&gt;\\x1b[2J&lt;/b&gt;");
  }
}

TEST_CASE("verbose: -v traces the reasoning on stderr, -vv the arithmetic; silent by default", "[output][verbose]") {
  const std::vector<std::string> base = {"memory", "--model", "llama-3.1-8b", "--task", "qlora", "--gpu", "rtx-4090"};
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_cli(args);
  };
  const auto quiet = with({});
  const auto v = with({"-v"});
  const auto vv = with({"-vv"});
  CHECK(quiet.err.empty());
  // The answer is the same; only stderr grows.
  CHECK(v.out == quiet.out);
  CHECK(vv.out == quiet.out);
  CHECK(v.code == quiet.code);
  CHECK(v.err.find(
            "gpuadvisor: debug: layout: 1 GPU of rtx-4090: tensor parallel 1, pipeline 1, data parallel 1, ZeRO 0, "
            "checkpointing full\n") != std::string::npos);
  CHECK(v.err.find("gpuadvisor: debug: memory: ") != std::string::npos);
  CHECK(v.err.find("trace:") == std::string::npos);
  CHECK(vv.err.find("gpuadvisor: trace: memory line weights: ") != std::string::npos);

  const auto rec = test::run_cli({"recommend", "--model", "10B", "--budget", "3000", "-v"});
  CHECK(rec.err.find("gpuadvisor: debug: recommend: ") != std::string::npos);
  CHECK(rec.err.find("gpuadvisor: debug: plan 1: ") != std::string::npos);
  CHECK(rec.err.find("failed constraints (a candidate may fail several): ") != std::string::npos);
  const auto q = test::run_cli({"recommend", "--model", "10B", "--budget", "3000", "-q"});
  CHECK(q.err.empty());
}
