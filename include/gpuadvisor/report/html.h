#pragma once
/// The `--format html` renderer: one self-contained page (inline CSS and SVG; no scripts, nothing
/// fetched), built from escaped text, tables and charts. Pure: the charts draw what they are
/// given; what to draw is decided by the command (docs/html-report.md).
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuadvisor/report/output.h"

namespace gpuadvisor::report::html {

/// Escapes & < > " ' so that any text is safe in element content and in attribute values, with
/// control bytes shown as \xNN (safe_text).
std::string escape(std::string_view s);

/// A coordinate or length for SVG: at most one decimal, no "-0".
std::string num(double v);

/// Ticks at a "nice" step (1, 2 or 5 x 10^k) covering [lo, hi] in about `target` steps; the first
/// tick is at or below lo and the last at or above hi.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);
/// Ticks for a log axis covering [lo, hi] (lo > 0): the powers of ten from the one at or below lo
/// to the one at or above hi, with 2 and 5 times each when the range spans at most two decades.
std::vector<double> log_ticks(double lo, double hi);

/// Maps a value in [lo, hi] to pixels [a, b], linearly or on a log scale.
struct Scale {
  double lo = 0, hi = 1;
  double a = 0, b = 1;
  bool log = false;
  double operator()(double v) const;
};

/// An axis: its scale over the tick range, the ticks and how to label them.
struct Axis {
  Scale scale;
  std::vector<double> ticks;
  std::string label;
  std::function<std::string(double)> format;
};
/// A linear axis from nice ticks over [lo, hi]; or, when `allow_log` and hi / lo >= 20 (a wide
/// range, as prices from a used card to an 8-GPU server), a log axis.
Axis make_axis(double lo, double hi, double a, double b, bool allow_log, std::string label,
               std::function<std::string(double)> format);

/// Compact money for tick labels: $800, $1.5k, $20k, $1.2M.
std::string short_money(double usd);

/// A fixed palette that reads on screen and in print; index wraps around.
std::string_view colour(std::size_t i);

/// An SVG element built from escaped pieces.
class Svg {
 public:
  /// `title` is the accessible name of the image (role="img").
  Svg(double width, double height, std::string_view title);
  Svg& rect(double x, double y, double w, double h, std::string_view fill, std::string_view cls = "");
  Svg& line(double x1, double y1, double x2, double y2, std::string_view cls);
  Svg& text(double x, double y, std::string_view s, std::string_view anchor = "start", std::string_view cls = "");
  /// A circle with a hover title (`tip`).
  Svg& circle(double cx, double cy, double r, std::string_view fill, std::string_view cls, std::string_view tip);
  Svg& path(std::string_view d, std::string_view cls);
  /// The axes, grid and tick labels of a chart with plot area [x.a, x.b] x [y.b, y.a].
  Svg& axes(const Axis& x, const Axis& y);
  std::string str() const;

 private:
  double width_, height_;
  std::string title_, body_;
};

/// One point of a scatter chart.
struct Point {
  double x = 0, y = 0;
  std::string label;  ///< drawn next to the point when not empty
  std::string tip;    ///< hover text
  int rank = 0;       ///< 1 for the best plan, 2.. for the other labelled ones, 0 for the rest
};
struct Scatter {
  std::string title, x_label, y_label;
  std::vector<Point> points;
  std::vector<std::size_t> front;   ///< indices into points: the Pareto front (drawn as a step line)
  bool front_higher_better = true;  ///< y: more is better (throughput) or less (time)
  std::function<std::string(double)> x_format, y_format;
};
/// Scatter of plans, price on x (log when the range is wide), with the front as a step line.
std::string scatter(const Scatter& s);

/// One part of a stacked bar, or one bar of a bar chart.
struct Segment {
  std::string label;
  double value = 0;
  std::string value_text;  ///< as shown (e.g. "5.21 GiB")
  bool highlight = false;  ///< the best in a bar chart
};
/// A vertical marker across a stacked bar ("usable 21.6 GiB").
struct Marker {
  double value = 0;
  std::string label;
};
/// One horizontal bar of `segments` in order, with a legend under it (label, value, share) and
/// optional markers; the scale runs to the largest of the total and the markers.
std::string stacked_bar(const std::vector<Segment>& segments, std::string_view title,
                        const std::vector<Marker>& markers = {});
/// Horizontal bars, one per item, scaled from zero to the largest; `note` is drawn under the title
/// ("lower is better").
std::string bar_chart(const std::vector<Segment>& bars, std::string_view title, std::string_view note = "",
                      double width = 960);

/// An HTML page: a title, a subtitle, sections of text, tables and figures, and a footer.
class Page {
 public:
  Page(std::string_view title, std::string_view subtitle);
  Page& h2(std::string_view s);
  Page& p(std::string_view s, std::string_view cls = "");
  /// Key/value pairs as a definition list; empty keys are skipped.
  Page& kv(const std::vector<std::pair<std::string, std::string>>& items);
  Page& list(const std::vector<std::string>& items);
  /// A table with the same cells as the text table; right-aligned columns stay right-aligned.
  Page& table(const Table& t);
  /// A figure from markup built here (an Svg); `caption` is escaped.
  Page& figure(std::string_view svg, std::string_view caption = "");
  /// Figures side by side (two to a row on a wide page).
  Page& figures(const std::vector<std::string>& svgs);
  /// The whole document; `footer` is escaped.
  std::string str(std::string_view footer) const;

 private:
  std::string title_, subtitle_, body_;
};

}  // namespace gpuadvisor::report::html
