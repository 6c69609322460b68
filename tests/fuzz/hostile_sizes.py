#!/usr/bin/env python3
"""Hostile inputs at size: every parser of the command line on inputs near its caps (docs/fuzzing.md).

Makes the inputs at run time in a temporary folder (nothing is committed), runs the real binary on
each, and measures its wall time and peak resident memory (GNU time's %M). A case passes
when it ends within LIMIT_S seconds and LIMIT_MB of peak RSS, with exit 0, 1 or 2, and at most one
line on stderr (exactly one for exit 2). Exits 1 when a case fails.

Usage: tests/fuzz/hostile_sizes.py GPUADVISOR_BINARY [--full] [--limit-s S] [--limit-mb MB]
                                  [--only SUBSTRING] [--keep DIR]
  default  quick sizes (a few seconds in all; the ctest `hostile_sizes`, label `hostile`)
  --full   the sizes of docs/fuzzing.md's measured table (about a minute; 1.5 GB of scratch disk,
           most of it sparse)
"""
import argparse
import json
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = dict(os.environ, NO_COLOR="1", COLUMNS="100", GPUADVISOR_TODAY="2026-11-29", LC_ALL="C.UTF-8")
ENV.pop("GPUADVISOR_CATALOG", None)

# ---- writers (streamed, so the generator itself stays small)


def write_chunks(path, chunks):
    with open(path, "wb") as f:
        for c in chunks:
            f.write(c)
    return path


def repeat(prefix, item, n, sep, suffix):
    """prefix + item(0) sep item(1) ... + suffix, in chunks of about 1 MB."""
    yield prefix
    buf = []
    size = 0
    for i in range(n):
        s = (sep if i else b"") + item(i)
        buf.append(s)
        size += len(s)
        if size > 1 << 20:
            yield b"".join(buf)
            buf, size = [], 0
    yield b"".join(buf)
    yield suffix


def tiny_objects(path, megabytes):
    """[{},{},...]: the most values per byte JSON allows."""
    n = megabytes * (1 << 20) // 3
    return write_chunks(path, repeat(b"[", lambda i: b"{}", n, b",", b"]"))


# ---- GGUF v3 (the layout of tests/fixtures/modelfiles/make_fixtures.py)

GGUF_U32, GGUF_STRING, GGUF_ARRAY, GGUF_U64 = 4, 8, 9, 10


def gstr(s):
    return struct.pack("<Q", len(s)) + s


def gguf_head(n_tensors, n_kv):
    return b"GGUF" + struct.pack("<IQQ", 3, n_tensors, n_kv)


def gguf_kv_arch():
    return gstr(b"general.architecture") + struct.pack("<I", GGUF_STRING) + gstr(b"llama")


def gguf_tensor_info(name, offset):
    # One F32 tensor of shape [1] (4 bytes).
    return gstr(name) + struct.pack("<IQIQ", 1, 1, 0, offset)


def gguf_tail(f, n_tensors):
    f.write(b"\0" * ((32 - f.tell() % 32) % 32))
    f.write(b"\0\0\x80\x3f" * n_tensors)


def gguf_string_array(path, n):
    """tokenizer.ggml.tokens with n one-byte strings (a real vocabulary has 32k-256k)."""
    with open(path, "wb") as f:
        f.write(gguf_head(1, 2) + gguf_kv_arch())
        f.write(gstr(b"tokenizer.ggml.tokens") + struct.pack("<IIQ", GGUF_ARRAY, GGUF_STRING, n))
        one = gstr(b"a")
        for _ in range(n // 65536):
            f.write(one * 65536)
        f.write(one * (n % 65536))
        f.write(gguf_tensor_info(b"token_embd.weight", 0))
        gguf_tail(f, 1)
    return path


def gguf_sparse_array(path, size):
    """A file of `size` bytes, nearly all a hole: an array of as many empty strings as fit."""
    head = gguf_head(0, 2) + gguf_kv_arch() + gstr(b"tokenizer.ggml.tokens")
    with open(path, "wb") as f:
        f.write(head + struct.pack("<IIQ", GGUF_ARRAY, GGUF_STRING, (size - len(head) - 16) // 8))
        f.truncate(size)
    return path


def gguf_long_names(path, n, name_bytes):
    """n tensors whose names are name_bytes long; the names are zero bytes in a sparse file."""
    with open(path, "wb") as f:
        f.write(gguf_head(n, 1) + gguf_kv_arch())
        for i in range(n):
            f.write(struct.pack("<Q", name_bytes))
            f.seek(name_bytes, 1)
            f.write(struct.pack("<IQIQ", 1, 1, 0, 32 * i))
        gguf_tail(f, n)
    return path


def gguf_long_values(path, n, value_bytes):
    """n metadata keys with string values value_bytes long (zero bytes, sparse)."""
    with open(path, "wb") as f:
        f.write(gguf_head(0, n + 1) + gguf_kv_arch())
        for i in range(n):
            f.write(gstr(b"test.key.%d" % i) + struct.pack("<IQ", GGUF_STRING, value_bytes))
            f.seek(value_bytes, 1)
        f.truncate(f.tell())
    return path


def safetensors_many(path, n):
    """n tensors of one F32 each."""
    items = (b'"%x":{"dtype":"F32","shape":[1],"data_offsets":[%d,%d]}' % (i, 4 * i, 4 * i + 4) for i in range(n))
    header = b"{" + b",".join(items) + b"}"
    header += b" " * ((8 - len(header) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)))
        f.write(header)
        f.write(b"\0\0\x80\x3f" * n)
    return path


# ---- text inputs

SMI_FIXTURE = os.path.join(ROOT, "tests/fixtures/inspect/a100-healthy.csv")


def smi_rows(path, n, name=None):
    with open(SMI_FIXTURE, "rb") as f:
        header, row = f.read().split(b"\n")[:2]
    fields = row.split(b", ")
    if name is not None:
        fields[1] = name
    with open(path, "wb") as f:
        f.write(header + b"\n")
        for i in range(n):
            fields[0] = b"%d" % i
            fields[2] = b"%08X:%02X:00.0" % (i >> 8, i & 0xFF)
            f.write(b", ".join(fields) + b"\n")
    return path


def smi_columns(path, n, duplicate=False):
    """The real header and row plus n extra columns (all distinct, or the last one a repeat)."""
    with open(SMI_FIXTURE, "rb") as f:
        header, row = f.read().split(b"\n")[:2]
    extra = [b"extra.field.%d" % i for i in range(n)]
    if duplicate:
        extra[-1] = extra[0]
    return write_chunks(path, [header, b", ", b", ".join(extra), b"\n", row, b", 0" * n, b"\n"])


def xid_log(path, n, distinct):
    """n Xid lines (about 60 bytes each) from `distinct` devices and processes (0: every line its own)."""
    def line(i):
        k = i % distinct if distinct else i
        return b"[%d.%03d] NVRM: Xid (PCI:0000:%02x:%02x): %d, pid=%d, name=p%d\n" % (
            i // 1000, i % 1000, (k >> 8) & 0xFF, k & 0xFF, (13, 31, 43, 48, 79, 94)[i % 6], k, k)
    return write_chunks(path, repeat(b"", line, n, b"", b""))


# ---- JSON documents near their caps


def json_file(path, value):
    with open(path, "w") as f:
        json.dump(value, f)
    return path


def many_keys(path, base, n):
    """A real document plus n extra keys at its top level."""
    with open(base) as f:
        text = f.read().rstrip()
    assert text.endswith("}")
    extra = "".join(',"unused_key_%d":%d' % (i, i) for i in range(n))
    with open(path, "w") as f:
        f.write(text[:-1] + extra + "}")
    return path


def catalog_many(path, n):
    with open(os.path.join(ROOT, "tests/fixtures/catalog/good.json")) as f:
        doc = json.load(f)
    gpu = doc["gpus"][0]
    gpus = []
    for i in range(n):
        g = dict(gpu)
        g["id"] = "hostile-gpu-%d" % i
        g["name"] = "Hostile GPU %d" % i
        g.pop("aliases", None)
        gpus.append(g)
    doc["gpus"] = gpus
    return json_file(path, doc)


def batch_lines(path, n, line):
    return write_chunks(path, repeat(b"", lambda i: line, n, b"\n", b"\n"))


def fifo(path):
    os.mkfifo(path)
    return path


# ---- the cases

HF = os.path.join(ROOT, "tests/fixtures/hf/llama-3.1-8b/config.json")
SPEC = os.path.join(ROOT, "tests/fixtures/specs/cuda-too-old.pass.json")


def cases(full, t):
    """(name, size text, make() -> arguments). Sizes: (quick, full)."""
    def sz(q, f):
        return f if full else q

    p = lambda name: os.path.join(t, name)
    mb = sz(2, 60)
    out = []

    def add(name, size, make):
        out.append((name, size, make))

    # JSON: many keys, long strings, many tiny values, for every JSON reader.
    n = sz(10_000, 100_000)
    add("config.json with many keys", f"{n:,} keys", lambda n=n: ["memory", "--model-config", many_keys(p("keys.json"), HF, n), "--gpu", "h100-sxm"])
    n = sz(1 << 20, 10 << 20)
    add("profile key, unknown and long", f"{n >> 20} MiB key", lambda n=n: ["memory", "--profile", json_file(p("longkey.json"), {"x" * n: 1})])
    n = sz(10_000, 100_000)
    add("profile with many unknown keys", f"{n:,} keys", lambda n=n: ["memory", "--profile", json_file(p("pkeys.json"), {"model": "7B", **{"k%d" % i: 1 for i in range(n)}})])
    readers = [
        ("catalog", lambda f: ["catalog", "list", "--catalog", f]),
        ("profile", lambda f: ["memory", "--profile", f]),
        ("config.json", lambda f: ["memory", "--model-config", f]),
        ("spec", lambda f: ["check", f]),
        ("prices", lambda f: ["cost", "--model", "7B", "--gpu", "rtx-4090", "--prices", f]),
        ("quotes", lambda f: ["cost", "--model", "7B", "--gpu", "rtx-4090", "--quotes", f]),
        ("rules", lambda f: ["rules", "list", "--rules", f]),
        ("models", lambda f: ["models", "list", "--models", f]),
        ("batch line", lambda f: ["memory", "--batch-file", f]),
        ("safetensors index", lambda f: ["memory", "--model-file", f]),
    ]
    for reader, args in readers:
        fname = "model.safetensors.index.json" if reader == "safetensors index" else "tiny-%s.json" % reader.replace(" ", "-")
        add(f"[{{}},...] as {reader}", f"{mb} MB", lambda fname=fname, args=args: args(
            tiny_objects(p(fname), mb) if not os.path.exists(p(fname)) else p(fname)))
    n = sz(200_000, 1_900_000)
    add("[0,0,...] under the value cap", f"{n:,} values", lambda n=n: ["catalog", "list", "--catalog", write_chunks(p("zeros.json"), repeat(b"[", lambda i: b"0", n, b",", b"]"))])
    n = sz(2_000, 20_000)
    add("catalog with many GPUs", f"{n:,} GPUs", lambda n=n: ["catalog", "validate", "--catalog", catalog_many(p("gpus.json"), n)])
    n = sz(2_000, 100_000)
    add("spec with many GPU lines", f"{n:,} lines", lambda n=n: ["check", json_file(p("spec.json"), {**json.load(open(SPEC)), "gpus": [{"id": "h100-sxm", "count": 1}] * n})])
    add("spec at its caps, in JSON", "64 lines x 64 workloads", lambda: ["check", "--format", "json", json_file(p("spec-caps.json"), {
        **json.load(open(SPEC)), "gpus": [{"id": "h100-sxm", "count": 1}] * 64,
        "workloads": [{"model": "llama-3.1-8b", "task": "train", "batch": 4, "seq_len": 4096}] * 64})])
    n = sz(2_000, 20_000)
    add("batch file, failing lines", f"{n:,} lines", lambda n=n: ["memory", "--batch-file", batch_lines(p("batch-bad.jsonl"), n, b'{"model": "no-such-model"}')])
    n = sz(1_000, 10_000)
    add("batch file, workloads", f"{n:,} lines", lambda n=n: ["memory", "--batch-file", batch_lines(p("batch.jsonl"), n, b'{"model": "7B", "gpu": "rtx-4090"}')])

    # Model files.
    n = sz(10_000, 100_000)
    add("safetensors, many tensors", f"{n:,} tensors", lambda n=n: ["memory", "--model-file", safetensors_many(p("many.safetensors"), n), "--gpu", "h100-sxm"])
    n = sz(300_000, 1_600_000)
    add("safetensors, tensors over the cap", f"{n:,} tensors", lambda n=n: ["memory", "--model-file", safetensors_many(p("toomany.safetensors"), n), "--gpu", "h100-sxm"])
    n = sz(1_000_000, (1 << 24) - 1)
    add("GGUF string array", f"{n:,} strings", lambda n=n: ["memory", "--model-file", gguf_string_array(p("tokens.gguf"), n), "--gpu", "h100-sxm"])
    n = sz(64 << 20, 1 << 30)
    add("GGUF array, sparse file", f"{n >> 20} MiB", lambda n=n: ["memory", "--model-file", gguf_sparse_array(p("sparse.gguf"), n), "--gpu", "h100-sxm"])
    n = sz(60, 600)
    add("GGUF tensor names of 1 MiB", f"{n} tensors", lambda n=n: ["memory", "--model-file", gguf_long_names(p("names.gguf"), n, 1 << 20), "--gpu", "h100-sxm"])
    n = sz(60, 600)
    add("GGUF string values of 1 MiB", f"{n} keys", lambda n=n: ["memory", "--model-file", gguf_long_values(p("values.gguf"), n, 1 << 20), "--gpu", "h100-sxm"])

    # Text: many columns, lines and rows.
    n = sz(10_000, 100_000)
    add("nvidia-smi CSV, many columns", f"{n:,} columns", lambda n=n: ["inspect", "--from", smi_columns(p("cols.csv"), n)])
    add("nvidia-smi CSV, a repeated column", f"{n:,} columns", lambda n=n: ["inspect", "--from", smi_columns(p("dup.csv"), n, True)])
    n = sz(10_000, 100_000)
    add("nvidia-smi CSV, many rows", f"{n:,} rows", lambda n=n: ["inspect", "--from", smi_rows(p("rows.csv"), n)])
    add("nvidia-smi CSV at the row cap, in JSON", "8,192 rows", lambda: ["inspect", "--format", "json", "--from", smi_rows(p("rows-cap.csv"), 8192)])
    n = sz(10_000, 100_000)
    add("nvidia-smi CSV, long GPU name", f"{n // 1000} KB name", lambda n=n: ["inspect", "--from", smi_rows(p("name.csv"), 2, b"N" * n)])
    n = sz(5_000, 50_000)
    add("kernel log, distinct Xid lines", f"{n:,} lines", lambda n=n: ["diagnose", "--log", xid_log(p("distinct.log"), n, 0)])
    n = sz(100_000, 1_000_000)
    add("kernel log, many Xid lines", f"{n:,} lines", lambda n=n: ["diagnose", "--log", xid_log(p("many.log"), n, 64)])

    # Not regular files.
    add("FIFO without a writer as catalog", "", lambda n=n: ["catalog", "list", "--catalog", fifo(p("fifo.json"))])
    if full:  # each waits util::kPipeTimeoutSeconds
        add("FIFO without a writer as log", "", lambda n=n: ["diagnose", "--log", fifo(p("fifo.log"))])
        add("FIFO without a writer as capture", "", lambda n=n: ["inspect", "--from", fifo(p("fifo.csv"))])
    add("FIFO without a writer as model file", "", lambda n=n: ["memory", "--model-file", fifo(p("fifo.gguf"))])
    return out


def run(binary, args, kill_s, scratch):
    """(exit code, wall seconds, peak RSS in MB, stderr bytes). GNU time measures the peak: the
    ru_maxrss of a child forked from this script would start at the script's own size."""
    timed = os.path.join(scratch, ".time")
    cmd = [binary] + args
    if os.access("/usr/bin/time", os.X_OK):
        cmd = ["/usr/bin/time", "-f", "%M", "-o", timed] + cmd
    with open(os.devnull, "rb") as null, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdin=null, stdout=out, stderr=err, env=ENV, cwd=ROOT, start_new_session=True)
        try:
            code = proc.wait(timeout=kill_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            code = proc.wait()
        wall = time.monotonic() - start
        rss = 0.0
        if cmd[0] == "/usr/bin/time":
            try:
                with open(timed) as f:
                    text = f.read()
                os.remove(timed)
                rss = int(text.strip().split("\n")[-1]) / 1024
            except (OSError, ValueError):
                pass
            # GNU time reports a signal in its own line and exits 128 + N.
            err.seek(0)
        else:
            rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        err.seek(0)
        return code, wall, rss, err.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--full", action="store_true", help="the sizes of docs/fuzzing.md (default: quick sizes)")
    ap.add_argument("--limit-s", type=float, default=5.0)
    ap.add_argument("--limit-mb", type=float, default=500.0)
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    ap.add_argument("--keep", help="make the inputs in this folder and keep them")
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    t = a.keep or tempfile.mkdtemp(prefix="hostile-")
    os.makedirs(t, exist_ok=True)
    fails = 0
    total = 0
    try:
        print(f"{'case':<40} {'size':>16} {'exit':>4} {'s':>6} {'MB':>6}  result")
        for name, size, make in cases(a.full, t):
            if a.only not in name:
                continue
            total += 1
            args = make()
            code, wall, rss, stderr = run(binary, args, max(3 * a.limit_s, a.limit_s + 5), t)
            lines = stderr.count(b"\n") + (1 if stderr and not stderr.endswith(b"\n") else 0)
            why = ""
            if code < 0 or code > 128:
                why = f"killed after {wall:.1f} s" if wall > a.limit_s else f"signal {code - 128 if code > 0 else -code}"
            elif code not in (0, 1, 2):
                why = f"exit {code}"
            elif code == 2 and lines != 1:
                why = f"exit 2 with {lines} lines on stderr"
            elif lines > 1:
                why = f"{lines} lines on stderr"
            elif wall > a.limit_s:
                why = f"{wall:.1f} s over {a.limit_s:g} s"
            elif rss > a.limit_mb:
                why = f"{rss:.0f} MB over {a.limit_mb:g} MB"
            first = stderr.split(b"\n")[0][:110].decode("utf-8", "replace")
            print(f"{name:<40} {size:>16} {code:>4} {wall:6.2f} {rss:6.0f}  {'FAIL: ' + why if why else 'ok'}"
                  + (f"\n{'':<42}{first}" if first else ""), flush=True)
            fails += bool(why)
            for f in os.listdir(t):  # free the scratch disk as we go
                if not a.keep:
                    fp = os.path.join(t, f)
                    os.remove(fp) if not os.path.isdir(fp) else shutil.rmtree(fp)
    finally:
        if not a.keep:
            shutil.rmtree(t, ignore_errors=True)
    print(f"{total - fails} of {total} cases within {a.limit_s:g} s and {a.limit_mb:g} MB")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
