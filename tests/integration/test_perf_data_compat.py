"""perf.data compatibility with Linux perf, both directions.

(a) sonde's reader on files `perf record` wrote (file mode, tracepoints,
    pipe mode, a cut file): sample counts against `perf script`, header
    facts against `perf report --header-only`.
(b) files sonde's writer made (tests/unit/perf_data_gen.c) opened by
    `perf report` and `perf script` with no warnings, exact sample counts,
    the fake process's comm/pid, and the header facts; also after a killed
    writer and on a full disk.
"""
import json
import os
import re
import shutil
import socket
import subprocess

import pytest

from conftest import BUILD, run, workload

PERF = shutil.which("perf")
GEN = os.path.join(BUILD, "tests", "unit", "perf_data_gen")
DUMP = os.path.join(BUILD, "tests", "unit", "perf_data_dump")

pytestmark = pytest.mark.skipif(PERF is None, reason="perf is not installed")


def perf_record(*args, **kw):
    """perf record without the build-id cache (perf 6.1 was seen to abort in
    util/build-id.c while updating ~/.debug next to other perf runs); one retry."""
    argv = [PERF, "record", "-q", "-N", *args]
    p = run(argv, check=False, **kw)
    if p.returncode != 0:
        p = run(argv, **kw)
    return p


def dump(path, check=True):
    p = run([DUMP, path], check=check)
    return json.loads(p.stdout), p.returncode


def perf_script_count(path):
    """One line per sample: perf script with a single field."""
    p = run([PERF, "script", "-i", path, "-F", "pid"])
    return len([l for l in p.stdout.splitlines() if l.strip()]), p.stderr


def header_facts(path):
    p = run([PERF, "report", "-i", path, "--header-only"])
    facts = {}
    for line in p.stdout.splitlines():
        m = re.match(r"# ([a-z ]+?)\s*: (.*)$", line)
        if m and m.group(1) not in facts:
            facts[m.group(1)] = m.group(2).strip()
    events = re.findall(r"# event : name = ([^,]+),", p.stdout)
    return facts, events, p.stderr


def no_warnings(stderr):
    bad = [l for l in stderr.splitlines()
           if re.search(r"warning|error|failed|invalid|unexpected", l, re.I)]
    assert not bad, stderr


@pytest.fixture(scope="module")
def busy_record(tmp_path_factory, tracefs):
    out = str(tmp_path_factory.mktemp("perf") / "cpu.data")
    perf_record("-e", "cpu-clock", "-F", "1000", "-g", "-o", out, "--",
                "sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
    return out


def check_header_against_perf(path, d):
    facts, events, _ = header_facts(path)
    assert d["hostname"] == facts["hostname"]
    assert d["osrelease"] == facts["os release"]
    assert d["arch"] == facts["arch"]
    assert str(d["nr_cpus_online"]) == facts["nrcpus online"]
    assert str(d["nr_cpus_avail"]) == facts["nrcpus avail"]
    assert d["cpudesc"] == facts["cpudesc"]
    assert d["cpuid"] == facts["cpuid"]
    assert facts["total memory"] == f"{d['total_mem_kb']} kB"
    assert " ".join(d["cmdline"]) == facts["cmdline"]
    assert [e["name"] for e in d["events"]] == events


def test_reads_perf_cpu_clock_callchains(busy_record):
    d, _ = dump(busy_record)
    assert d["error"] is None and d["tail"] == "clean"
    assert d["parse_errors"] == 0
    n, _ = perf_script_count(busy_record)
    assert n > 50
    assert d["samples"] == n
    assert d["callchain_samples"] == n
    assert d["records"]["SAMPLE"] == n
    assert d["records"].get("COMM", 0) >= 1
    check_header_against_perf(busy_record, d)
    assert d["version"] == header_facts(busy_record)[0]["perf version"]


def test_reads_perf_tracepoint(tmp_path, tracefs):
    out = str(tmp_path / "tp.data")
    perf_record("-e", "syscalls:sys_enter_getppid", "-o", out, "--",
                workload("getppid_loop"), "1234")
    d, _ = dump(out)
    assert d["error"] is None and d["parse_errors"] == 0
    n, _ = perf_script_count(out)
    assert n == 1234
    assert d["samples"] == 1234
    assert d["raw_samples"] == 1234
    assert d["tracing_data_size"] > 0
    assert d["events"][0]["name"] == "syscalls:sys_enter_getppid"
    check_header_against_perf(out, d)


def test_reads_perf_pipe_mode(tmp_path, tracefs):
    out = str(tmp_path / "pipe.data")
    with open(out, "wb") as f:
        subprocess.run([PERF, "record", "-q", "-N", "-e", "syscalls:sys_enter_getppid",
                        "-o", "-", "--", workload("getppid_loop"), "321"], stdout=f, check=True)
    d, _ = dump(out)
    assert d["pipe"] is True
    assert d["error"] is None and d["parse_errors"] == 0
    assert d["records"]["HEADER_ATTR"] >= 1
    assert d["samples"] == 321
    assert perf_script_count(out)[0] == 321
    # the same through a real pipe (stream mode)
    with open(out, "rb") as f:
        p = subprocess.run([DUMP, "-"], stdin=f, capture_output=True, text=True, check=True)
    assert json.loads(p.stdout)["samples"] == 321


def test_reads_cut_perf_file(busy_record, tmp_path):
    with open(busy_record, "rb") as f:
        data = f.read()
    offset, size = (int.from_bytes(data[40 + 8 * i:48 + 8 * i], "little") for i in range(2))
    cut = str(tmp_path / "cut.data")
    with open(cut, "wb") as f:
        f.write(data[:offset + size // 2 + 3])
    d, rc = dump(cut)
    full, _ = dump(busy_record)
    assert rc == 0 and d["tail"] == "truncated"
    assert 0 < d["samples"] < full["samples"]


def gen(path, *args, check=True):
    return run([GEN, path, *args], check=check)


def test_perf_reads_sonde_file(tmp_path):
    out = str(tmp_path / "sonde.data")
    gen(out, "-n", "37", "-p", "4242", "-c", "sonde-fake")
    rep = run([PERF, "report", "-i", out, "--stdio"])
    no_warnings(rep.stderr)
    assert re.search(r"# Samples: 37\s+of event 'cpu-clock'", rep.stdout), rep.stdout
    assert "sonde-fake" in rep.stdout
    scr = run([PERF, "script", "-i", out, "-F", "comm,pid,ip"])
    no_warnings(scr.stderr)
    lines = [l for l in scr.stdout.splitlines() if "sonde-fake" in l]
    assert len(lines) == 37
    assert all(re.match(r"\s*sonde-fake\s+4242\b", l) for l in lines), lines[:3]
    raw = run([PERF, "script", "-D", "-i", out])
    ips = re.findall(r"PERF_RECORD_SAMPLE\(IP, 0x2\): 4242/4242: (0x[0-9a-f]+) period: 1000000",
                     raw.stdout)
    assert len(ips) == 37 and set(ips) == {"0x400100", "0x400200", "0x400300"}
    assert "PERF_RECORD_COMM exec: sonde-fake:4242/4242" in raw.stdout
    assert "r-xp /nonexistent/sonde-fake.so" in raw.stdout

    facts, events, err = header_facts(out)
    no_warnings(err)
    assert facts["hostname"] == socket.gethostname()
    assert facts["os release"] == os.uname().release
    assert facts["arch"] == os.uname().machine
    assert facts["nrcpus online"] == str(os.sysconf("SC_NPROCESSORS_ONLN"))
    assert facts["cmdline"] == f"{GEN} {out} -n 37 -p 4242 -c sonde-fake"
    assert events == ["cpu-clock"]
    # and sonde reads back what it wrote, sonde's own feature included
    d, _ = dump(out)
    assert d["samples"] == 37 and d["comms"] == [[4242, "sonde-fake"]]
    assert 224 in d["features"] and d["nr_build_ids"] == 1


def test_perf_reads_killed_writer_file(tmp_path):
    out = str(tmp_path / "killed.data")
    p = gen(out, "-n", "500", "--abort", check=False)
    assert p.returncode != 0
    n, err = perf_script_count(out)
    no_warnings(err)
    assert n == 500
    d, _ = dump(out)
    assert d["samples"] == 500


def test_full_disk(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs")
    mnt = tmp_path / "small"
    mnt.mkdir()
    run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)])
    try:
        out = str(mnt / "full.data")
        p = gen(out, "-n", "100000", check=False)
        assert p.returncode == 1
        assert "No space left on device" in p.stderr and "offset 0x" in p.stderr, p.stderr
        d, rc = dump(out)
        assert rc == 0 and d["tail"] == "clean" and d["error"] is None
        assert d["samples"] > 100
        n, err = perf_script_count(out)
        no_warnings(err)
        assert n == d["samples"]
    finally:
        run(["umount", str(mnt)])
