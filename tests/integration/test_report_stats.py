"""sonde report --stats counts the records by kind as perf report --stats
does, on files perf and sonde made: plain, zstd-compressed (COMPRESSED
records counted as perf counts them), a pipe, system wide with switch
and namespace records.  perf is the oracle on the same file."""
import pytest

from conftest import run, sonde, workload


def perf_stats(path, pipe=False):
    if pipe:
        with open(path, "rb") as f:
            return run(["perf", "report", "--stats", "-i", "-"], stdin=f).stdout
    return run(["perf", "report", "--stats", "-i", str(path)]).stdout


def sonde_stats(path, pipe=False):
    if pipe:
        with open(path, "rb") as f:
            return sonde("report", "--stats", "-i", "-", stdin=f).stdout
    return sonde("report", "--stats", "-i", str(path)).stdout


@pytest.mark.parametrize("who,args", [
    ("perf", ["--switch-events", "-e", "page-faults", "-c", "1"]),
    ("perf", ["-z"]),
    ("perf", ["--namespaces", "-a"]),
    ("sonde", ["--switch-events", "-e", "page-faults", "-c", "1"]),
    ("sonde", ["-z"]),
    ("sonde", ["--namespaces", "-a"]),
])
def test_stats_are_perfs(tmp_path, who, args):
    data = tmp_path / "s.data"
    cmd = [*args, "-o", str(data), "--", workload("sleeper")]
    if who == "perf":
        run(["perf", "record", "-q", "--no-buildid-cache", *cmd])
    else:
        sonde("record", *cmd)
    ours = sonde_stats(data)
    assert "Aggregated stats:" in ours and "SAMPLE events:" in ours, ours
    assert ours == perf_stats(data)
    if "-z" in args:
        assert "COMPRESSED events:" in ours


def test_stats_of_a_pipe(tmp_path):
    data = tmp_path / "pipe.data"
    with open(data, "wb") as f:
        run(["perf", "record", "-q", "-o", "-", "--", workload("fixed_work")], stdout=f,
            capture_output=False, stderr=None)
    ours = sonde_stats(data, pipe=True)
    assert "SAMPLE events:" in ours
    assert ours == perf_stats(data, pipe=True)
