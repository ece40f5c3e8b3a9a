#!/usr/bin/env python3
"""render.py RESULTS_DIR: the markdown table of a bench/run-all.sh run.

Reads RESULTS_DIR/meta.txt and, per comparison, STORAGE--CASE.{json,rc,cmd,log}
(the JSON is `iohint compare --json`, schema iohint-compare/1 in
docs/compare.md) and prints markdown on stdout: the machine and protocol, one
row per case and storage with the median wall time of every variant and its
ratio to the baseline, then the exact commands and the full tables.
"""
import glob
import json
import os
import re
import sys

STORAGE_ORDER = ["local", "loop", "net", "hdd"]
STORAGE_DESC = {
    "local": "local disk (virtio, read-ahead {ra} KiB)",
    "loop": "ext4 on a direct-I/O loop device, read-ahead 128 KiB",
    "net": "slowfs net: 1.25 ms per request, 117 MB/s (seed 001's LAN)",
    "hdd": "slowfs hdd: 4-8 ms random, 0.1 ms sequential, 150 MB/s, queue depth 1",
}


def secs(s):
    if s is None:
        return "n/a"
    if s >= 100:
        return "%.0f s" % s
    if s >= 1:
        return "%.2f s" % s
    if s >= 0.1:
        return "%.0f ms" % (s * 1e3)
    if s >= 0.001:
        return "%.1f ms" % (s * 1e3)
    return "%.0f us" % (s * 1e6)


def count(v):
    return "n/a" if v is None else "{:,.0f}".format(v)


def size(b):
    if b is None:
        return "n/a"
    for unit in ["B", "KiB", "MiB", "GiB"]:
        if b < 1024 or unit == "GiB":
            return ("%.0f %s" if unit == "B" or b >= 100 else "%.1f %s") % (b, unit)
        b /= 1024.0


def ratio_words(v, base):
    """'19.0x faster', '1.04x slower', with ~ when the ranges overlap."""
    if v["median"]["wall_s"] is None or base["median"]["wall_s"] in (None, 0):
        return "n/a"
    r = v["median"]["wall_s"] / base["median"]["wall_s"]
    overlap = v["wall_min_s"] <= base["wall_max_s"] and v["wall_max_s"] >= base["wall_min_s"]
    if 0.97 <= r <= 1.03:
        w = "same"
    elif r < 1:
        w = "%.1fx faster" % (1 / r) if 1 / r >= 1.95 else "%.2fx faster" % (1 / r)
    else:
        w = "%.2fx slower" % r
    if overlap and w != "same":
        w += " ~"
    return w


def cell(v, base):
    t = secs(v["median"]["wall_s"])
    if v is base:
        return t
    t = "%s (%s)" % (t, ratio_words(v, base))
    if not v["identical"]:
        t += " **OUTPUT DIFFERS**"
    return t


def load(resdir):
    meta = {}
    with open(os.path.join(resdir, "meta.txt")) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                meta[k] = v
    rows = []
    for cmd in sorted(glob.glob(os.path.join(resdir, "*.cmd"))):
        stem = cmd[:-4]
        idx, storage, case = os.path.basename(stem).split("--", 2)
        case = case.replace("--", "/").replace("pct", "%")
        rc = open(stem + ".rc").read().strip() if os.path.exists(stem + ".rc") else "?"
        data = None
        try:
            with open(stem + ".json") as f:
                data = json.load(f)
        except (OSError, ValueError):
            pass
        log = open(stem + ".log", errors="replace").read() if os.path.exists(stem + ".log") else ""
        rows.append({"idx": int(idx), "storage": storage, "case": case, "rc": rc, "json": data,
                     "cmd": open(cmd).read().strip(), "log": log})
    order = {s: i for i, s in enumerate(STORAGE_ORDER)}
    rows.sort(key=lambda r: (r["idx"], order.get(r["storage"], 9)))
    return meta, rows


def status_words(r):
    if r["json"] is None:
        return {"124": "timed out", "137": "timed out"}.get(r["rc"], "failed (status %s)" % r["rc"])
    j = r["json"]
    words = "identical" if j["identical"] else "**RESULTS DIFFER**"
    if j.get("interrupted"):
        words += "; %s after %d of %d rounds" % (
            "timed out" if r["rc"] in ("124", "137") else "interrupted",
            j["runs_per_variant"], j["runs_requested"])
    return words


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: render.py RESULTS_DIR")
    resdir = sys.argv[1]
    meta, rows = load(resdir)
    p = print
    p("### Measured: %s data, %s" % (meta.get("size", "?"), meta.get("date", "?")))
    p()
    p("- machine: `%s`, kernel %s, %s CPUs, %s; local data on %s (read-ahead %s KiB)" % (
        meta.get("host"), meta.get("kernel"), meta.get("cpus"), meta.get("memory"),
        meta.get("local_device"), meta.get("local_read_ahead_kb")))
    p("- iohint at commit `%s`, build `%s`" % (meta.get("commit"), meta.get("build")))
    orders = {r["json"].get("order", "fixed") for r in rows if r["json"]}
    order_words = ("no comparison completed" if not orders else
                   "every round in a new random order, so that no variant always runs after "
                   "the same one" if orders == {"shuffled"} else
                   "A B C A B C ..." if orders == {"fixed"} else "orders: " + ", ".join(sorted(orders)))
    settles = {r["json"].get("settle_s", 0) for r in rows if r["json"]}
    settle = max(settles) if settles else 0
    start_words = ("the run starts %g s later (\"coldB\", `--settle %g`)" % (settle, settle)
                   if settle else "the run starts at once (\"coldA\")")
    if len(settles) > 1:
        start_words += " (waits differ between cases: %s s)" % ", ".join("%g" % x for x in sorted(settles))
    p(("- protocol: `iohint compare --cold -n %s%s`: every variant %s times, interleaved "
      "(" + order_words + "); "
      "before every run the files the command reads are evicted with "
      "`posix_fadvise(DONTNEED)` and " + start_words + "; on slowfs the "
      "source files too. Medians of wall time; ratio = baseline median / variant median; "
      "`~` = the variant's min-max overlaps the baseline's (not a clear difference).")
      % (meta.get("runs"), " --settle %g" % settle if settle else "", meta.get("runs")))
    p("- storages: " + "; ".join(
        "**%s**: %s" % (s, STORAGE_DESC[s].format(ra=meta.get("local_read_ahead_kb")))
        for s in meta.get("storages", "").split(",") if s in STORAGE_DESC))
    if "elapsed" in meta:
        p("- the whole run took %d min" % round(int(meta["elapsed"]) / 60))
    p()
    p("| case | storage | no shim | tracing (`none`) | `auto` | explicit policies | results |")
    p("|---|---|---|---|---|---|---|")
    for r in rows:
        j = r["json"]
        if j is None:
            p("| %s | %s | | | | | %s |" % (r["case"], r["storage"], status_words(r)))
            continue
        vs = j["variants"]
        base = vs[0]
        by = {v["policy"]: v for v in vs}
        none = by.get("none")
        auto = by.get("auto")
        explicit = [v for v in vs[1:] if v["policy"] not in ("none", "auto")]
        p("| %s | %s | %s | %s | %s | %s | %s |" % (
            r["case"], r["storage"], cell(base, base),
            cell(none, base) if none else "",
            cell(auto, base) if auto else "",
            "<br>".join("`%s` %s" % (v["policy"], cell(v, base)) for v in explicit),
            status_words(r)))
    p()
    p("Storage read and read system calls per run (medians; storage is 0 on FUSE):")
    p()
    p("| case | storage | " + " | ".join(["no shim", "`none`", "`auto`", "explicit"]) + " |")
    p("|---|---|---|---|---|---|")
    for r in rows:
        j = r["json"]
        if j is None:
            continue
        vs = j["variants"]

        def io(v):
            m = v["median"]
            return "%s, %s calls" % (size(m["storage_read_bytes"]), count(m["read_syscalls"]))
        by = {v["policy"]: v for v in vs}
        explicit = [v for v in vs[1:] if v["policy"] not in ("none", "auto")]
        p("| %s | %s | %s | %s | %s | %s |" % (
            r["case"], r["storage"], io(vs[0]),
            io(by["none"]) if "none" in by else "", io(by["auto"]) if "auto" in by else "",
            "<br>".join("`%s` %s" % (v["policy"], io(v)) for v in explicit)))
    p()
    p("<details><summary>The commands and the full tables of iohint compare</summary>")
    p()
    for r in rows:
        p("**%s on %s** (exit status %s)" % (r["case"], r["storage"], r["rc"]))
        p()
        p("```")
        p(r["cmd"] if len(r["cmd"]) < 600 else r["cmd"][:600] + " ...")
        lines = r["log"].splitlines()
        start = next((i - 1 for i, line in enumerate(lines)
                      if re.match(r"^  \d+ timed runs? per variant", line)), None)
        table = lines[start:] if start is not None and start >= 0 else lines[-30:]
        p("\n".join(table).rstrip())
        p("```")
        p()
    p("</details>")


if __name__ == "__main__":
    main()
