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
    for key, pct in sorted(theirs.items(), key=lambda kv: -kv[1])[:top]:
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
    assert total > 1000
    assert sum(e["self"][0]["samples"] for e in j["entries"]) == total
    top = j["entries"][0]
    assert top["dso"] == "split" and top["self"][0]["percent"] > 80


def test_filters(captures):
    j = report_json(captures["sonde"], "--sort", "dso", "--dso", "split")
    assert [e["dso"] for e in j["entries"]] == ["split"]
    assert j["filtered_out"] > 0
    j = report_json(captures["sonde"], "--sort", "comm", "--comm", "nosuchcomm")
    assert j["entries"] == [] and j["filtered_out"] == j["filtered_out"]


def test_compressed_capture_reads_the_same(captures):
    z = captures["dir"] / "z.data"
    sonde("record", "-z", "-F", "2000", "-o", str(z), "--", workload("split"), "0.5")
    agree(z, "dso")


def test_truncated_file_reports_what_it_read(captures):
    src = captures["sonde"]
    cut = captures["dir"] / "cut.data"
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
