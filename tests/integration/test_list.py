"""sonde list against this machine and against perf list.

The groups perf list prints must be there (hardware, software, cache, raw
and PMU syntax, PMU events from sysfs, breakpoints, tracepoints, probes);
what the machine can't count (no hardware PMU in this VM) must say so; the
tracepoints and software events must be the ones perf lists; a GLOB
filters; and every name listed must be accepted by the parser.
"""
import fnmatch
import glob
import os
import re

import pytest

from conftest import BUILD, run, sonde

LINE = re.compile(r"^  (\S.*?)\s+\[(.+)\]$")


def listing(*args):
    """(name, description) pairs of sonde list's event lines."""
    out = sonde("list", *args).stdout
    return [m.groups() for m in map(LINE.match, out.splitlines()) if m]


def perf_list(*args):
    p = run(["perf", "list", *args], check=False)
    return [m.groups() for m in map(LINE.match, p.stdout.splitlines()) if m]


def hw_pmu_missing():
    """True when perf can't count cycles here (no hardware PMU)."""
    p = run(["perf", "stat", "-e", "cycles", "-x,", "--", "true"], check=False)
    return "<not supported>" in p.stderr or "<not counted>" in p.stderr


def sysfs_pmu_events():
    names = []
    for path in glob.glob("/sys/bus/event_source/devices/*/events/*"):
        pmu, ev = path.split("/")[-3], path.split("/")[-1]
        if not re.search(r"\.(scale|unit|per-pkg|snapshot)$", ev):
            names.append(f"{pmu}/{ev}/")
    return names


@pytest.fixture(scope="module")
def full(tracefs):
    return listing()


def test_every_group_is_there(full):
    kinds = {desc.split(";")[0] for _, desc in full}
    for kind in ["Hardware event", "Software event", "Hardware cache event",
                 "Raw hardware event descriptor", "Hardware breakpoint", "Tracepoint event"]:
        assert kind in kinds, f"no '{kind}' lines"
    names = [n for n, _ in full]
    assert "rNNN" in names
    assert "mem:<addr>[/len][:access]" in names
    assert any(n.startswith("PMU/") for n in names)
    # Dynamic probes: each kind is listed, defined probes or a word on why not.
    assert any(n in ("uprobe", "kprobe") or "dynamic probe" in d for n, d in full)


def test_unusable_groups_say_so(full):
    out = sonde("list").stdout
    hw = [d for _, d in full if d.startswith("Hardware event") or d.startswith("Hardware cache")]
    assert hw
    if hw_pmu_missing():
        assert "no usable hardware PMU" in out
        assert all("not supported here" in d for d in hw)
        raw = [d for n, d in full if n == "rNNN"]
        assert raw and "not supported here" in raw[0]
    else:
        assert not any("not supported" in d for d in hw)
    # Software events always work.
    assert all("not supported" not in d for _, d in full if d == "Software event")


def test_pmu_events_from_sysfs(full):
    listed = {n for n, d in full if d == "Kernel PMU event"}
    assert listed == set(sysfs_pmu_events())


def test_tracepoints_match_perf_list(full):
    ours = {n for n, d in full if d == "Tracepoint event"}
    theirs = {n for n, d in perf_list("tracepoint") if d == "Tracepoint event"}
    assert theirs, "perf list printed no tracepoints"
    assert ours == theirs


def test_software_events_match_perf_list(full):
    ours = {n for n, d in full if d == "Software event"}
    theirs = {n for n, d in perf_list("sw") if d == "Software event"}
    assert ours == theirs


@pytest.mark.parametrize("pattern", ["sched:*", "kmem:*", "*:sys_enter_getppid"])
def test_glob_filters_like_perf(tracefs, pattern):
    ours = listing(pattern)
    assert ours and all(fnmatch.fnmatchcase(n, pattern) for n, _ in ours)
    theirs = [n for n, d in perf_list(pattern) if d == "Tracepoint event"]
    assert [n for n, _ in ours] == sorted(theirs)


def test_glob_matches_aliases_and_pmu_events(tracefs):
    assert ("cpu-cycles OR cycles" in [n for n, _ in listing("cycles")])
    names = [n for n, _ in listing("*clock*")]
    assert "cpu-clock" in names and "task-clock" in names
    for ev in sysfs_pmu_events():
        pmu, name = ev.split("/")[:2]
        assert ev in [n for n, _ in listing(name)]


def test_classes(tracefs):
    assert {d for _, d in listing("sw")} == {"Software event"}
    assert all(d.startswith("Hardware cache event") for _, d in listing("cache"))
    assert all(d.startswith("Hardware event") for _, d in listing("hw"))
    assert {d for _, d in listing("tracepoint")} == {"Tracepoint event"}


def test_no_match_fails(tracefs):
    p = sonde("list", "nosuchevent*", check=False)
    assert p.returncode == 1
    assert "no event matches 'nosuchevent*'" in p.stderr


def test_usage_errors():
    assert sonde("list", "a", "b", check=False).returncode == 2
    assert sonde("list", "--bogus", check=False).returncode == 2
    p = sonde("list", "--help")
    assert "usage: sonde list" in p.stdout


def test_listed_names_parse(full, tracefs):
    """Whatever sonde list offers, -e accepts (checked through the parser)."""
    specs = []
    for name, desc in full:
        if desc.startswith(("Hardware event", "Software event", "Hardware cache event",
                            "Kernel PMU event", "Tracepoint event")):
            specs += name.split(" OR ")
    dump = os.path.join(BUILD, "tests", "unit", "evspec_dump")
    p = run([dump, "--tracefs", tracefs, *specs])
    assert len(p.stdout.splitlines()) == len(specs)


def entry_file_offset(path):
    """File offset of @path's ELF entry point (a valid uprobe offset)."""
    import struct
    with open(path, "rb") as f:
        data = f.read()
    entry, phoff = struct.unpack_from("<QQ", data, 24)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1 and p_vaddr <= entry < p_vaddr + p_filesz:
            return entry - p_vaddr + p_offset
    raise AssertionError("entry point in no PT_LOAD")


@pytest.mark.tracefs_exclusive
def test_probe_listed_once(tracefs):
    """A probe is an event in tracefs too; sonde list named it twice."""
    from conftest import workload
    target = workload("getppid_loop")
    events = os.path.join(tracefs, "uprobe_events")
    def append(line):
        # open(..., "a") seeks to the end, which tracefs refuses
        fd = os.open(events, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)

    append(f"p:probe_sondetest/entry {target}:{entry_file_offset(target):#x}\n")
    try:
        for args in (["probe_sondetest:*"], []):
            found = [(n, d) for n, d in listing(*args) if n == "probe_sondetest:entry"]
            assert found == [("probe_sondetest:entry", "User dynamic probe")], args
        # asked for tracepoints only, it is one of them
        found = [n for n, d in listing("tracepoint") if n == "probe_sondetest:entry"]
        assert found == ["probe_sondetest:entry"]
    finally:
        append("-:probe_sondetest/entry\n")
