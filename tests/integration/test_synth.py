"""Synthesized records (include/sonde/synth.h) on the real /proc, with perf as the oracle.

tests/unit/synth_dump prints what the synthesizers make; perf record writes
what perf 6.1 synthesizes for the same process (-p) or machine (-a), and
the perf.data file is parsed here directly (header, data section, record
by record) so the comparison is field for field, not through perf script's
formatting.
"""
import os
import struct
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import BUILD, run

DUMP = os.path.join(BUILD, "tests", "unit", "synth_dump")

PERF_RECORD_MMAP, PERF_RECORD_COMM, PERF_RECORD_FORK, PERF_RECORD_MMAP2 = 1, 3, 7, 10
PROT_READ, PROT_WRITE, PROT_EXEC = 1, 2, 4
MAP_SHARED, MAP_PRIVATE = 1, 2

# A process with two named threads that sleep: nothing maps or renames while perf looks.
TARGET = r"""
import os, sys, threading, time
def worker(name):
    with open("/proc/self/task/%d/comm" % threading.get_native_id(), "w") as f:
        f.write(name)
    time.sleep(600)
for n in ("synth-w1", "synth-w2"):
    threading.Thread(target=worker, args=(n,), daemon=True).start()
time.sleep(0.3)
print("ready", flush=True)
time.sleep(600)
"""


def cstr(b):
    return b.split(b"\0", 1)[0].decode(errors="replace")


def perf_records(path):
    """Parsed MMAP/MMAP2/COMM/FORK records of a perf.data file, in file order."""
    d = open(path, "rb").read()
    assert d[:8] == b"PERFILE2"
    data_off, data_size = struct.unpack_from("<QQ", d, 40)
    off, out = data_off, []
    while off < data_off + data_size:
        typ, misc, size = struct.unpack_from("<IHH", d, off)
        r = d[off:off + size]
        if typ == PERF_RECORD_MMAP:
            pid, tid, start, ln, pgoff = struct.unpack_from("<iiQQQ", r, 8)
            out.append(("MMAP", misc, pid, tid, start, ln, pgoff, cstr(r[40:])))
        elif typ == PERF_RECORD_MMAP2:
            pid, tid, start, ln, pgoff, maj, mn, ino, gen, prot, flags = struct.unpack_from(
                "<iiQQQIIQQII", r, 8)
            out.append(("MMAP2", misc, pid, tid, start, ln, pgoff, maj, mn, ino, prot, flags,
                        cstr(r[72:])))
        elif typ == PERF_RECORD_COMM:
            pid, tid = struct.unpack_from("<ii", r, 8)
            out.append(("COMM", misc, pid, tid, cstr(r[16:])))
        elif typ == PERF_RECORD_FORK:
            out.append(("FORK", misc) + struct.unpack_from("<iiii", r, 8))
        off += size
        assert size >= 8
    return out


def dump_records(*args):
    """synth_dump's lines, typed like perf_records()."""
    p = run([DUMP, "-i", "32", *args])
    out = []
    for line in p.stdout.splitlines():
        f = line.split(" ")
        kind, misc = f[0], int(f[1], 16)
        if kind == "MMAP":
            out.append((kind, misc, int(f[2]), int(f[3]), int(f[4], 16), int(f[5], 16),
                        int(f[6], 16), " ".join(f[7:])))
        elif kind == "MMAP2":
            out.append((kind, misc, int(f[2]), int(f[3]), int(f[4], 16), int(f[5], 16),
                        int(f[6], 16), int(f[7], 16), int(f[8], 16), int(f[9]), int(f[10], 16),
                        int(f[11], 16), " ".join(f[12:])))
        elif kind == "COMM":
            out.append((kind, misc, int(f[2]), int(f[3]), " ".join(f[4:])))
        elif kind == "FORK":
            out.append((kind, misc) + tuple(int(x) for x in f[2:6]))
    return out


def perf_record(args, seconds=0.3):
    fd, path = tempfile.mkstemp(suffix=".data")
    os.close(fd)
    try:
        run(["perf", "record", "-q", "-e", "cpu-clock", "-o", path, *args, "--",
             "sleep", str(seconds)])
        return perf_records(path)
    finally:
        os.unlink(path)


@pytest.fixture(scope="module")
def target():
    if os.geteuid() != 0:
        pytest.fail("needs root: perf record -a and other processes' maps")
    if not os.path.exists(DUMP):
        pytest.fail(f"{DUMP} not built")
    p = subprocess.Popen([sys.executable, "-c", TARGET], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    yield p.pid
    p.kill()
    p.wait()


def only(recs, pid, kinds=("COMM", "MMAP2", "FORK")):
    return [r for r in recs if r[0] in kinds and r[2] == pid]


def test_process_like_perf_p(target):
    """-p: the same COMM per thread and the same MMAP2s, in the same order."""
    mine = dump_records("-p", str(target))
    perf = only(perf_record(["-p", str(target)]), target)
    assert mine == perf
    comms = sorted(r[4] for r in mine if r[0] == "COMM")
    assert comms == sorted(["python3", "synth-w1", "synth-w2"])
    assert not any(r[0] == "FORK" for r in mine)


def test_process_matches_proc_maps(target):
    """The MMAP2s are exactly the executable lines of /proc/PID/maps."""
    want = []
    with open(f"/proc/{target}/maps") as f:
        for line in f:
            fields = line.split(None, 5)
            rng, perms, off, dev, ino = fields[:5]
            name = fields[5].rstrip("\n") if len(fields) > 5 else ""
            if "x" not in perms:
                continue
            start, end = (int(x, 16) for x in rng.split("-"))
            maj, mn = (int(x, 16) for x in dev.split(":"))
            prot = (PROT_READ if perms[0] == "r" else 0) | (PROT_WRITE if perms[1] == "w" else 0) \
                | PROT_EXEC
            flags = MAP_SHARED if perms[3] == "s" else MAP_PRIVATE
            want.append(("MMAP2", 2, target, target, start, end - start, int(off, 16), maj, mn,
                         int(ino), prot, flags, name or "//anon"))
    got = [r for r in dump_records("-p", str(target)) if r[0] == "MMAP2"]
    assert got == want
    names = [r[-1] for r in got]
    assert "[vdso]" in names
    assert any(n.endswith("python3.11") or "python3" in n for n in names)


def test_all_like_perf_a(target):
    """-a: for the target and for kthreadd, the same FORK, COMM and MMAP2 records."""
    perf = perf_record(["-a"], 0.1)
    mine = dump_records("-a")
    for pid in (target, 2):
        assert only(mine, pid) == only(perf, pid), pid
    forks = [r for r in mine if r[0] == "FORK" and r[2] == target]
    # leader: parent is PPid; threads: parent is the leader; misc FORK_EXEC
    assert forks[0] == ("FORK", 0x2000, target, os.getpid(), target, os.getpid())
    assert all(r[3] == target and r[5] == target for r in forks[1:])
    # kernel threads get no MMAP2
    assert not [r for r in mine if r[0] == "MMAP2" and r[2] == 2]


def test_kernel_mmap_like_perf(target):
    """The kernel's MMAP: [kernel.kallsyms]_text, start = pgoff = _text as perf has it.

    perf ends the map at _etext, which sits near the end of kallsyms; sonde
    stops reading past _text (30 ms saved per capture) and takes perf's own
    fallback end: the lowest module above the kernel, else ~0."""
    perf = [r for r in perf_record(["-a"], 0.1) if r[0] == "MMAP" and r[2] == -1]
    mine = dump_records("-k")
    assert len(mine) == 1
    assert mine[0][:5] == perf[0][:5] and mine[0][6:] == perf[0][6:]
    kind, misc, pid, tid, start, ln, pgoff, name = mine[0]
    assert (misc, pid, tid, name) == (1, -1, 0, "[kernel.kallsyms]_text")
    syms = {}
    with open("/proc/kallsyms") as f:
        for line in f:
            a, t, n = line.split()[:3]
            if n in ("_text", "_etext") and t in "tTwW":
                syms.setdefault(n, int(a, 16))
    assert start == pgoff == syms["_text"]
    if not os.path.exists("/proc/modules"):
        assert start + ln == 2**64 - 1
    assert start + ln >= syms["_etext"]


def test_modules_like_perf(target):
    """One MMAP per module, as perf has them (none on a kernel without modules)."""
    perf = [r for r in perf_record(["-a"], 0.1) if r[0] == "MMAP" and r[2] == -1][1:]
    mine = dump_records("-m")
    assert mine == perf
    if not os.path.exists("/proc/modules"):
        assert mine == []


def test_kallsyms_snapshot():
    p = run([DUMP, "-K"])
    with open("/proc/kallsyms") as f:
        want = [line for line in f if line.split(" ", 2)[1] in ("t", "T", "w", "W")]
    assert p.stdout.splitlines(keepends=True) == want


def test_module_sections():
    p = run([DUMP, "-X"])
    if not os.path.exists("/proc/modules"):
        assert p.stdout == ""
        return
    names = [line.split()[0] for line in open("/proc/modules")]
    heads = [line.split()[0] for line in p.stdout.splitlines() if not line.startswith("\t")]
    assert heads == names
