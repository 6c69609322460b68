#include "gpuadvisor/report/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpuadvisor/util/text.h"
#include "gpuadvisor/version.h"

namespace gpuadvisor::report::html {
namespace {

// Approximate width of 11-12px sans-serif text, for placing labels without measuring them.
double text_width(std::string_view s, double px = 11) { return static_cast<double>(display_width(s)) * px * 0.58; }

struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

constexpr std::string_view kCss = R"(
*{box-sizing:border-box}
body{margin:0;background:#fff;color:#1f2933;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1080px;margin:0 auto;padding:28px 32px 40px}
h1{font-size:22px;margin:0 0 4px}
.sub{color:#52606d;margin:0 0 8px}
h2{font-size:16px;margin:28px 0 10px;padding-bottom:4px;border-bottom:1px solid #e4e7eb}
p{margin:6px 0}
table{border-collapse:collapse;width:100%;font-size:13px;margin:6px 0}
th,td{padding:5px 8px;border-bottom:1px solid #e4e7eb;text-align:left;vertical-align:top}
th{background:#f5f7fa;font-weight:600;color:#323f4b}
th.r,td.r{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
th.nw,td.nw{white-space:nowrap}
tbody.g:nth-of-type(even){background:#fafbfc}
tr.more td{border-bottom:1px solid #e4e7eb;padding-top:0;color:#52606d}
tbody.g tr.main td{border-bottom:none}
tbody tr:nth-child(even){background:#fafbfc}
dl{display:grid;grid-template-columns:max-content 1fr;gap:3px 18px;margin:6px 0}
dt{color:#52606d}
dd{margin:0}
ul{margin:6px 0;padding-left:20px}
li{margin:2px 0}
figure{margin:10px 0 18px}
figcaption{color:#52606d;font-size:12px;margin-top:4px}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:8px 24px}
svg{display:block;max-width:100%;height:auto;font-family:inherit}
svg .grid-line{stroke:#e4e7eb;stroke-width:1}
svg .axis{stroke:#9aa5b1;stroke-width:1}
svg .tick{font-size:11px;fill:#52606d}
svg .axis-label{font-size:12px;font-weight:600;fill:#323f4b}
svg .title{font-size:13px;font-weight:600;fill:#1f2933}
svg .note{font-size:11px;fill:#7b8794}
svg .label{font-size:11px;fill:#1f2933}
svg .value{font-size:11px;fill:#323f4b;font-variant-numeric:tabular-nums}
svg .seg{font-size:11px;fill:#fff;font-weight:600}
svg .plan{stroke:#fff;stroke-width:1.5}
svg .pareto{fill:none;stroke:#e8590c;stroke-width:2;stroke-linejoin:round}
svg .marker{stroke:#1f2933;stroke-width:1.5;stroke-dasharray:4 3}
.good{color:#1e7b34;font-weight:600}
.bad{color:#b42318;font-weight:600}
.muted{color:#52606d}
footer{margin-top:32px;padding-top:8px;border-top:1px solid #e4e7eb;color:#7b8794;font-size:12px}
@media print{main{padding:0;max-width:none}h2{break-after:avoid}figure,table{break-inside:avoid}}
)";

}  // namespace

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : safe_text(s)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double v) {
  if (!std::isfinite(v)) return "0";
  std::string s = fmt::format("{:.1f}", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {0, 1};
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) hi = lo + (lo == 0 ? 1 : std::abs(lo));
  const double raw = (hi - lo) / std::max(target, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double m = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  const double step = m * mag;
  const double first = std::floor(lo / step + 1e-9), last = std::ceil(hi / step - 1e-9);
  // Below 1, divide by the power of ten instead of multiplying by its inverse: 3 x 0.1 is not
  // 0.3 in binary, 3 / 10 is the double nearest to it.
  const double inv = mag < 1 ? std::round(1 / mag) : 0;
  std::vector<double> ticks;
  for (double k = first; k <= last; k += 1) ticks.push_back(inv > 0 ? k * m / inv : k * step);
  return ticks;
}

std::vector<double> log_ticks(double lo, double hi) {
  if (!(lo > 0) || !std::isfinite(hi)) return {1, 10};
  if (hi < lo) std::swap(lo, hi);
  int k0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int k1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  if (k1 <= k0) k1 = k0 + 1;
  std::vector<double> all;
  const bool fine = std::log10(hi / lo) <= 2 + 1e-9;
  for (int k = k0; k <= k1; ++k) {
    const double p = std::pow(10.0, k);
    all.push_back(p);
    if (fine && k < k1) {
      all.push_back(2 * p);
      all.push_back(5 * p);
    }
  }
  if (!fine) return all;
  // Trim to the ticks just around [lo, hi]: a two-decade axis need not start at 1 x 10^k.
  std::size_t a = 0, b = all.size() - 1;
  while (a + 1 < all.size() && all[a + 1] <= lo * (1 + 1e-9)) ++a;
  while (b > a + 1 && all[b - 1] >= hi * (1 - 1e-9)) --b;
  return {all.begin() + static_cast<long>(a), all.begin() + static_cast<long>(b) + 1};
}

double Scale::operator()(double v) const {
  double t;
  if (log) {
    const double l0 = std::log10(lo), l1 = std::log10(hi);
    t = l1 > l0 ? (std::log10(std::max(v, lo)) - l0) / (l1 - l0) : 0;
  } else {
    t = hi > lo ? (v - lo) / (hi - lo) : 0;
  }
  return a + t * (b - a);
}

Axis make_axis(double lo, double hi, double a, double b, bool allow_log, std::string label,
               std::function<std::string(double)> format) {
  Axis ax;
  ax.label = std::move(label);
  ax.format = std::move(format);
  if (allow_log && lo > 0 && hi / lo >= 20) {
    ax.ticks = log_ticks(lo, hi);
    ax.scale = {ax.ticks.front(), ax.ticks.back(), a, b, true};
  } else {
    // Linear axes of positive quantities start at zero, so that lengths compare honestly.
    ax.ticks = nice_ticks(std::min(lo, 0.0), hi);
    ax.scale = {ax.ticks.front(), ax.ticks.back(), a, b, false};
  }
  return ax;
}

std::string short_money(double usd) {
  auto trim = [](double v) {
    std::string s = fmt::format("{:.1f}", v);
    if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
    return s;
  };
  if (std::abs(usd) < 1000) {
    // Whole dollars as such; cents only where there are some ($0.5 on a log axis of hourly rents).
    std::string s = fmt::format("{:.2f}", usd);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return "$" + s;
  }
  if (std::abs(usd) < 1e6) return "$" + trim(usd / 1e3) + "k";
  if (std::abs(usd) < 1e9) return "$" + trim(usd / 1e6) + "M";
  return "$" + trim(usd / 1e9) + "B";
}

std::string_view colour(std::size_t i) {
  // Tableau 10: distinct hues that stay apart in print and for most colour-vision deficiencies.
  static constexpr std::string_view kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                                  "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return kPalette[i % std::size(kPalette)];
}

Svg::Svg(double width, double height, std::string_view title) : width_(width), height_(height), title_(title) {}

Svg& Svg::rect(double x, double y, double w, double h, std::string_view fill, std::string_view cls) {
  body_ +=
      fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"{}/>)", num(x), num(y), num(std::max(w, 0.0)),
                  num(std::max(h, 0.0)), escape(fill), cls.empty() ? "" : fmt::format(R"( class="{}")", escape(cls)));
  body_ += "\n";
  return *this;
}

Svg& Svg::line(double x1, double y1, double x2, double y2, std::string_view cls) {
  body_ += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" class="{}"/>)", num(x1), num(y1), num(x2), num(y2),
                       escape(cls));
  body_ += "\n";
  return *this;
}

Svg& Svg::text(double x, double y, std::string_view s, std::string_view anchor, std::string_view cls) {
  body_ += fmt::format(R"(<text x="{}" y="{}"{}{}>{}</text>)", num(x), num(y),
                       anchor == "start" ? "" : fmt::format(R"( text-anchor="{}")", escape(anchor)),
                       cls.empty() ? "" : fmt::format(R"( class="{}")", escape(cls)), escape(s));
  body_ += "\n";
  return *this;
}

Svg& Svg::circle(double cx, double cy, double r, std::string_view fill, std::string_view cls, std::string_view tip) {
  body_ += fmt::format(R"(<circle cx="{}" cy="{}" r="{}" fill="{}" class="{}"><title>{}</title></circle>)", num(cx),
                       num(cy), num(r), escape(fill), escape(cls), escape(tip));
  body_ += "\n";
  return *this;
}

Svg& Svg::path(std::string_view d, std::string_view cls) {
  body_ += fmt::format(R"(<path d="{}" class="{}"/>)", escape(d), escape(cls));
  body_ += "\n";
  return *this;
}

Svg& Svg::axes(const Axis& x, const Axis& y) {
  const double left = x.scale.a, right = x.scale.b, bottom = y.scale.a, top = y.scale.b;
  for (double t : y.ticks) {
    const double py = y.scale(t);
    line(left, py, right, py, "grid-line");
    text(left - 8, py + 4, y.format(t), "end", "tick");
  }
  for (double t : x.ticks) {
    const double px = x.scale(t);
    line(px, top, px, bottom, "grid-line");
    text(px, bottom + 17, x.format(t), "middle", "tick");
  }
  line(left, bottom, right, bottom, "axis");
  line(left, top, left, bottom, "axis");
  text((left + right) / 2, bottom + 40, x.label + (x.scale.log ? " (log scale)" : ""), "middle", "axis-label");
  body_ += fmt::format(
      R"svg(<text transform="rotate(-90)" x="{}" y="{}" text-anchor="middle" class="axis-label">{}</text>)svg",
      num(-(top + bottom) / 2), num(left - 58), escape(y.label));
  body_ += "\n";
  return *this;
}

std::string Svg::str() const {
  return fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {0} {1}" width="{0}" height="{1}" role="img" aria-label="{2}">)"
      "\n<title>{2}</title>\n{3}</svg>",
      num(width_), num(height_), escape(title_), body_);
}

std::string scatter(const Scatter& s) {
  constexpr double W = 960, H = 470, ml = 84, mr = 24, mt = 40, mb = 58;
  Svg svg(W, H, s.title);
  if (s.points.empty()) {
    svg.text(W / 2, H / 2, "no plan with a known price to plot", "middle", "note");
    return svg.str();
  }
  double x0 = s.points.front().x, x1 = x0, y1 = s.points.front().y;
  for (const auto& p : s.points) {
    x0 = std::min(x0, p.x);
    x1 = std::max(x1, p.x);
    y1 = std::max(y1, p.y);
  }
  const Axis x = make_axis(x0, x1, ml, W - mr, true, s.x_label, s.x_format);
  const Axis y = make_axis(0, y1, H - mb, mt, false, s.y_label, s.y_format);
  svg.axes(x, y);

  // The front as a step line: from each plan along its own speed to the next plan's price, then
  // up to that plan, and on to the right edge (spending more buys nothing faster).
  std::vector<std::size_t> front = s.front;
  std::sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) { return s.points[a].x < s.points[b].x; });
  if (!front.empty()) {
    std::string d;
    for (std::size_t k = 0; k < front.size(); ++k) {
      const auto& p = s.points[front[k]];
      d += k == 0 ? fmt::format("M{} {}", num(x.scale(p.x)), num(y.scale(p.y)))
                  : fmt::format(" H{} V{}", num(x.scale(p.x)), num(y.scale(p.y)));
    }
    d += fmt::format(" H{}", num(W - mr));
    svg.path(d, "pareto");
  }

  // Plans: the unranked ones first, so that the ranked ones are drawn on top.
  std::vector<std::size_t> order(s.points.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    auto key = [&](std::size_t i) { return s.points[i].rank == 0 ? 1000 : 1000 - s.points[i].rank; };
    return key(a) < key(b);
  });
  for (auto i : order) {
    const auto& p = s.points[i];
    const bool on_front = std::find(front.begin(), front.end(), i) != front.end();
    std::string cls = p.rank == 1 ? "plan best" : p.rank > 0 ? "plan top" : "plan";
    if (on_front) cls += " front";
    svg.circle(x.scale(p.x), y.scale(p.y),
               p.rank == 1  ? 7
               : p.rank > 0 ? 6
                            : 4.5,
               p.rank == 1  ? "#1f4e8c"
               : p.rank > 0 ? "#4e79a7"
                            : "#9aa5b1",
               cls, p.tip);
  }
  // Labels beside the ranked plans, moved around their point until they overlap nothing placed.
  std::vector<Box> placed;
  for (const auto& p : s.points)
    placed.push_back({x.scale(p.x) - 5, y.scale(p.y) - 5, x.scale(p.x) + 5, y.scale(p.y) + 5});
  // The step line is an obstacle too: a label across it is hard to read.
  for (std::size_t k = 0; k < front.size(); ++k) {
    const auto& p = s.points[front[k]];
    const double px = x.scale(p.x), py = y.scale(p.y);
    const double next = k + 1 < front.size() ? x.scale(s.points[front[k + 1]].x) : W - mr;
    placed.push_back({px, py - 2, next, py + 2});
    if (k + 1 < front.size()) {
      const double ny = y.scale(s.points[front[k + 1]].y);
      placed.push_back({next - 2, std::min(py, ny), next + 2, std::max(py, ny)});
    }
  }
  std::vector<std::size_t> ranked;
  for (std::size_t i = 0; i < s.points.size(); ++i)
    if (s.points[i].rank > 0 && !s.points[i].label.empty()) ranked.push_back(i);
  std::sort(ranked.begin(), ranked.end(),
            [&](std::size_t a, std::size_t b) { return s.points[a].rank < s.points[b].rank; });
  for (auto i : ranked) {
    const auto& p = s.points[i];
    const double px = x.scale(p.x), py = y.scale(p.y), tw = text_width(p.label);
    struct Try {
      double dx, dy;
      bool end;
    };
    static constexpr Try tries[] = {{10, 4, false},   {-10, 4, true},  {10, -10, false}, {10, 17, false},
                                    {-10, -10, true}, {-10, 17, true}, {10, -24, false}, {10, 31, false},
                                    {-10, -24, true}, {-10, 31, true}, {10, -38, false}, {10, 45, false}};
    const Try* pick = &tries[0];
    for (const auto& t : tries) {
      const double lx = t.end ? px + t.dx - tw : px + t.dx;
      Box b{lx, py + t.dy - 10, lx + tw, py + t.dy + 3};
      if (b.x0 < ml || b.x1 > W - 4 || b.y0 < mt - 6 || b.y1 > H - mb) continue;
      if (std::none_of(placed.begin(), placed.end(), [&](const Box& o) { return o.overlaps(b); })) {
        pick = &t;
        break;
      }
    }
    const double lx = pick->end ? px + pick->dx - tw : px + pick->dx;
    placed.push_back({lx, py + pick->dy - 10, lx + tw, py + pick->dy + 3});
    svg.text(px + pick->dx, py + pick->dy, p.label, pick->end ? "end" : "start", "label");
  }
  // Legend along the top.
  double lx = ml;
  auto item = [&](std::string_view fill, double r, std::string_view text) {
    svg.circle(lx + 6, 16, r, fill, "legend", text);
    svg.text(lx + 16, 20, text, "start", "tick");
    lx += 30 + text_width(text);
  };
  item("#1f4e8c", 6, "best plan");
  item("#4e79a7", 5, "next ranked plans");
  item("#9aa5b1", 4, "other plans");
  if (!front.empty()) {
    svg.line(lx, 16, lx + 22, 16, "pareto");
    svg.text(lx + 28, 20,
             s.front_higher_better ? "Pareto front: no plan both cheaper and faster"
                                   : "Pareto front: no plan both cheaper and quicker",
             "start", "tick");
  }
  return svg.str();
}

std::string stacked_bar(const std::vector<Segment>& segments, std::string_view title,
                        const std::vector<Marker>& markers) {
  constexpr double W = 960, bar_y = 44, bar_h = 36, legend_y = bar_y + bar_h + 26, row_h = 22;
  double total = 0;
  for (const auto& s : segments) total += std::max(s.value, 0.0);
  double top = total;
  for (const auto& m : markers) top = std::max(top, m.value);
  const std::size_t rows = (segments.size() + 1) / 2;
  Svg svg(W, legend_y + static_cast<double>(rows) * row_h, title);
  const Scale sx{0, top > 0 ? top : 1, 1, W - 1, false};
  svg.rect(sx.a, bar_y, sx.b - sx.a, bar_h, "#f5f7fa");
  double at = 0;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const auto& s = segments[i];
    const double v = std::max(s.value, 0.0);
    const double xa = sx(at), xb = sx(at + v);
    svg.rect(xa, bar_y, xb - xa, bar_h, colour(i), "segment");
    const std::string pct = total > 0 ? fmt::format("{:.0f}%", 100 * v / total) : "";
    if (xb - xa > text_width(pct) + 10) svg.text((xa + xb) / 2, bar_y + bar_h / 2 + 4, pct, "middle", "seg");
    at += v;
  }
  // Marker labels above the bar, on a second row when they would overlap the one before.
  std::vector<Box> labels;
  for (const auto& m : markers) {
    const double px = sx(m.value), tw = text_width(m.label);
    const bool near_right = px + tw > W - 4;
    const double lx = near_right ? px - 4 - tw : px + 4;
    double ly = bar_y - 8;
    for (const auto& b : labels)
      if (b.overlaps({lx, ly - 10, lx + tw, ly + 2})) ly -= 14;
    labels.push_back({lx, ly - 10, lx + tw, ly + 2});
    svg.line(px, ly - 10, px, bar_y + bar_h + 6, "marker");
    svg.text(near_right ? px - 4 : px + 4, ly, m.label, near_right ? "end" : "start", "label");
  }
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const auto& s = segments[i];
    const double lx = i % 2 == 0 ? 0 : W / 2, ly = legend_y + static_cast<double>(i / 2) * row_h;
    svg.rect(lx + 1, ly - 11, 12, 12, colour(i), "swatch");
    std::string share = total > 0 ? fmt::format(", {:.1f}%", 100 * std::max(s.value, 0.0) / total) : "";
    svg.text(lx + 20, ly, s.label + ": " + s.value_text + share, "start", "label");
  }
  return svg.str();
}

std::string bar_chart(const std::vector<Segment>& bars, std::string_view title, std::string_view note, double width) {
  const double label_w = std::min(200.0, width * 0.34), value_w = 96, row_h = 26, top = note.empty() ? 28 : 42;
  Svg svg(width, top + static_cast<double>(bars.size()) * row_h + 6, title);
  svg.text(0, 16, title, "start", "title");
  if (!note.empty()) svg.text(0, 32, note, "start", "note");
  double hi = 0;
  for (const auto& b : bars) hi = std::max(hi, b.value);
  const Scale sx{0, hi > 0 ? hi : 1, label_w, width - value_w, false};
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& b = bars[i];
    const double y = top + static_cast<double>(i) * row_h;
    std::string label = b.label;
    // Long labels are cut to the label column; the full text stays in the table.
    while (label.size() > 4 && text_width(label) > label_w - 10) label = label.substr(0, label.size() - 4) + "...";
    svg.text(label_w - 8, y + 13, label, "end", "label");
    const double x1 = sx(std::max(b.value, 0.0));
    svg.rect(label_w, y + 2, x1 - label_w, row_h - 10, b.highlight ? "#1f4e8c" : "#9db4d3",
             b.highlight ? "bar best" : "bar");
    svg.text(x1 + 6, y + 13, b.value_text + (b.highlight ? " (best)" : ""), "start", "value");
  }
  return svg.str();
}

Page::Page(std::string_view title, std::string_view subtitle) : title_(title), subtitle_(subtitle) {}

Page& Page::h2(std::string_view s) {
  body_ += "<h2>" + escape(s) + "</h2>\n";
  return *this;
}

Page& Page::p(std::string_view s, std::string_view cls) {
  body_ += (cls.empty() ? std::string("<p>") : "<p class=\"" + escape(cls) + "\">") + escape(s) + "</p>\n";
  return *this;
}

Page& Page::kv(const std::vector<std::pair<std::string, std::string>>& items) {
  body_ += "<dl>\n";
  for (const auto& [k, v] : items) {
    if (k.empty() || util::trim(k).empty()) {
      // A continuation line (an empty or blank key): its value belongs to the key above.
      if (!v.empty()) body_ += "<dt></dt><dd>" + escape(v) + "</dd>\n";
      continue;
    }
    body_ += "<dt>" + escape(k) + "</dt><dd>" + escape(v) + "</dd>\n";
  }
  body_ += "</dl>\n";
  return *this;
}

Page& Page::list(const std::vector<std::string>& items) {
  body_ += "<ul>\n";
  for (const auto& i : items) body_ += "<li>" + escape(i) + "</li>\n";
  body_ += "</ul>\n";
  return *this;
}

Page& Page::table(const Table& t) {
  const auto& cols = t.columns();
  // Short cells stay on one line; only columns of running text (a cell over 32 characters) wrap.
  std::vector<bool> wraps(cols.size(), false);
  for (const auto& r : t.rows())
    for (std::size_t i = 0; i < r.size(); ++i)
      if (display_width(r[i]) > 32) wraps[i] = true;
  auto cls = [&](std::size_t i) {
    return cols[i].align == Align::right ? std::string(R"( class="r")")
           : wraps[i]                    ? std::string()
                                         : std::string(R"( class="nw")");
  };
  // A wide table (ten columns or more) whose last column is running text shows that text on a line
  // of its own under each row, as the terminal does when a table is too wide.
  const std::size_t n = cols.size();
  const bool under = n >= 10 && wraps[n - 1] && cols[n - 1].align == Align::left;
  const std::size_t shown = under ? n - 1 : n;
  body_ += "<table>\n<thead><tr>";
  for (std::size_t i = 0; i < shown; ++i) body_ += "<th" + cls(i) + ">" + escape(cols[i].header) + "</th>";
  body_ += "</tr></thead>\n";
  if (!under) body_ += "<tbody>\n";
  for (const auto& r : t.rows()) {
    if (under) body_ += "<tbody class=\"g\">\n";
    body_ += under ? "<tr class=\"main\">" : "<tr>";
    for (std::size_t i = 0; i < shown && i < r.size(); ++i) body_ += "<td" + cls(i) + ">" + escape(r[i]) + "</td>";
    body_ += "</tr>\n";
    if (under) {
      body_ += fmt::format("<tr class=\"more\"><td></td><td colspan=\"{}\">{}: {}</td></tr>\n</tbody>\n", shown - 1,
                           escape(cols[n - 1].header), r.size() == n ? escape(r[n - 1]) : std::string());
    }
  }
  if (!under) body_ += "</tbody>\n";
  body_ += "</table>\n";
  return *this;
}

Page& Page::figure(std::string_view svg, std::string_view caption) {
  body_ += "<figure>\n" + std::string(svg) + "\n";
  if (!caption.empty()) body_ += "<figcaption>" + escape(caption) + "</figcaption>\n";
  body_ += "</figure>\n";
  return *this;
}

Page& Page::figures(const std::vector<std::string>& svgs) {
  body_ += "<div class=\"grid\">\n";
  for (const auto& s : svgs) body_ += "<figure>\n" + s + "\n</figure>\n";
  body_ += "</div>\n";
  return *this;
}

std::string Page::str(std::string_view footer) const {
  // The policy forbids every fetch and script: the page stands alone, in a mail or an archive.
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"gpuadvisor "
      "{}\">\n<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n"
      "<header>\n<h1>{}</h1>\n<p class=\"sub\">{}</p>\n</header>\n{}<footer>{}</footer>\n</main>\n</body>\n</html>\n",
      kVersion, escape(title_ + (subtitle_.empty() ? "" : ": " + subtitle_)), kCss, escape(title_), escape(subtitle_),
      body_, escape(footer));
}

}  // namespace gpuadvisor::report::html
