"""sonde report on captures of several events: one section per event with
samples (perf report's layout), side by side with --group; perf report on
the same file is the oracle."""
import json
import re

import pytest

from conftest import run, sonde, workload

MULTI = "cpu-clock,task-clock,syscalls:sys_enter_getppid,raw_syscalls:sys_exit"
CALLS = 1234  # getppid_loop makes exactly this many getppid calls


def sections(text):
    """[(event, event count, {key tuple: percent})] of a --stdio report."""
    out = []
    for block in re.split(r"^# Samples: ", text, flags=re.M)[1:]:
        name = re.match(r"\S+\s+of events? '([^']*)'", block).group(1)
        count = int(re.search(r"^# Event count \(approx\.\): (\d+)", block, re.M).group(1))
        rows = {}
        for m in re.finditer(r"^\s+([\d.]+)%\s+(.*\S)\s*$", block, re.M):
            rows[tuple(m.group(2).split())] = float(m.group(1))
        out.append((name, count, rows))
    return out


def perf_sections(path, *args):
    return sections(run(["perf", "report", "-i", str(path), "--stdio", *args]).stdout)


def sonde_sections(path, *args):
    return sections(sonde("report", "-i", str(path), *args).stdout)


def same_sections(path, *args):
    """Sections, their event counts and rows equal perf's; returns sonde's."""
    mine, theirs = sonde_sections(path, *args), perf_sections(path, *args)
    assert [s[:2] for s in mine] == [s[:2] for s in theirs], (mine, theirs)
    for (name, _, rows), (_, _, prows) in zip(mine, theirs):
        assert rows.keys() == prows.keys(), (name, rows, prows)
        for key, pct in prows.items():
            assert abs(rows[key] - pct) <= 0.01, (name, key, rows[key], pct)
    return mine


@pytest.fixture(scope="module")
def multi(tmp_path_factory):
    """The same four events recorded by perf and by sonde."""
    d = tmp_path_factory.mktemp("events")
    p, s = d / "perf.data", d / "sonde.data"
    run(["perf", "record", "-q", "--no-buildid-cache", "-e", MULTI, "-o", str(p), "--",
         workload("getppid_loop"), str(CALLS)])
    sonde("record", "-e", MULTI, "-o", str(s), "--", workload("getppid_loop"), str(CALLS))
    return {"perf": p, "sonde": s}


@pytest.mark.parametrize("who", ["perf", "sonde"])
def test_later_events_have_their_own_sections(multi, who):
    """The getppid and sys_exit samples, which the first event's rows lack,
    get sections of their own with perf's event counts and rows."""
    mine = same_sections(multi[who], "--sort", "comm,dso")
    by_name = {name: (count, rows) for name, count, rows in mine}
    count, rows = by_name["syscalls:sys_enter_getppid"]
    assert count == CALLS and rows == {("getppid_loop", "libc.so.6"): 100.0}, rows
    count, rows = by_name["raw_syscalls:sys_exit"]
    assert count >= CALLS and rows == {("getppid_loop", "[kernel.kallsyms]"): 100.0}, rows
    # The default sort keys as well: every section has rows.
    for name, count, rows in same_sections(multi[who], "--sort", "comm,dso,sym"):
        assert rows and count, name


@pytest.mark.parametrize("who", ["perf", "sonde"])
def test_group_puts_events_side_by_side(multi, who):
    """--group: one table, a row for what any event counted (perf --group)."""
    text = sonde("report", "-i", str(multi[who]), "--group", "--sort", "dso").stdout
    assert len(sections(text)) == 1
    theirs = run(["perf", "report", "-i", str(multi[who]), "--stdio", "--group",
                  "--sort", "dso"]).stdout
    prow = {m.group(5): [float(m.group(i)) for i in range(1, 5)] for m in re.finditer(
        r"^\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)%\s+(\S+)\s*$", theirs, re.M)}
    # sonde adds a samples column per event side by side.
    mrow = {m.group(9): [float(m.group(i)) for i in (1, 3, 5, 7)] for m in re.finditer(
        r"^\s+([\d.]+)%\s+(\d+)\s+([\d.]+)%\s+(\d+)\s+([\d.]+)%\s+(\d+)\s+([\d.]+)%\s+(\d+)"
        r"\s+(\S+)\s*$", text, re.M)}
    assert prow and mrow.keys() == prow.keys(), (mrow, prow)
    for dso, pcts in prow.items():
        assert all(abs(a - b) <= 0.01 for a, b in zip(mrow[dso], pcts)), (dso, mrow, prow)
    assert mrow["libc.so.6"][2] == 100.0


def test_json_sections_and_rows(multi):
    """JSON: the sections of the text view, and every row any event counted."""
    j = json.loads(sonde("report", "-i", str(multi["perf"]), "--json", "--sort", "dso").stdout)
    names = [e["name"] for e in j["events"]]
    assert [names[s["events"][0]] for s in j["sections"]] == names
    ids = {e["id"]: e for e in j["entries"]}
    getppid = j["sections"][names.index("syscalls:sys_enter_getppid")]
    assert [ids[i]["dso"] for i in getppid["rows"]] == ["libc.so.6"]
    assert ids[getppid["rows"][0]]["self"][2]["samples"] == CALLS
    grouped = json.loads(sonde("report", "-i", str(multi["perf"]), "--json", "--group",
                               "--sort", "dso").stdout)
    assert [s["events"] for s in grouped["sections"]] == [[0, 1, 2, 3]]


@pytest.mark.tracefs_exclusive
def test_many_tracepoints_stay_readable(tmp_path):
    """perf record -e 'sched:*': a section per tracepoint that fired (perf's
    list and counts), none for the others, lines of one event's width."""
    data = tmp_path / "sched.data"
    run(["perf", "record", "-q", "--no-buildid-cache", "-e", "sched:*", "-o", str(data), "--",
         workload("sleeper"), "50", "1"])
    mine = same_sections(data, "--sort", "comm,dso")
    names = [s[0] for s in mine]
    assert "sched:sched_switch" in names and len(names) >= 3, names
    j = json.loads(sonde("report", "-i", str(data), "--json").stdout)
    assert len(j["events"]) > len(names)  # the empty ones were left out
    text = sonde("report", "-i", str(data)).stdout
    assert max(len(line) for line in text.splitlines()) < 200


def test_system_wide_perf_file_shows_no_dummy(tmp_path):
    """perf record -a adds a dummy:HG event without samples: no section (perf)."""
    data = tmp_path / "a.data"
    run(["perf", "record", "-q", "--no-buildid-cache", "-a", "-o", str(data), "--",
         workload("getppid_loop"), "200000"])
    mine = same_sections(data, "--sort", "comm")
    assert [s[0] for s in mine] == ["cpu-clock:ppp"]
    text = sonde("report", "-i", str(data), "--sort", "comm").stdout
    assert "dummy" not in text
