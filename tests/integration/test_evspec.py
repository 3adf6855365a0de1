"""The event-spec parser against perf on this machine's real sysfs and tracefs.

The parser is reached through tests/unit/evspec_dump, a test-only program
that prints the parsed list (name, kind, attr fields, leader) one event a
line.  perf 6.1 is the oracle: `perf stat -e SPEC -x, -- true` gives the
events a glob expands to, in perf's order, and `perf stat -vv` prints the
perf_event_attr it built (even for events this machine can't open).
"""
import os
import re

import pytest

from conftest import BUILD, run


def dump_path():
    return os.path.join(BUILD, "tests", "unit", "evspec_dump")


def dump(*specs, tracefs=None, check=True):
    """Parsed events as a list of (name, {field: value})."""
    argv = [dump_path()]
    if tracefs:
        argv += ["--tracefs", tracefs]
    p = run(argv + list(specs), check=check)
    events = []
    for line in p.stdout.splitlines():
        name, fields = line.split("\t")
        kv = dict(f.split("=", 1) for f in fields.split())
        events.append((name, kv))
    return (events, p) if not check else events


def perf_event_names(spec):
    """Event names perf stat counts for @spec, in its order."""
    p = run(["perf", "stat", "-e", spec, "-x,", "--", "true"], check=False)
    assert p.returncode == 0, f"perf stat -e {spec} failed:\n{p.stderr}"
    names = []
    for line in p.stderr.splitlines():
        fields = line.split(",")
        if len(fields) >= 3 and ":" in fields[2]:
            names.append(fields[2])
    return names


@pytest.fixture(scope="module")
def tf(tracefs):
    if not os.access(dump_path(), os.X_OK):
        pytest.fail(f"{dump_path()} is not built (ninja -C {BUILD})")
    return tracefs


# perf 6.1 walks tracefs with readdir and expands in that order (tracefs lists
# the newest system/event first), not sorted: sonde must give the same list.
@pytest.mark.parametrize("spec", [
    "kmem:*",
    "sched:*",
    "sched:sched_wake*",
    "sched:sched_wak[ei]*",
    "raw_syscalls:*",
    "r*:*",
    "timer:*",
    "syscalls:sys_enter_getppid",
])
def test_glob_expansion_matches_perf(tf, spec):
    ours = [name for name, _ in dump(spec, tracefs=tf)]
    theirs = perf_event_names(spec)
    assert theirs, f"perf counted nothing for {spec}"
    assert ours == theirs


def test_glob_with_modifier_matches_perf(tf):
    events = dump("sched:sched_wakeup*:u", tracefs=tf)
    assert [n for n, _ in events] == perf_event_names("sched:sched_wakeup*:u")
    for _, kv in events:
        assert kv["exclude_kernel"] == "1" and kv["exclude_user"] == "0"


def test_tracepoint_ids_match_tracefs(tf):
    for name, kv in dump("sched:sched_switch,kmem:kmalloc", tracefs=tf):
        system, event = name.split(":")
        with open(os.path.join(tf, "events", system, event, "id")) as f:
            assert int(kv["config"], 16) == int(f.read())
        assert kv["kind"] == "tracepoint" and kv["type"] == "2"


ATTR_LINE = re.compile(r"^\s+(.+?)\s{2,}(\S+)$")
# perf's attr dump name -> evspec_dump field.  Zero fields are not printed by perf.
FIELDS = {
    "type": "type", "config": "config",
    "{ bp_addr, config1 }": "config1", "config1": "config1",
    "{ bp_len, config2 }": "config2", "config2": "config2",
    "exclude_user": "exclude_user", "exclude_kernel": "exclude_kernel",
    "exclude_hv": "exclude_hv", "exclude_host": "exclude_host",
    "exclude_guest": "exclude_guest", "exclude_idle": "exclude_idle",
    "precise_ip": "precise_ip", "pinned": "pinned", "exclusive": "exclusive",
    "bp_type": "bp_type",
}


def perf_attrs(spec, n):
    """The first @n perf_event_attr blocks perf stat -vv prints for @spec."""
    p = run(["perf", "stat", "-vv", "-e", spec, "--", "true"], check=False)
    blocks, cur = [], None
    for line in p.stderr.splitlines():
        if line.startswith("perf_event_attr:"):
            cur = {}
            blocks.append(cur)
        elif line.startswith("----"):
            cur = None
        elif cur is not None:
            m = ATTR_LINE.match(line)
            if m and m.group(1) in FIELDS:
                cur[FIELDS[m.group(1)]] = int(m.group(2), 0)
    assert len(blocks) >= n, f"perf printed {len(blocks)} attrs for {spec}:\n{p.stderr}"
    return blocks[:n]


def as_int(v):
    return int(v, 0)


# Specs whose attrs perf prints on this machine (software events, tracepoints,
# breakpoints, the msr PMU, and hardware codes perf tries and fails to open).
@pytest.mark.parametrize("spec", [
    "cpu-clock", "cpu-clock:u", "cpu-clock:k", "cpu-clock:h", "cpu-clock:uk",
    "cpu-clock:G", "cpu-clock:H", "cpu-clock:uG", "cs:kH", "cs:kp", "cpu-clock:pp",
    "cpu-clock:I", "cpu-clock:D", "cs/period=1000/u", "software/config=3/",
    "{cs:u,cpu-clock}:k", "{cs,cpu-clock}:k", "{cs:k,faults}:uD",
    "sched:sched_switch", "sched:sched_switch:k",
    "mem:0x1000", "mem:0x1000:x", "mem:0x1000/8:w", "mem:0x1000:rw:u",
    "r1a8", "r1a8:u", "L1-dcache-load-misses", "LLC-loads:k", "dTLB-load-misses",
    "msr/tsc/", "msr/event=0/",
])
def test_attrs_match_perf(tf, spec):
    ours = dump(spec, tracefs=tf)
    theirs = perf_attrs(spec, len(ours))
    for (name, kv), attr in zip(ours, theirs):
        for field in set(FIELDS.values()):
            if field not in kv:
                continue
            want = attr.get(field, 0)
            assert as_int(kv[field]) == want, f"{spec}: {name}.{field}"


def test_group_leaders(tf):
    events = dump("cs,{cpu-clock,faults}:u,task-clock", tracefs=tf)
    assert [kv["leader"] for _, kv in events] == ["0", "1", "1", "3"]


@pytest.mark.parametrize("spec,suggestion", [
    ("cylces", "'cycles'"),
    ("sched:sched_swich", "'sched:sched_switch'"),
    ("syscalls:sys_enter_getppidd", "'syscalls:sys_enter_getppid'"),
    ("sched:sched_switchh", "'sched:sched_switch'"),
    ("msr/tscc/", "'msr/tsc/'"),
    ("L1-dcache-load-mises", "'L1-dcache-load-misses'"),
])
def test_unknown_names_suggest(tf, spec, suggestion):
    _, p = dump(spec, tracefs=tf, check=False)
    assert p.returncode == 1
    assert "did you mean" in p.stderr and suggestion in p.stderr, p.stderr
    assert p.stdout == ""


@pytest.mark.parametrize("spec", ["cs,", "{cs", "cs:uu", "cs:pppp", "mem:0x1000/3",
                                  "nosuchpmu/event=1/", "sched:nomatch*", "iTLB-stores"])
def test_bad_specs_fail(tf, spec):
    _, p = dump(spec, tracefs=tf, check=False)
    assert p.returncode == 1
    assert spec in p.stderr


def test_no_tracefs_is_explained():
    _, p = dump("sched:sched_switch", tracefs="none", check=False)
    assert p.returncode == 1
    assert "tracefs" in p.stderr
