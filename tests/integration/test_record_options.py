"""perf record's sample-content and side-band options, checked with perf's
own readers on sonde's files: the attr bits perf evlist -v shows, the
records perf script prints, and what perf report --header-only lists."""
import os
import re

import pytest

from conftest import run, sonde, workload


def evlist(path):
    return run(["perf", "evlist", "-v", "-i", str(path)]).stdout


def test_switch_namespaces_data_regs(tmp_path):
    data = tmp_path / "r.data"
    sonde("record", "-e", "page-faults", "-c", "1", "--switch-events", "--namespaces", "-d",
          "-T", "--user-regs=ip,sp", "--intr-regs", "-o", str(data), "--", workload("sleeper"))
    ev = evlist(data)
    for bit in ("context_switch: 1", "namespaces: 1", "mmap_data: 1",
                "sample_regs_user: 0x180", "sample_regs_intr: 0xff0fff"):
        assert bit in ev, ev
    assert re.search(r"sample_type: [A-Z|]*ADDR[A-Z|]*REGS_USER\|REGS_INTR", ev), ev
    # sleeper sleeps: it is switched out and back in; perf script shows both.
    out = run(["perf", "script", "-i", str(data), "--show-switch-events",
               "--show-namespace-events", "-F", "comm,event,addr,uregs"]).stdout
    assert re.search(r"sleeper\s+PERF_RECORD_SWITCH OUT", out), out
    assert re.search(r"sleeper\s+PERF_RECORD_SWITCH IN", out), out
    # The workload's namespaces, synthesized as perf does: the test's own.
    ns = run(["perf", "script", "-i", str(data), "--show-namespace-events", "-F", "event"]).stdout
    links = re.findall(r"(\d)/(\w+): (\d+)/0x([0-9a-f]+)", ns)
    assert len(links) == 7, ns
    for _, name, dev, ino in links:
        st = os.stat(f"/proc/self/ns/{name}")
        assert (int(dev), int(ino, 16)) == (st.st_dev, st.st_ino), (name, dev, ino)
    # page-fault samples carry the faulting data address (never all 0) and
    # the two user registers asked for, no others.
    addrs = [int(m, 16) for m in re.findall(r"page-faults:\s+([0-9a-f]+)", out)]
    assert addrs and any(addrs), out
    regs = re.findall(r"ABI:2\s+SP:0x[0-9a-f]+\s+IP:0x[0-9a-f]+\s*$", out, re.M)
    assert len(regs) == len(addrs), out
    # sonde's own readers take the new records in their stride.
    rep = sonde("report", "-i", str(data), "--stdio", "--sort", "comm").stdout
    assert re.search(r"^# Samples: %d\b" % len(addrs), rep, re.M), rep


def test_registers_by_name(tmp_path):
    bad = sonde("record", "--user-regs=ip,spx", "-o", str(tmp_path / "x.data"), "--", "true",
                check=False)
    assert bad.returncode == 2 and "unknown register 'spx'" in bad.stderr, bad.stderr
    assert "r15" in bad.stderr
    listed = sonde("record", "--intr-regs=?")
    assert "ax bx cx dx" in listed.stdout


def test_no_buildid(tmp_path):
    with_ids, without = tmp_path / "b.data", tmp_path / "nb.data"
    sonde("record", "-o", str(with_ids), "--", workload("fixed_work"))
    sonde("record", "-B", "-o", str(without), "--", workload("fixed_work"))
    def missing(path):
        head = run(["perf", "report", "--header-only", "-i", str(path)]).stdout
        return re.search(r"^# missing features: (.*)$", head, re.M).group(1).split()
    assert "BUILD_ID" not in missing(with_ids)
    assert "BUILD_ID" in missing(without)


def times(path, *extra):
    out = run(["perf", "script", "-i", str(path), "--show-task-events", "-F",
               "comm,time,event", *extra]).stdout
    execs = [float(m) for m in re.findall(r"fixed_work\s+([\d.]+):\s+PERF_RECORD_COMM exec", out)]
    samples = [float(m) for m in re.findall(r"fixed_work\s+([\d.]+):\s+cpu-clock", out)]
    return execs, samples


@pytest.mark.parametrize("delay_ms", [0, 150])
def test_delay(tmp_path, delay_ms):
    data = tmp_path / "d.data"
    sonde("record", "-e", "cpu-clock", "-D", str(delay_ms), "-o", str(data), "--",
          workload("fixed_work"))
    execs, samples = times(data)
    # The side-band runs from the exec even when the events wait: the
    # command's COMM is there, and its samples start delay_ms later.
    assert len(execs) == 1 and samples, (execs, samples[:3])
    first = samples[0] - execs[0]
    if delay_ms:
        assert first >= delay_ms / 1000, first
        # ...and not much later (the loop wakes at the deadline; a loaded
        # machine may be slow to run it).
        assert first < delay_ms / 1000 + 0.5, first
    else:
        assert first < 0.05, first


def test_max_size(tmp_path):
    data = tmp_path / "m.data"
    argv = ["-e", "syscalls:sys_enter_getppid", "--max-size", "256K", "-o", str(data), "--",
            workload("getppid_loop"), "100000000"]
    p = sonde("record", *argv, check=False)
    assert "size limit reached (256 KB)" in p.stderr, p.stderr
    # The command got SIGTERM, as perf's does: the shell sees the same
    # status, 143 (perf raises the signal on itself, sonde exits with it).
    theirs = run(["perf", "record", "-q", "--no-buildid-cache", *argv[:4], "-o",
                  str(tmp_path / "p.data"), *argv[-3:]], check=False)
    assert p.returncode == 128 + 15 and theirs.returncode == -15, (p.returncode,
                                                                  theirs.returncode)
    size = data.stat().st_size
    # One drain pass past the cap at most (a 512 KiB ring per CPU).
    assert 256 * 1024 <= size < 256 * 1024 + 2 * 512 * 1024 + 65536, size
    rep = run(["perf", "report", "-i", str(data), "--stdio", "--sort", "comm"]).stdout
    assert "getppid_loop" in rep
    assert sonde("record", "--max-size", "12Q", "--", "true", check=False).returncode == 2
