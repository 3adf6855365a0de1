"""sonde report on captures by sonde and by perf; perf report is the oracle."""
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import run, sonde, workload


def perf_rows(path, *args):
    """{key tuple: percent} from perf report --stdio (first percent column)."""
    out = run(["perf", "report", "-i", str(path), "--stdio", "--no-children", *args]).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(.*\S)\s*$", line)
        if m:
            rows[tuple(m.group(2).split())] = float(m.group(1))
    return rows


def sonde_rows(path, *args):
    out = sonde("report", "-i", str(path), "--no-children", "--call-graph", "none", *args).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(.*\S)\s*$", line)
        if m:
            rows[tuple(m.group(2).split())] = float(m.group(1))
    return rows


def report_json(path, *args):
    return json.loads(sonde("report", "-i", str(path), "--json", *args).stdout)


def agree(path, sort, top=6):
    mine, theirs = sonde_rows(path, "--sort", sort), perf_rows(path, "--sort", sort)
    assert mine, "sonde printed no rows"
    # The top rows (above 1%): perf also names PLT entries and the vdso from
    # its build-id cache, which single samples can put among the first few.
    # Rows perf could not name (hex) may be named by sonde: not compared.
    for key, pct in [kv for kv in sorted(theirs.items(), key=lambda kv: -kv[1])[:top]
                     if kv[1] >= 1.0 and not re.fullmatch(r"(0x)?[0-9a-f]+", kv[0][-1])]:
        assert key in mine, (key, mine)
        assert abs(mine[key] - pct) <= 0.5, (key, mine[key], pct)
    return mine


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    s, p = d / "sonde.data", d / "perf.data"
    sonde("record", "-F", "2000", "-o", str(s), "--", workload("split"), "1")
    run(["perf", "record", "-F", "2000", "-e", "cpu-clock", "-o", str(p), "--",
         workload("split"), "1"])
    return {"sonde": s, "perf": p, "dir": d}


@pytest.mark.parametrize("who", ["sonde", "perf"])
@pytest.mark.parametrize("sort", ["dso", "comm,dso"])
def test_objects_agree_with_perf(captures, who, sort):
    agree(captures[who], sort)


def test_json_holds_the_table(captures):
    j = report_json(captures["sonde"], "--sort", "dso", "--no-children")
    total = j["events"][0]["samples"]
    assert total > 300
    assert sum(e["self"][0]["samples"] for e in j["entries"]) == total
    top = j["entries"][0]
    assert top["dso"] == "split" and top["self"][0]["percent"] > 80


def perf_samples(path, sort):
    """{key: samples} from perf report -n (the oracle's counts)."""
    out = run(["perf", "report", "-i", str(path), "--stdio", "--sort", sort, "-n"]).stdout
    return {m.group(2): int(m.group(1)) for m in
            re.finditer(r"^\s+[\d.]+%\s+(\d+)\s+(\S.*?)\s*$", out, re.M)}


def test_filters(captures):
    # split then a getppid loop: the loop's time is mostly in the kernel, so
    # samples outside split exist on any machine (not only start-up faults).
    data = captures["dir"] / "filters.data"
    sonde("record", "-o", str(data), "--", "sh", "-c",
          f"{workload('split')} 0.3; exec {workload('getppid_loop')} 300000")
    per_dso = perf_samples(data, "dso")
    total = sum(per_dso.values())
    assert per_dso["split"] > 0 and per_dso["[kernel.kallsyms]"] > 0, per_dso
    j = report_json(data, "--sort", "dso", "--dso", "split")
    assert [(e["dso"], e["self"][0]["samples"]) for e in j["entries"]] == \
        [("split", per_dso["split"])]
    assert j["filtered_out"] == total - per_dso["split"]
    j = report_json(data, "--sort", "comm", "--comm", "nosuchcomm")
    assert j["entries"] == [] and j["filtered_out"] == total


def test_compressed_capture_reads_the_same(captures):
    z = captures["dir"] / "z.data"
    sonde("record", "-z", "-F", "2000", "-o", str(z), "--", workload("split"), "0.5")
    agree(z, "dso")


def test_truncated_file_reports_what_it_read(tmp_path):
    # Small rings, drained every few hundred samples: the exec's MMAP2 records
    # are in the first third of the file whichever CPU's ring held them (with
    # one drain at the end, the exec CPU's ring can come last and a cut at
    # two thirds loses every mapping, for perf as for sonde).
    src, cut = tmp_path / "s.data", tmp_path / "cut.data"
    sonde("record", "-m", "4", "-F", "2000", "-o", str(src), "--", workload("split"), "1")
    data = open(src, "rb").read()
    open(cut, "wb").write(data[: len(data) * 2 // 3])
    r = sonde("report", "-i", str(cut), "--sort", "dso", check=False)
    assert r.returncode == 0, r.stderr
    assert "truncated" in r.stderr and "offset 0x" in r.stderr, r.stderr
    assert "split" in r.stdout


def test_garbage_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.data"
    bad.write_bytes(b"PERFILE2" + b"\xff" * 200)
    r = sonde("report", "-i", str(bad), check=False)
    assert r.returncode == 1 and r.stderr.startswith("sonde: "), r.stderr
    r = sonde("report", "-i", str(tmp_path / "missing.data"), check=False)
    assert r.returncode == 1 and "missing.data" in r.stderr


def test_usage_errors():
    assert sonde("report", "--sort", "nope", check=False).returncode == 2
    assert sonde("report", "--percent-limit", "200", check=False).returncode == 2
    assert "usage: sonde report" in sonde("report", "--help").stdout


# ---- symbols -----------------------------------------------------------------

@pytest.mark.parametrize("who", ["sonde", "perf"])
def test_functions_agree_with_perf(captures, who):
    """The known 60/30/10 split, and perf's own numbers on the same file."""
    mine = agree(captures[who], "sym")
    agree(captures[who], "comm,dso,sym")
    for fn, share in (("hot_fn", 60), ("warm_fn", 30), ("cool_fn", 10)):
        assert abs(mine[("[.]", fn)] - share) < 10, (fn, mine)


def children_rows(path, tool):
    if tool == "perf":
        out = run(["perf", "report", "-i", str(path), "--stdio", "--children", "--sort", "sym",
                   "-g", "none"]).stdout
    else:
        out = sonde("report", "-i", str(path), "--children", "--sort", "sym", "-g", "none").stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+([\d.]+)%\s+(.*\S)\s*$", line)
        if m:
            rows[tuple(m.group(3).split())] = (float(m.group(1)), float(m.group(2)))
    return rows


def test_call_chains_children_agree_with_perf(tmp_path):
    g = tmp_path / "g.data"
    sonde("record", "-g", "-F", "2000", "-o", str(g), "--", workload("split"), "0.6")
    mine, theirs = children_rows(g, "sonde"), children_rows(g, "perf")
    # Rows perf could not name (hex, with or without 0x) may be named by sonde.
    top = [kv for kv in sorted(theirs.items(), key=lambda kv: -kv[1][0])[:8]
           if not re.fullmatch(r"(0x)?[0-9a-f]+", kv[0][-1])]
    for key, (total, self_) in top:
        assert key in mine, (key, mine)
        assert abs(mine[key][0] - total) <= 0.5 and abs(mine[key][1] - self_) <= 0.5, \
            (key, mine[key], (total, self_))
    # The graph under hot_fn's row leads to its caller.
    text = sonde("report", "-i", str(g), "--no-children").stdout
    assert re.search(r"\[\.\] hot_fn\n\s+\|\n\s+---hot_fn\n\s+__libc_start_call_main", text), text[:3000]
    j = report_json(g, "--no-children")
    hot = next(e for e in j["entries"] if e.get("symbol") == "hot_fn")
    assert hot["callchain"][0]["symbol"] == "hot_fn"


def test_kernel_symbols_from_the_captured_kallsyms(tmp_path):
    """A syscall-heavy capture with a kallsyms snapshot: [k] rows as perf names them."""
    k = tmp_path / "k.data"
    sonde("record", "--kallsyms", "-F", "5000", "-o", str(k), "--",
          workload("getppid_loop"), "1000000")
    mine = agree(k, "sym", top=5)
    kernel = [key for key in mine if key[0] == "[k]"]
    assert kernel and all(not key[1].startswith("0x") for key in kernel), kernel


def build_id(path):
    return re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", str(path)]).stdout).group(1)


def test_stripped_binary_with_debug_file_by_build_id(tmp_path):
    exe = tmp_path / "split-stripped"
    shutil.copy(workload("split"), exe)
    bid = build_id(exe)
    dbg = tmp_path / "debug" / ".build-id" / bid[:2] / (bid[2:] + ".debug")
    dbg.parent.mkdir(parents=True)
    run(["objcopy", "--only-keep-debug", str(exe), str(dbg)])
    run(["strip", "--strip-all", str(exe)])
    out = tmp_path / "s.data"
    sonde("record", "-o", str(out), "--", str(exe), "0.4")
    # perf record keeps the unstripped split in ~/.debug: an empty build-id cache here
    bare = sonde("report", "-i", str(out), "--sort", "sym", "-v", "--dso", exe.name,
                 "--buildid-dir", str(tmp_path / "nocache"))
    assert "hot_fn" not in bare.stdout
    assert bid in bare.stderr, bare.stderr  # -v says what it looked for
    j = report_json(out, "--sort", "dso,sym", "--debug-dir", str(tmp_path / "debug"))
    syms = {e["symbol"]: e["self"][0]["percent"] for e in j["entries"] if e["dso"] == exe.name}
    assert abs(syms["hot_fn"] - 60) < 10 and abs(syms["warm_fn"] - 30) < 10, syms
    assert not any(s.startswith("0x") for s in syms), syms


KMOD = os.path.join(os.environ.get("SONDE_BUILD", "build"), "tests", "fixtures", "sonde_chardev.ko")
KMOD_GEN = os.path.join(os.environ.get("SONDE_BUILD", "build"), "tests", "unit", "kmod_capture_gen")


@pytest.mark.skipif(not os.path.exists(KMOD), reason="no kernel headers: the .ko fixture was not built")
def test_kernel_module_functions_and_lines(tmp_path):
    """Samples inside a real .ko, placed at the section addresses saved in
    the capture, resolve to its functions and source lines."""
    out = tmp_path / "kmod.data"
    run([KMOD_GEN, KMOD, "0xffffffffc0a00000", str(out)])
    exp = json.load(open(str(out) + ".json"))
    total = exp["total_samples"]
    want_sym, want_line = {}, {}
    for s in exp["samples"]:
        name = s["symbol"].split("+")[0]
        want_sym[name] = want_sym.get(name, 0) + s["count"]
        if s["dso"] == "[sonde_chardev]":
            key = (os.path.basename(s["file"]), s["line"])
            want_line[key] = want_line.get(key, 0) + s["count"]
    mods = os.path.dirname(KMOD)
    j = report_json(out, "--sort", "dso,sym", "--modules-dir", mods)
    got = {e["symbol"]: e["self"][0]["samples"] for e in j["entries"]}
    for name, n in want_sym.items():
        assert got.get(name) == n, (name, n, got)
    # The module's listing alone, the way a user looks at one image.
    j = report_json(out, "--sort", "sym", "--dso", "[sonde_chardev]", "--modules-dir", mods)
    assert [e["symbol"] for e in j["entries"]][:3] == \
        ["sonde_chardev_mix", "sonde_chardev_write", "sonde_chardev_ioctl"]
    j = report_json(out, "--sort", "srcline", "--dso", "[sonde_chardev]", "--image",
                    "sonde_chardev=" + KMOD)
    got = {(os.path.basename(e["srcline"]), e["line"]): e["self"][0]["samples"]
           for e in j["entries"] if e["srcline"]}
    assert got == want_line
    assert sum(got.values()) == sum(want_line.values()) and total > 1000


def test_two_events_side_by_side(tmp_path):
    """--group: one overhead and one samples column per event; --sort-event orders by either;
    each column equals perf's report of that event."""
    two = tmp_path / "two.data"
    sonde("record", "-e", "cpu-clock", "-e", "page-faults/period=1/", "-o", str(two), "--",
          workload("split"), "0.4")
    j = report_json(two, "--sort", "dso", "--sort-event", "page-faults/period=1/")
    assert [e["name"] for e in j["events"]] == ["cpu-clock", "page-faults/period=1/"]
    faults = [e["self"][1]["period"] for e in j["entries"]]
    assert faults == sorted(faults, reverse=True) and faults[0] > 0
    text = sonde("report", "-i", str(two), "--sort", "dso", "--group").stdout
    assert re.search(r"# Overhead\s+Samples\s+Overhead\s+Samples\s+Shared Object", text), text
    perf = run(["perf", "report", "-i", str(two), "--stdio", "--sort", "dso"]).stdout
    block = perf[perf.index("of event 'page-faults"):]
    theirs = {m.group(2): float(m.group(1))
              for m in re.finditer(r"^\s+([\d.]+)%\s+(\S+)\s*$", block, re.M)}
    mine = {e["dso"]: e["self"][1]["percent"] for e in j["entries"] if e["self"][1]["period"]}
    for dso, pct in theirs.items():
        assert abs(mine[dso] - pct) <= 0.5, (dso, mine, theirs)


def test_kallsyms_cache_gives_the_same_report(tmp_path):
    """The cache of /proc/kallsyms (per boot and module set) changes nothing
    but the time; it is private to the user.  The kernel symbols are read
    only for a capture with kernel samples, so the workload makes them: a
    getppid loop spends most of its time in the kernel (a user-space loop
    may get none, and then no cache is written)."""
    d = tmp_path / "k.data"
    sonde("record", "-F", "2000", "--no-kallsyms", "-o", str(d), "--",
          workload("getppid_loop"), "1000000")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    args = ["report", "-i", str(d), "--sort", "sym"]
    first = sonde(*args, env=env).stdout
    files = list((tmp_path / "cache" / "sonde").glob("kallsyms-*"))
    assert len(files) == 1 and (files[0].stat().st_mode & 0o777) == 0o600
    assert sonde(*args, env=env).stdout == first
    assert sonde(*args, env=dict(env, SONDE_NO_CACHE="1")).stdout == first
    assert "[k]" in first


def test_dwarf_call_chains_unwound_offline(tmp_path):
    """split-nofp has no frame pointers: its --call-graph dwarf capture gets
    complete user chains from the saved registers and stacks."""
    d = tmp_path / "d.data"
    sonde("record", "--call-graph", "dwarf", "-o", str(d), "--", workload("split-nofp"), "0.4")
    j = report_json(d, "--no-children", "--sort", "sym", "--callchain-limit", "0")
    hot = next(e for e in j["entries"] if e.get("symbol") == "hot_fn")
    n = hot["self"][0]["samples"]
    top = hot["callchain"][0]
    assert top["symbol"] == "hot_fn" and top["counts"][0]["samples"] == n
    main = next(c for c in top["callers"] if c["symbol"] == "main")
    assert main["counts"][0]["samples"] >= 0.95 * n, (main["counts"], n)
    # ... and on to _start, as perf shows it.
    def depth_to(node, name):
        if node["symbol"] == name:
            return node["counts"][0]["samples"]
        return sum(depth_to(c, name) for c in node["callers"])
    assert depth_to(main, "_start") >= 0.95 * n
    r = sonde("report", "-i", str(d), "--no-unwind", "--sort", "sym", "--no-children")
    assert "hot_fn" in r.stdout and "main" not in r.stdout.split("hot_fn", 1)[1].split("warm_fn")[0]


def test_perf_pipe_mode(tmp_path):
    """perf record -o - (pipe mode: events and features arrive as records),
    read from standard input and from a file, agrees with perf report."""
    pipe = tmp_path / "pipe.data"
    with open(pipe, "wb") as f:
        subprocess.run(["perf", "record", "-e", "cpu-clock", "-F", "2000", "-o", "-", "--",
                        workload("split"), "0.5"], stdout=f, stderr=subprocess.DEVNULL,
                       check=True)
    mine = agree(pipe, "sym", top=4)
    assert abs(mine[("[.]", "hot_fn")] - 60) < 10, mine
    with open(pipe, "rb") as f:
        r = sonde("report", "-i", "-", "--sort", "sym", "--no-children", stdin=f)
    assert "of event 'cpu-clock'" in r.stdout and "hot_fn" in r.stdout


def test_inlined_frames_on_request(tmp_path):
    """inline_hot's churn() is always inlined into outer(): --inline shows it
    as a frame of the call graph; by default (as perf report) it does not."""
    g = tmp_path / "ih.data"
    sonde("record", "-g", "-o", str(g), "--", workload("inline_hot"), "0.5")
    with_inline = sonde("report", "-i", str(g), "--no-children", "--inline").stdout
    # (a branch of its own when a sample fell in outer's own instructions)
    m = re.search(r"(?:---|--(\d+\.\d+)%--)churn \(inlined\)\n\s+outer\n", with_inline)
    assert m and float(m.group(1) or 100) > 95, with_inline[:3000]
    plain = sonde("report", "-i", str(g), "--no-children").stdout
    assert "(inlined)" not in plain and re.search(r"---outer\n", plain), plain[:2000]
    # The row stays the function (perf's rows): outer, not churn.
    j = report_json(g, "--no-children", "--inline", "--sort", "sym")
    assert j["entries"][0]["symbol"] == "outer"
    top = j["entries"][0]["callchain"][0]
    assert top["inlined"] == "churn" and top["callers"][0]["symbol"] == "outer"
