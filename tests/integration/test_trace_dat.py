"""sonde trace report on trace-cmd's own files, trace-cmd report as the oracle."""
import os
import pytest

from conftest import run, sonde_path, workload


def report_lines(argv):
    """A report's lines without trailing blanks (trace-cmd pads empty fields)."""
    p = run(argv)
    return [l.rstrip() for l in p.stdout.splitlines()]


@pytest.fixture(scope="module")
def instance_files(tmp_path_factory, tracefs):
    """trace-cmd files with two instance buffers (sys_enter_getppid in one,
    sys_exit_getppid in the other), as file versions 6 and 7 (compressed or
    not)."""
    d = tmp_path_factory.mktemp("ib")
    names = {"sondeib-a": "sys_enter_getppid", "sondeib-bbbb": "sys_exit_getppid"}
    for name, ev in names.items():
        inst = os.path.join(tracefs, "instances", name)
        os.mkdir(inst)
        with open(os.path.join(inst, "events", "syscalls", ev, "enable"), "w") as f:
            f.write("1")
    try:
        run([workload("getppid_loop"), "300"])
        for name in names:
            with open(os.path.join(tracefs, "instances", name, "tracing_on"), "w") as f:
                f.write("0")
        v7 = d / "v7.dat"
        run(["trace-cmd", "extract", "-B", "sondeib-a", "-B", "sondeib-bbbb", "-o", str(v7)])
    finally:
        for name in names:
            inst = os.path.join(tracefs, "instances", name)
            if os.path.exists(inst):
                os.rmdir(inst)
    files = {"v7": v7}
    for tag, args in {"v6": ["--file-version", "6"],
                      "v7-zstd": ["--file-version", "7", "--compression", "zstd"],
                      "v7-none": ["--file-version", "7", "--compression", "none"]}.items():
        files[tag] = d / f"{tag}.dat"
        run(["trace-cmd", "convert", "-i", str(v7), "-o", str(files[tag]), *args])
    return files


@pytest.mark.tracefs_exclusive
@pytest.mark.parametrize("tag", ["v6", "v7", "v7-zstd", "v7-none"])
def test_instance_buffers_reported(instance_files, tag):
    """Every buffer is read and merged in time order, labelled as trace-cmd
    labels it (before: "cpus=2" and nothing else, exit 0)."""
    path = str(instance_files[tag])
    with open(path, "rb") as f:
        assert f.read(12)[10:11] == tag[1].encode()  # the file version asked for
    mine = report_lines([sonde_path(), "trace", "report", path])
    theirs = report_lines(["trace-cmd", "report", path])
    assert len(theirs) == 1 + 2 * 300
    assert sum(l.startswith("   sondeib-a: ") for l in theirs) == 300
    assert mine == theirs
