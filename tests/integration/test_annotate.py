"""sonde annotate: hot lines and instructions, checked against eu-addr2line,
perf script's sample addresses, sonde report's totals and a .ko fixture."""
import collections
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, TOP, run, sonde, workload

SRC = os.path.join(TOP, "tests", "workloads", "hot_line.c")


def marker_line(path, marker):
    """1-based number of the source line holding `marker`."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if marker in line:
                return n
    raise AssertionError(f"{marker} not in {path}")


def annotate_json(path, *args):
    return json.loads(sonde("annotate", "-i", str(path), "--json", *args).stdout)


def only(j):
    assert len(j["symbols"]) == 1, [s["symbol"] for s in j["symbols"]]
    return j["symbols"][0]


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    d = tmp_path_factory.mktemp("annotate")
    out = d / "hl.data"
    sonde("record", "-F", "4000", "-o", str(out), "--", workload("hot_line"), "1")
    return out


def test_the_hot_line_is_the_hottest(capture):
    a = only(annotate_json(capture, "hot_loop_fn"))
    hot = marker_line(SRC, "HOT:")
    lines = sorted(a["lines"], key=lambda l: -l["counts"][0]["samples"])
    top = lines[0]
    assert os.path.basename(top["file"]) == "hot_line.c" and top["line"] == hot, lines[:3]
    assert top["hot"] and top["counts"][0]["percent"] > 50, top
    assert "HOT:" in top["text"]  # the source was found through the DWARF path
    # The text view agrees: --sort hot starts with that line, marked.
    text = sonde("annotate", "-i", str(capture), "--sort", "hot", "hot_loop_fn").stdout
    rows = [l for l in text.splitlines() if not l.startswith("#") and "hot_line.c:" in l]
    assert re.match(r"\s+[\d.]+ \* : hot_line\.c:%d\s" % hot, rows[0]), text


def test_the_inlined_line_is_named(capture):
    a = only(annotate_json(capture, "hot_loop_fn"))
    mix = marker_line(SRC, "MIX:")
    inl = [l for l in a["lines"] if l["line"] == mix]
    assert inl and inl[0]["inlined"] == "mix", inl
    assert any(i["inlined"] == "mix" and i["line"] == mix for i in a["instructions"])


def test_lines_agree_with_eu_addr2line(capture):
    a = only(annotate_json(capture, "hot_loop_fn"))
    sampled = [i for i in a["instructions"] if i["counts"][0]["samples"]]
    assert sampled
    out = run(["eu-addr2line", "-e", workload("hot_line")] + [i["addr"] for i in sampled]).stdout
    for ins, loc in zip(sampled, out.splitlines()):
        m = re.match(r"(.*?):(\d+)(?::\d+)?$", loc)
        assert m, loc
        assert os.path.basename(m.group(1)) == os.path.basename(ins["file"]), (ins, loc)
        assert int(m.group(2)) == ins["line"], (ins, loc)


def test_instruction_counts_match_perf_script_and_report(capture):
    a = only(annotate_json(capture, "hot_loop_fn"))
    mine = {int(i["addr"], 16) - int(a["start"], 16): i["counts"][0]["samples"]
            for i in a["instructions"] if i["counts"][0]["samples"]}
    # perf's own reading of the same file: samples per offset in the function
    out = run(["perf", "script", "-i", str(capture), "-F", "ip,sym,symoff"]).stdout
    perf = collections.Counter(int(m.group(1), 16) for m in
                               re.finditer(r"^\s*[0-9a-f]+ hot_loop_fn\+0x([0-9a-f]+)$", out, re.M))
    assert mine == dict(perf), (mine, perf)
    total = sum(mine.values())
    assert a["total"][0]["samples"] == total
    assert sum(l["counts"][0]["samples"] for l in a["lines"]) == total
    rep = json.loads(sonde("report", "-i", str(capture), "--json").stdout)
    in_report = sum(e["self"][0]["samples"] for e in rep["entries"]
                    if e.get("symbol") == "hot_loop_fn")
    assert in_report == total and total > 200, (in_report, total)


def test_symbol_id_from_the_report(capture):
    rep = json.loads(sonde("report", "-i", str(capture), "--json", "--sort", "dso,sym").stdout)
    e = next(e for e in rep["entries"] if e.get("symbol") == "hot_loop_fn")
    a = only(annotate_json(capture, "--symbol-id", str(e["symbol_id"])))
    assert a["symbol"] == "hot_loop_fn" and a["symbol_id"] == e["symbol_id"]
    assert a["total"][0]["samples"] == e["self"][0]["samples"]
    assert "--symbol-id" in sonde("report", "--help").stdout
    r = sonde("annotate", "-i", str(capture), "--symbol-id", "999999999", check=False)
    assert r.returncode == 1 and "no symbol id" in r.stderr


def test_views(capture):
    hot = marker_line(SRC, "HOT:")
    mixed = sonde("annotate", "-i", str(capture), "hot_loop_fn").stdout
    div = re.compile(r"[0-9a-f]+:\s+div")  # the instruction's row
    assert div.search(mixed) and "HOT:" in mixed
    src = sonde("annotate", "-i", str(capture), "--source-only", "hot_loop_fn").stdout
    assert "HOT:" in src and not div.search(src)
    assert re.search(r"\* :\s+%d\s" % hot, src), src
    asm = sonde("annotate", "-i", str(capture), "--asm-only", "hot_loop_fn").stdout
    assert div.search(asm) and "HOT:" not in asm
    # Without a symbol: the hottest function, which is this one.
    assert only(annotate_json(capture))["symbol"] == "hot_loop_fn"


def test_usage_errors(capture):
    assert sonde("annotate", "--sort", "nope", check=False).returncode == 2
    assert sonde("annotate", "--prefix-map", "nope", check=False).returncode == 2
    assert "usage: sonde annotate" in sonde("annotate", "--help").stdout
    r = sonde("annotate", "-i", str(capture), "no_such_fn", check=False)
    assert r.returncode == 1 and "no samples in no_such_fn" in r.stderr


# ---- objects built elsewhere, stripped, or in the kernel ---------------------

def build_id(path):
    return re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", str(path)]).stdout).group(1)


def test_stripped_binary_with_debug_file_by_build_id(tmp_path):
    exe = tmp_path / "hot_line-stripped"
    shutil.copy(workload("hot_line"), exe)
    bid = build_id(exe)
    dbg = tmp_path / "debug" / ".build-id" / bid[:2] / (bid[2:] + ".debug")
    dbg.parent.mkdir(parents=True)
    run(["objcopy", "--only-keep-debug", str(exe), str(dbg)])
    run(["strip", "--strip-all", str(exe)])
    out = tmp_path / "s.data"
    sonde("record", "-F", "2000", "-o", str(out), "--", str(exe), "0.5")
    r = sonde("annotate", "-i", str(out), "hot_loop_fn", check=False)
    assert r.returncode == 1 and "no samples in hot_loop_fn" in r.stderr
    a = only(annotate_json(out, "--debug-dir", str(tmp_path / "debug"), "hot_loop_fn"))
    # the code comes from the stripped binary (the .debug file's .text is NOBITS)
    assert a["disassembly"] == "ok" and any("div" in i["text"] for i in a["instructions"])
    top = max(a["lines"], key=lambda l: l["counts"][0]["samples"])
    assert top["line"] == marker_line(SRC, "HOT:") and "HOT:" in top["text"]


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory):
    """hot_line built from a copy of its source in a directory that then moves."""
    d = tmp_path_factory.mktemp("elsewhere")
    built, moved = d / "builddir", d / "moved" / "src"
    built.mkdir()
    shutil.copy(SRC, built / "hot_line.c")
    exe = d / "hl"
    run(["cc", "-g", "-O1", "-fno-omit-frame-pointer", str(built / "hot_line.c"), "-o", str(exe)])
    out = d / "e.data"
    sonde("record", "-F", "2000", "-o", str(out), "--", str(exe), "0.5")
    moved.parent.mkdir()
    shutil.move(str(built), str(moved))
    return {"data": out, "built": built, "moved": moved}


def test_missing_source_is_reported_and_asm_still_prints(elsewhere):
    text = sonde("annotate", "-i", str(elsewhere["data"]), "hot_loop_fn").stdout
    want = str(elsewhere["built"] / "hot_line.c")
    assert re.search(r"# source .*hot_line\.c: not found \(looked for [^)]*%s" % re.escape(want),
                     text), text
    assert re.search(r"[0-9a-f]+:\s+div", text) and "HOT:" not in text
    a = only(annotate_json(elsewhere["data"], "hot_loop_fn"))
    assert a["sources"][0]["path"] is None and want in a["sources"][0]["looked_for"]


def test_prefix_map_and_source_dir_relocate_sources(elsewhere):
    for opt in (["--prefix-map", f'{elsewhere["built"]}={elsewhere["moved"]}'],
                ["--source-dir", str(elsewhere["moved"])]):
        a = only(annotate_json(elsewhere["data"], *opt, "hot_loop_fn"))
        assert a["sources"][0]["path"] == str(elsewhere["moved"] / "hot_line.c"), (opt, a["sources"])
        top = max(a["lines"], key=lambda l: l["counts"][0]["samples"])
        assert "HOT:" in top["text"], (opt, top)


KMOD = os.path.join(BUILD, "tests", "fixtures", "sonde_chardev.ko")
KMOD_GEN = os.path.join(BUILD, "tests", "unit", "kmod_capture_gen")


@pytest.mark.skipif(not os.path.exists(KMOD), reason="no kernel headers: the .ko fixture was not built")
def test_kernel_module_function(tmp_path):
    """sonde_chardev_mix in the .ko: instructions from its .text as placed at
    the saved section addresses, lines and the inlined fold_byte from its DWARF,
    exactly the counts the generator put at each address."""
    out = tmp_path / "kmod.data"
    run([KMOD_GEN, KMOD, "0xffffffffc0a00000", str(out)])
    exp = [s for s in json.load(open(str(out) + ".json"))["samples"]
           if s["symbol"] == "sonde_chardev_mix"]
    a = only(annotate_json(out, "--modules-dir", os.path.dirname(KMOD), "sonde_chardev_mix"))
    assert a["dso"] == "[sonde_chardev]" and a["disassembly"] == "ok"
    got = {int(i["addr"], 16): i for i in a["instructions"] if i["counts"][0]["samples"]}
    assert {int(s["addr"], 16): s["count"] for s in exp} == \
        {k: i["counts"][0]["samples"] for k, i in got.items()}
    for s in exp:
        ins = got[int(s["addr"], 16)]
        assert ins["line"] == s["line"] and ins["text"], (s, ins)
        assert (ins["inlined"] or "sonde_chardev_mix") == s["function"], (s, ins)
    fold = [l for l in a["lines"] if l["inlined"] == "fold_byte"]
    assert fold and all(l["counts"][0]["samples"] for l in fold), fold
    assert a["sources"][0]["path"] and "fold_byte" in sonde(
        "annotate", "-i", str(out), "--modules-dir", os.path.dirname(KMOD), "--source-only",
        "sonde_chardev_mix").stdout


def test_events_side_by_side(tmp_path):
    two = tmp_path / "two.data"
    sonde("record", "-F", "2000", "-e", "cpu-clock", "-e", "task-clock", "-o", str(two), "--",
          workload("hot_line"), "0.5")
    j = annotate_json(two, "hot_loop_fn")
    assert j["events"] == ["cpu-clock", "task-clock"]
    a = only(j)
    rep = json.loads(sonde("report", "-i", str(two), "--json", "--sort", "sym").stdout)
    e = next(e for e in rep["entries"] if e.get("symbol") == "hot_loop_fn")
    for ev in (0, 1):
        assert a["total"][ev]["samples"] == e["self"][ev]["samples"] > 100
        assert sum(i["counts"][ev]["samples"] for i in a["instructions"]) == \
            a["total"][ev]["samples"]
    text = sonde("annotate", "-i", str(two), "--source-only", "hot_loop_fn").stdout
    hot = marker_line(SRC, "HOT:")
    assert re.search(r"^\s+[\d.]+\s+[\d.]+ \* :\s+%d\s" % hot, text, re.M), text


def test_kernel_function_without_code_still_counts(tmp_path):
    """Kernel symbols from kallsyms only: no code to read, the sampled
    addresses still carry the counts and the header says why."""
    k = tmp_path / "k.data"
    sonde("record", "--kallsyms", "-F", "5000", "-o", str(k), "--",
          workload("getppid_loop"), "300000")
    rep = json.loads(sonde("report", "-i", str(k), "--json", "--sort", "sym").stdout)
    e = next(e for e in rep["entries"] if e.get("kernel") and "symbol_id" in e)
    a = only(annotate_json(k, "--symbol-id", str(e["symbol_id"])))
    assert a["disassembly"] != "ok"
    assert sum(i["counts"][0]["samples"] for i in a["instructions"]) == e["self"][0]["samples"]
    text = sonde("annotate", "-i", str(k), "--symbol-id", str(e["symbol_id"])).stdout
    assert "# no code:" in text and "(no code read at this address)" in text
