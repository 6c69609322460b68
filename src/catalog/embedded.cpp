#include "gpuadvisor/catalog/embedded.h"

#include <fmt/format.h>

namespace gpuadvisor::embedded {

util::JsonDoc doc(std::string_view name) {
  auto text = find(name);
  if (!text) throw Error(fmt::format("embedded data file {} missing", name), Exit::internal);
  auto d = util::JsonDoc::parse(std::string(*text), fmt::format("<embedded>/{}", name));
  if (!d) throw Error(d.error(), Exit::internal);
  return std::move(d).value();
}

}  // namespace gpuadvisor::embedded
