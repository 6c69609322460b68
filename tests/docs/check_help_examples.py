#!/usr/bin/env python3
"""Runs every example under "Examples:" / "Example:" in every command's --help.

An example must run as written from the repository root, against files that exist there (the
example files live in docs/examples/), and end with exit status 0 or 1 (1: the answer is no, as
for a spec that fails its check); exit status 2 or more, or a shell that cannot run it, fails.
Files an example writes go to a scratch folder. Usage: check_help_examples.py BINARY
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
binary = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(root, "build", "gpuadvisor")
env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1", "COLUMNS": "100", "LC_ALL": "C.UTF-8",
       "GPUADVISOR_TODAY": "2026-11-29"}


def help_text(cmd):
    return subprocess.run([binary, *cmd, "--help"], capture_output=True, text=True, env=env).stdout


def subcommands(text):
    out, inside = [], False
    for line in text.splitlines():
        if line.strip() == "Subcommands:":
            inside = True
            continue
        if inside:
            m = re.match(r"^  (\S+)\s", line)
            if not m:
                break
            out.append(m.group(1))
    return out


def examples(text):
    out, inside = [], False
    for line in text.splitlines():
        if re.match(r"^Examples?:", line):
            inside = True
            continue
        if inside:
            if line.startswith("  gpuadvisor ") or line.startswith("  cat ") or line.startswith("  GPUADVISOR"):
                out.append(line.strip())
            elif not line.startswith("  "):
                inside = False
    return out


failures, ran, seen = [], 0, set()
scratch = tempfile.mkdtemp(prefix="gpuadvisor-help-")
try:
    # The scratch folder sees the repository's files (read-only use) and takes what examples write.
    for name in os.listdir(root):
        if name not in ("build",) and not name.startswith("."):
            os.symlink(os.path.join(root, name), os.path.join(scratch, name))
    bindir = os.path.join(scratch, ".bin")
    os.mkdir(bindir)
    os.symlink(binary, os.path.join(bindir, "gpuadvisor"))
    run_env = dict(env, PATH=bindir + ":" + env["PATH"])
    queue = [[]]
    while queue:
        cmd = queue.pop(0)
        text = help_text(cmd)
        queue.extend(cmd + [s] for s in subcommands(text))
        for ex in examples(text):
            if ex in seen or "(on the GPU machine" in ex:  # needs nvidia-smi, which CI has not
                continue
            seen.add(ex)
            ran += 1
            r = subprocess.run(["bash", "-o", "pipefail", "-c", ex], cwd=scratch, env=run_env, capture_output=True,
                               text=True, stdin=subprocess.DEVNULL, timeout=60)
            if r.returncode not in (0, 1):
                err = (r.stderr.strip().splitlines() or [""])[-1]
                failures.append(f"gpuadvisor {' '.join(cmd)} --help: '{ex}' exited {r.returncode}: {err}")
finally:
    shutil.rmtree(scratch)

for f in failures:
    print(f)
print(f"{ran} help examples run; {len(failures)} failed")
sys.exit(1 if failures else 0)
