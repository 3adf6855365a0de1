"""Every perf 6.1 command that reads a perf.data works on sonde's captures
(the files perf record would have written for the same data)."""
import os
import re
import subprocess

import pytest

from conftest import run, sonde, workload

EVENTS = ",".join([
    "cpu-clock",
    "sched:sched_switch", "sched:sched_wakeup", "sched:sched_wakeup_new",
    "sched:sched_process_fork", "sched:sched_migrate_task", "sched:sched_stat_runtime",
    "kmem:kmalloc", "kmem:kfree", "kmem:kmem_cache_alloc", "kmem:kmem_cache_free",
    "kmem:mm_page_alloc", "kmem:mm_page_free",
    "lock:contention_begin", "lock:contention_end",
    "power:cpu_idle", "power:cpu_frequency",
])


@pytest.fixture(scope="module")
def capture(tmp_path_factory, tracefs):
    """A system-wide sonde capture with call chains and the tracepoints
    perf sched, kmem, lock and timechart read."""
    d = tmp_path_factory.mktemp("perftools")
    out = d / "sonde.data"
    sonde("record", "-a", "-g", "-m", "512", "-e", EVENTS, "-o", str(out), "--",
          workload("split"), "0.3")
    return out


COMMANDS = {
    "report": ["report", "--stdio", "-i", "{f}"],
    "script": ["script", "-i", "{f}"],
    "annotate": ["annotate", "--stdio", "-i", "{f}", "hot_fn"],
    "inject": ["inject", "-i", "{f}", "-o", "{d}/inject.data"],
    "inject-b": ["inject", "-b", "-i", "{f}", "-o", "{d}/inject-b.data"],
    "inject-buildid-all": ["inject", "--buildid-all", "-i", "{f}", "-o", "{d}/inject-all.data"],
    "archive": ["archive", "{f}"],
    "diff": ["diff", "{f}", "{f}"],
    "buildid-list": ["buildid-list", "-i", "{f}"],
    "sched-latency": ["sched", "latency", "-i", "{f}"],
    "sched-timehist": ["sched", "timehist", "-i", "{f}"],
    "sched-map": ["sched", "map", "-i", "{f}"],
    "kmem": ["kmem", "-i", "{f}", "stat"],
    "kmem-page": ["kmem", "-i", "{f}", "--page", "stat"],
    "lock": ["lock", "report", "-i", "{f}"],
    "timechart": ["timechart", "-i", "{f}", "-o", "{d}/timechart.svg"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_perf_command_reads_sonde_capture(capture, name):
    argv = [a.format(f=capture, d=capture.parent) for a in COMMANDS[name]]
    p = subprocess.run(["perf", *argv], capture_output=True, text=True, timeout=300,
                       cwd=capture.parent)
    # A negative code is a signal: perf inject used to die of SIGSEGV here.
    assert p.returncode == 0, (name, p.returncode, p.stderr[-2000:])


def test_injected_file_still_reports(capture):
    out = capture.parent / "inject-check.data"
    run(["perf", "inject", "-b", "-i", str(capture), "-o", str(out)])
    a = run(["perf", "report", "--stdio", "-i", str(capture), "--sort", "comm"]).stdout
    b = run(["perf", "report", "--stdio", "-i", str(out), "--sort", "comm"]).stdout
    samples = lambda t: re.findall(r"# Samples: (\S+)\s+of event '([^']+)'", t)
    assert samples(a) and samples(a) == samples(b)


def test_socket_sort_has_the_socket(capture):
    """CPU_TOPOLOGY gives perf the socket of each CPU (without it: -001)."""
    out = run(["perf", "report", "--stdio", "-i", str(capture), "--sort", "socket",
               "--no-children"]).stdout
    rows = re.findall(r"^\s+[\d.]+%\s+(-?\d+)\s*$", out, re.M)
    with open("/sys/devices/system/cpu/cpu0/topology/physical_package_id") as f:
        socket = int(f.read())
    assert rows and set(rows) == {f"{socket:03d}"}, out


def test_header_matches_perf_record(capture, tmp_path):
    """The machine-shape features read as perf's own do on this machine."""
    theirs = tmp_path / "perf.data"
    run(["perf", "record", "-a", "--no-bpf-event", "-o", str(theirs), "--", "true"])

    def shape(path):
        h = run(["perf", "report", "--header-only", "-I", "-i", str(path)]).stdout
        keep = ("# sibling", "# CPU ", "# node", "# pmu mappings", "#  L")
        # MEM_TOPOLOGY: "# memory nodes (nr 1, block size 0x8000000):" and a
        # line per node, "#    0 [24G]: 0-23,32-199".
        mem = re.compile(r"# memory nodes |#\s+\d+ \[\d+\w?\]: ")
        lines = [re.sub(r"free = \d+", "free = N", l) for l in h.splitlines()
                 if l.startswith(keep) or mem.match(l)]
        # PMUs come in directory order, which means nothing.
        return [("# pmu mappings: " + ", ".join(sorted(l.split(": ", 1)[1].split(", ")))
                 if l.startswith("# pmu mappings") else l) for l in lines]
    ours = shape(capture)
    assert any(l.startswith("# sibling") for l in ours)
    if os.path.exists("/sys/devices/system/memory/block_size_bytes"):
        assert any(l.startswith("# memory nodes") for l in ours), ours
    assert ours == shape(theirs)
