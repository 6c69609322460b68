#!/usr/bin/env python3
"""Every command over hostile inputs, in every format it takes (issue 23; docs/terminal-output.md).

The inputs (tests/fixtures/catalog/hostile/, and files made here) carry names with ESC[2J,
ESC]0;title BEL, CR/LF, DEL, =HYPERLINK(...), <script>; and values no GPU has (TDP 0 W, memory 0,
a 1e308 peak). For each command case and each of the eight format names the command accepts
(a name it refuses with "--format: expected one of" is skipped), the run fails when:
  - stdout or stderr holds a control byte (C0 but LF, DEL, or a C1 control in UTF-8): only
    gpuadvisor's own output can put a byte there, and it puts none without a terminal;
  - any output holds an `inf` or `nan` token;
  - a CSV cell is text that starts with = + - @, tab or CR without the leading ' (a formula);
  - JSON or SARIF output does not parse as JSON, JUnit output as XML;
  - markdown or HTML output holds a raw <script> tag;
  - the exit code is 3 (internal error), or it is 2 with anything but one line on stderr.
Catalogs with values no GPU has must be refused at load: exit 2, one line on stderr, and
`catalog validate` must report them (exit 1).
Usage: tests/hostile/walk.py GPUADVISOR_BINARY   (exits 1 when a case fails)
"""
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join("tests", "fixtures", "catalog", "hostile")
FORMATS = ["table", "json", "csv", "markdown", "junit", "sarif", "text", "html"]
ENV = dict(os.environ, NO_COLOR="1", COLUMNS="100", GPUADVISOR_TODAY="2026-11-29", LC_ALL="C.UTF-8")
ENV.pop("GPUADVISOR_CATALOG", None)

CONTROL = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")
# fmt's spellings of a non-finite double, also inside "$infM" or "-nan%"; not "info", "Nano", "Infinity Fabric".
NONFINITE = re.compile(rb"(?<![A-Za-z])(inf|nan)(?![a-z])")
NL = b"\n"
NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def make_inputs(tmp):
    """Inputs of the other kinds, with the same hostile text."""
    names = os.path.join(FIX, "names.json")
    spec = {
        "schema_version": 1,
        "name": "Spec \x1b[2J\x1b]0;owned\x07 =HYPERLINK(\"x\") <script>",
        "gpus": [{"id": "hostile-clear", "count": 2, "unit_price_usd": 1800, "condition": "new"}],
        "software": {"driver": "550.54.15", "cuda": "12.4", "pytorch": "2.3"},
        "deployment": "datacenter",
        "budget_usd": 10000,
        "workloads": [{"model": "7B", "task": "qlora", "batch": 1, "seq_len": 2048}],
    }
    with open(os.path.join(tmp, "spec.json"), "w") as f:
        json.dump(spec, f)
    with open(os.path.join(tmp, "quotes.csv"), "w") as f:
        f.write("gpu,price_usd,vendor,date\n")
        f.write('rtx-4090,1999,"=HYPERLINK(""http://x"",""y"") \x1b[2J",2026-11\n')
    with open(os.path.join("data", "models.json")) as f:
        model = json.load(f)["models"][0]
    model = dict(model, id="hostile-model", aliases=[], name="Model \x1b[2J =HYPERLINK(\"x\") <script>",
                 notes="note \x1b]0;owned\x07 end")
    with open(os.path.join(tmp, "models.json"), "w") as f:
        json.dump({"schema_version": 1, "models": [model]}, f)
    with open(os.path.join(tmp, "xid.log"), "w") as f:
        f.write("[  100.000000] NVRM: Xid (PCI:0000:18:00): 79, pid=1234, name=\x1b[2Jpython =HYPERLINK(\"x\"), "
                "GPU has fallen off the bus.\n")
    smi = open(os.path.join("tests", "fixtures", "inspect", "a100-healthy.csv")).read().splitlines()
    smi[1] = smi[1].replace("NVIDIA A100-SXM4-80GB", "=HYPERLINK(\"http://x\") <script>", 1)
    with open(os.path.join(tmp, "smi.csv"), "w") as f:
        f.write("\n".join(smi[:2]) + "\n")
    with open(os.path.join(tmp, "bench.md"), "w") as f:
        f.write("  Device 0: =HYPERLINK(\"http://x\") <script>\x1b[2J, compute capability 8.9\n"
                "| model | size | params | backend | ngl | test | t/s |\n| --- | --- | --- | --- | --- | --- | --- |\n"
                "| llama 8B Q4_K - Medium \x1b]0;owned\x07 | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 110.0 ± 0.1 |\n")
    return names


def cases(tmp, names):
    cat = ["--catalog", names]
    spec = os.path.join(tmp, "spec.json")
    models = os.path.join(tmp, "models.json")
    evil = os.path.join(tmp, "no such \x1b[2J\x1b]0;owned\x07\nfile.json")
    return {
        "recommend": [["recommend", "--model", "hostile-model", "--models", models, "--budget", "5000", *cat],
                      ["recommend", "--model", "hostile-model", "--models", models, "--budget", "100", *cat],
                      ["recommend", "--model", "7B", "--task", "qlora", "--budget", "5000", "--top", "20", *cat],
                      ["recommend", "--model", "7B", "--task", "qlora", "--quotes", os.path.join(tmp, "quotes.csv")]],
        "memory": [["memory", "--model", "7B", "--task", "qlora", "--gpu", "hostile-clear", *cat],
                   ["memory", "--model", "hostile-model", "--models", os.path.join(tmp, "models.json"), "--gpu", "hostile-title", *cat]],
        "estimate": [["estimate", "--model", "7B", "--task", "qlora", "--gpu", "hostile-title", *cat],
                     ["estimate", "--model", "hostile-model", "--models", models, "--gpu", "hostile-script", *cat]],
        "cost": [["cost", "--model", "7B", "--task", "qlora", "--gpu", "hostile-formula", *cat],
                 ["cost", "--model", "hostile-model", "--models", models, "--gpu", "hostile-script", *cat]],
        "compare": [["compare", "hostile-clear", "hostile-title", "hostile-formula", "hostile-script", "hostile-plus",
                     "hostile-newline", "hostile-pipe", *cat],
                    ["compare", "hostile-clear", "rtx-4090", "--model", "7B", "--task", "qlora", *cat]],
        "fit": [["fit", "--gpu", "hostile-script", *cat], ["fit", "--gpu", "hostile-script", "--models", models, *cat]],
        "catalog": [["catalog", "list", *cat], ["catalog", "show", "hostile-newline", *cat],
                    ["catalog", "show", "hostile-clear", *cat], ["catalog", "validate", names],
                    ["catalog", "export", *cat]],
        "models": [["models", "list", "--models", os.path.join(tmp, "models.json")],
                   ["models", "show", "hostile-model", "--models", os.path.join(tmp, "models.json")]],
        "check": [["check", spec, *cat]],
        "rules": [["rules", "list"]],
        "compat": [["compat", "--gpu", "hostile-clear", *cat], ["compat", "--gpu", "hostile-plus", "--cuda", "12.4", *cat]],
        "diagnose": [["diagnose", "--log", os.path.join(tmp, "xid.log")]],
        "inspect": [["inspect", "--from", os.path.join(tmp, "smi.csv")], ["inspect", "--from", os.path.join(tmp, "smi.csv"), *cat]],
        "calibrate": [["calibrate", os.path.join(tmp, "bench.md"), "--model", "7B", "-o", os.path.join(tmp, "cal.json")],
                      ["calibrate", os.path.join(tmp, "bench.md"), "--gpu", "hostile-script", "--model", "7B",
                       "-o", os.path.join(tmp, "cal.json"), *cat]],
        "completion": [["completion", "bash"]],
        # Paths with escape bytes and a line break, named in error lines (which must stay one line).
        "paths": [["catalog", "list", "--catalog", evil], ["check", evil, spec], ["memory", "--model-config", evil],
                  ["inspect", "--from", evil], ["diagnose", "--log", evil], ["memory", "--model", "7B", "--profile", evil],
                  ["calibrate", evil], ["estimate", "--model", "7B", "--gpu", "t4", "--calibration", evil]],
        "man": [["man"]],
    }


def reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def csv_formulas(out):
    bad = []
    for row in csv.reader(io.StringIO(out.decode("utf-8", "replace"))):
        for cell in row:
            if cell and cell[0] in "=+-@\t\r" and cell != "-" and not NUMBER.fullmatch(cell):
                bad.append(cell)
    return bad


def run(binary, args):
    p = subprocess.run([binary, *args], capture_output=True, env=ENV, timeout=60)
    return p.returncode, p.stdout, p.stderr


def main():
    binary = os.path.abspath(sys.argv[1])
    os.chdir(ROOT)
    failures, runs = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        names = make_inputs(tmp)
        help_out = run(binary, ["--help"])[1].decode()
        all_cases = cases(tmp, names)
        commands = re.findall(r"^  ([a-z]+)  ", help_out.split("Subcommands:")[1], re.MULTILINE)
        for c in commands:
            if c not in all_cases:
                failures.append(f"command '{c}' has no case in tests/hostile/walk.py")
        for command, argvs in all_cases.items():
            for argv in argvs:
                taken = answered = 0
                for f in FORMATS:
                    code, out, err = run(binary, [*argv, "--format", f])
                    runs += 1
                    if code == 2 and b"--format: expected one of" in err:
                        continue
                    if code == 2 and b'unknown option "--format"' in err:
                        # A command with one output (completion, man): checked once, as it is.
                        if f != FORMATS[0]:
                            continue
                        code, out, err = run(binary, argv)
                    taken += 1
                    answered += code in (0, 1)
                    if os.environ.get("WALK_VERBOSE"):
                        print(code, f, " ".join(argv)[:80], len(out), b"\\x1b" in out or b"\\u001b" in out, err[:150])
                    what = " ".join(argv + ["--format", f])
                    for stream, data in (("stdout", out), ("stderr", err)):
                        if m := CONTROL.search(data):
                            failures.append(f"{what}: {stream} has a raw control byte {m.group(0)!r} "
                                            f"near {data[max(0, m.start() - 30):m.end() + 10]!r}")
                        if m := NONFINITE.search(data):
                            failures.append(f"{what}: {stream} prints {m.group(0).decode()!r} "
                                            f"near {data[max(0, m.start() - 40):m.end() + 10]!r}")
                    if f in ("json", "sarif") and code in (0, 1):
                        try:
                            json.loads(out, parse_constant=reject_constant)
                        except ValueError as e:
                            failures.append(f"{what}: not valid JSON: {e}")
                    if f == "junit" and code in (0, 1):
                        try:
                            xml.etree.ElementTree.fromstring(out)
                        except xml.etree.ElementTree.ParseError as e:
                            failures.append(f"{what}: not valid XML: {e}")
                    if f in ("markdown", "html") and b"<script" in out.lower():
                        failures.append(f"{what}: a raw <script> tag in {f} output")
                    if f == "csv" and code in (0, 1):
                        for cell in csv_formulas(out):
                            failures.append(f"{what}: CSV cell {cell!r} is a formula")
                    if code == 3 or code not in (0, 1, 2):
                        failures.append(f"{what}: exit {code}: {err.decode(errors='replace').strip()}")
                    if code == 2 and err.count(b"\n") != 1:
                        failures.append(f"{what}: exit 2 with {err.count(NL)} lines on stderr")
                    if code in (0, 1) and f != "table" and not out:
                        failures.append(f"{what}: exit {code} with no output")
                if not taken:
                    failures.append(f"{' '.join(argv)}: takes none of the formats {FORMATS}")
                if not answered and command != "paths":
                    failures.append(f"{' '.join(argv)}: no format gave an answer (exit 0 or 1): the case tests nothing")

        # Values no GPU has: refused at load by every command that reads the catalog, reported by validate.
        for name in sorted(os.listdir(FIX)):
            if name == "names.json":
                continue
            path = os.path.join(FIX, name)
            code, out, err = run(binary, ["catalog", "validate", path])
            runs += 1
            if code != 1 or b"] " not in out and b"]\n" not in out:
                failures.append(f"catalog validate {path}: exit {code}, expected 1 with findings")
            for argv in (["catalog", "list"], ["compare", "rtx-4090", "h100-sxm"],
                         ["memory", "--model", "7B", "--gpu", "rtx-4090"], ["cost", "--model", "7B", "--gpu", "rtx-4090"],
                         ["recommend", "--model", "7B"], ["check", os.path.join(tmp, "spec.json")]):
                code, out, err = run(binary, [*argv, "--catalog", path])
                runs += 1
                what = " ".join(argv + ["--catalog", path])
                if code != 2 or err.count(b"\n") != 1 or out:
                    failures.append(f"{what}: exit {code}, {err.count(NL)} stderr lines, {len(out)} bytes of stdout; "
                                    f"expected the catalog refused at load (exit 2, one line)")
                elif m := CONTROL.search(err):
                    failures.append(f"{what}: stderr has a raw control byte {m.group(0)!r}")
    for f in failures:
        print("FAIL", f)
    print(f"{runs} runs, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
