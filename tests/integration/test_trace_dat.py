"""sonde trace report on trace-cmd's own files, trace-cmd report as the oracle."""
import os
import subprocess
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
    not), and the pid of the workload whose 300 calls they hold."""
    import fcntl
    from conftest import LOCK_PATH
    d = tmp_path_factory.mktemp("ib")
    names = {"sondeib-a": "sys_enter_getppid", "sondeib-bbbb": "sys_exit_getppid"}
    # A module fixture runs before the per-test lock: take it while the
    # instances exist (other tests compare the instance list).
    fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        for name, ev in names.items():
            inst = os.path.join(tracefs, "instances", name)
            os.mkdir(inst)
            with open(os.path.join(inst, "events", "syscalls", ev, "enable"), "w") as f:
                f.write("1")
        w = subprocess.Popen([workload("getppid_loop"), "300"])
        assert w.wait() == 0
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
        os.close(fd)
    files = {"v7": v7}
    for tag, args in {"v6": ["--file-version", "6"],
                      "v7-zstd": ["--file-version", "7", "--compression", "zstd"],
                      "v7-none": ["--file-version", "7", "--compression", "none"]}.items():
        files[tag] = d / f"{tag}.dat"
        run(["trace-cmd", "convert", "-i", str(v7), "-o", str(files[tag]), *args])
    return files, w.pid


@pytest.mark.tracefs_exclusive
@pytest.mark.parametrize("tag", ["v6", "v7", "v7-zstd", "v7-none"])
def test_instance_buffers_reported(instance_files, tag):
    """Every buffer is read and merged in time order, labelled as trace-cmd
    labels it (before: "cpus=2" and nothing else, exit 0)."""
    files, pid = instance_files
    path = str(files[tag])
    with open(path, "rb") as f:
        assert f.read(12)[10:11] == tag[1].encode()  # the file version asked for
    mine = report_lines([sonde_path(), "trace", "report", path])
    theirs = report_lines(["trace-cmd", "report", path])
    # other processes may call getppid meanwhile: count the workload's
    ours = [l for l in theirs if f"getppid_loop-{pid} " in l]
    assert sum(l.startswith("   sondeib-a: ") for l in ours) == 300
    assert sum(l.startswith("sondeib-bbbb: ") for l in ours) == 300
    assert mine == theirs


def run_damaged(argv, path, data, cases):
    """Runs @argv on each damaged copy of @data; returns the cases that did
    not end with exit 0, or 1 and a message."""
    bad = []
    for what, off in cases:
        d = bytearray(data)
        if what == "flip":
            d[off] ^= 0xff
        else:
            del d[off:]
        path.write_bytes(bytes(d))
        p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           errors="replace", timeout=60)
        ok = p.returncode == 0 or (p.returncode == 1 and p.stderr.startswith("sonde: "))
        if not ok:
            bad.append((what, hex(off), p.returncode, p.stderr[-200:]))
    return bad


@pytest.mark.tracefs_exclusive
def test_damaged_trace_dat_never_crashes(tracefs, tmp_path):
    """Bytes flipped across the section headers, options and CPU data of a
    real trace.dat, and truncations: sonde trace report ends with 0, or 1
    and a message naming the offset, never with a signal."""
    import random
    import struct
    good = tmp_path / "good.dat"
    run([sonde_path(), "trace", "-e", "sched:sched_switch", "-e", "syscalls:sys_enter_getppid",
         "-o", str(good), "--", workload("getppid_loop"), "50"])
    data = good.read_bytes()
    assert data[10:12] == b"7\0"
    # the version 7 header: magic, version, endianness, long size, page size,
    # compression name and version, then the first options section's offset
    at = 12 + 1 + 1 + 4
    at = data.index(b"\0", at) + 1
    at = data.index(b"\0", at) + 1
    first = struct.unpack_from("<Q", data, at)[0]
    rnd = random.Random(7)
    n = len(data)
    # the header, header_page/header_event and the ftrace format texts
    # libtraceevent parses, then the options sections
    offsets = set(range(0, 4096, 7)) | set(range(first, min(n, first + 600), 3))
    offsets |= {rnd.randrange(first, n) for _ in range(60)}
    cases = [("flip", o) for o in sorted(offsets)]
    cases += [("trunc", rnd.randrange(n)) for _ in range(20)] + [("trunc", first + 20)]
    bad = run_damaged([sonde_path(), "trace", "report", str(tmp_path / "x.dat")],
                      tmp_path / "x.dat", data, cases)
    assert bad == []
    # a cut section table is named with its offset
    (tmp_path / "x.dat").write_bytes(data[:first + 20])
    p = subprocess.run([sonde_path(), "trace", "report", str(tmp_path / "x.dat")],
                       capture_output=True, text=True)
    assert p.returncode == 1 and "damaged trace.dat: offset 0x" in p.stderr


def test_damaged_tracing_data_never_crashes(tmp_path):
    """The same for a perf.data with tracing data, read by sonde script."""
    import random
    good = tmp_path / "good.data"
    run([sonde_path(), "record", "-e", "sched:sched_switch", "-e",
         "syscalls:sys_enter_getppid", "-o", str(good), "--", workload("getppid_loop"), "50"])
    data = good.read_bytes()
    rnd = random.Random(3)
    cases = [("flip", rnd.randrange(len(data))) for _ in range(150)]
    cases += [("trunc", rnd.randrange(len(data))) for _ in range(20)]
    bad = run_damaged([sonde_path(), "script", "-i", str(tmp_path / "x.data")],
                      tmp_path / "x.data", data, cases)
    assert bad == []
