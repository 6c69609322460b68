#!/usr/bin/env python3
"""No include points the wrong way between layers (docs/architecture.md, "Layers").

Layers, in the order of that list: util, catalog, estimate, rules, report, cli. A file may
include its own layer and the layers before it in the list (report also the result structs of
catalog, estimate and rules), never a later one. Checks every
`#include "gpuadvisor/<layer>/..."` and `#include "<file>"` relative include in src/ and
include/gpuadvisor/. Usage: tests/layers/check_layers.py [SOURCE_DIR]   (exit 1 on a violation)
"""
import os
import re
import sys

ALLOWED = {
    "util": {"util"},
    "catalog": {"util", "catalog"},
    "estimate": {"util", "catalog", "estimate"},
    "rules": {"util", "catalog", "estimate", "rules"},
    "report": {"util", "catalog", "estimate", "rules", "report"},
    "cli": {"util", "catalog", "estimate", "rules", "report", "cli"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path, root):
    rel = os.path.relpath(path, root).split(os.sep)
    if rel[0] == "src" and len(rel) > 2:
        return rel[1]
    if rel[:2] == ["include", "gpuadvisor"] and len(rel) > 3:
        return rel[2]
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    bad, files = [], 0
    for top in ("src", os.path.join("include", "gpuadvisor")):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith((".cpp", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                layer = layer_of(path, root)
                if layer is None:
                    continue
                if layer not in ALLOWED:
                    bad.append(f"{os.path.relpath(path, root)}: folder '{layer}' is not a layer of docs/architecture.md")
                    continue
                files += 1
                text = open(path, encoding="utf-8").read()
                for m in INCLUDE.finditer(text):
                    target = m.group(1)
                    line = text.count("\n", 0, m.start()) + 1
                    if target.startswith("gpuadvisor/"):
                        parts = target.split("/")
                        used = parts[1] if len(parts) > 2 else None
                    else:  # relative: the same folder's layer
                        used = layer_of(os.path.normpath(os.path.join(dirpath, target)), root) or layer
                    if used and used not in ALLOWED[layer]:
                        bad.append(f"{os.path.relpath(path, root)}:{line}: {layer} includes {target}: {layer} may not include {used} (docs/architecture.md, Layers)")
    for b in bad:
        print(b)
    print(f"{files} files checked; {len(bad)} includes against the layer order")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
