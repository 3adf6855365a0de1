"""Id lists on the command line (-p, -t, -P, --pid, --tid): one parser with
range checks, so an id never wraps modulo 2^32 into another process's."""
import os
import subprocess

import pytest

from conftest import sonde, sonde_path

# 2^32 + 1 and 2^32 + 22485: strtol then a cast to pid_t made them pid 1 and 22485.
WRAPPING = ["4294967297", "4294989781"]


def gone_pid():
    """A pid that names no process: a child's, after it was reaped."""
    p = subprocess.Popen(["true"])
    p.wait()
    assert not os.path.exists(f"/proc/{p.pid}")
    return p.pid


@pytest.mark.parametrize("value", WRAPPING)
@pytest.mark.parametrize("argv", [
    ["stat", "-e", "task-clock", "-p"],
    ["stat", "-e", "task-clock", "-t"],
    ["record", "-e", "task-clock", "-p"],
    ["record", "-e", "task-clock", "-t"],
    ["trace", "-e", "sched:sched_switch", "-P"],
], ids=lambda a: " ".join(a[::len(a) - 1]) if isinstance(a, list) else a)
def test_attach_ids_out_of_range(tracefs, tmp_path, argv, value):
    out = tmp_path / "out"
    args = argv + [value] + (["-o", str(out)] if argv[0] != "stat" else [])
    # Wrapped into pid 1 these ran until killed: the timeout fails the test.
    p = sonde(*args, check=False, timeout=20, cwd=tmp_path)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert f"'{value}': a " in p.stderr and "1..4194304" in p.stderr, p.stderr
    assert not out.exists() and not (tmp_path / "perf.data").exists()


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    data = tmp_path_factory.mktemp("ids") / "ids.data"
    sonde("record", "-e", "task-clock", "-o", str(data), "--", "true")
    return data


@pytest.mark.parametrize("argv", [
    ["report", "--stdio", "--pid"],
    ["script", "--pid"],
    ["script", "--tid"],
    ["annotate", "--stdio", "--pid"],
], ids=" ".join)
def test_filter_ids_out_of_range(tracefs, capture, argv):
    p = sonde(*argv, WRAPPING[0], "-i", str(capture), check=False, timeout=60)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "1..4194304" in p.stderr or "0..4194304" in p.stderr, p.stderr


def test_trace_nonexistent_pid_fails_like_stat(tracefs):
    pid = str(gone_pid())
    st = sonde("stat", "-e", "task-clock", "-p", pid, check=False, timeout=20)
    tr = sonde("trace", "-e", "sched:sched_switch", "-P", pid, check=False, timeout=20)
    assert st.returncode == 1 and f"no process with pid {pid}" in st.stderr, st.stderr
    assert (tr.returncode, tr.stderr) == (st.returncode, st.stderr)


def test_lists_and_syntax(tracefs):
    # A list of two live pids: both attached, the count ends when both exit.
    kids = [subprocess.Popen(["sleep", "0.5"]) for _ in range(2)]
    p = sonde("stat", "-e", "task-clock", "-p", ",".join(str(k.pid) for k in kids),
              check=False, timeout=20)
    for k in kids:
        k.wait()
    assert p.returncode == 0 and "task-clock" in p.stderr, p.stderr
    for bad in ["1,,2", "1,", "-5", "12ab", "0"]:
        p = sonde("stat", "-e", "task-clock", "-p", bad, check=False, timeout=20)
        assert p.returncode == 2 and bad.split(",")[0] in p.stderr, (bad, p.stderr)
