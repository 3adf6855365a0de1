"""Offline DWARF unwinding (src/symbols/unwind.c) against perf as the oracle.

Captures of workloads built without frame pointers are unwound by
tests/unit/unwind_dump (sonde's unwinder) and by `perf script` (perf's own
libdw unwinder); both list caller frames as return address - 1 and print
ips relative to their mapping, so the chains must be the same numbers.
"""
import os
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, run, sonde, workload

UNWIND_DUMP = os.path.join(BUILD, "tests", "unit", "unwind_dump")
# perf's chains may differ past the process entry: its last frames depend
# on how far each unwinder trusts _start's CFI.
ENTRY = ("_start", "__libc_start_main")


def perf_chains(path):
    """{(tid, time_ns): [(ip, sym), ...]} of the user frames perf unwinds."""
    out = run(["perf", "script", "-F", "tid,time,ip,sym", "--ns", "--no-inline", "-i", path]).stdout
    chains, key = {}, None
    for line in out.splitlines():
        m = re.match(r"^\s*(\d+)\s+(\d+)\.(\d{9}):\s*$", line)
        if m:
            key = (int(m[1]), int(m[2]) * 1_000_000_000 + int(m[3]))
            chains[key] = []
            continue
        parts = line.split(None, 1)
        if key is None or not parts:
            continue
        ip = int(parts[0], 16)
        if ip >= 0xffff000000000000:  # kernel part of the callchain
            continue
        chains[key].append((ip, parts[1].strip() if len(parts) > 1 else ""))
    return chains


def sonde_chains(path):
    """{(tid, time_ns): [ip, ...]} from unwind_dump -r (ips relative to their mapping)."""
    p = run([UNWIND_DUMP, "-r", path])
    chains, key = {}, None
    for line in p.stdout.splitlines():
        if line.startswith("# "):
            tid, t = line[2:].split()
            key = (int(tid), int(t))
            chains[key] = []
        elif line and key is not None:
            chains[key].append(int(line, 16))
    assert "0 errors" in p.stderr, p.stderr
    return chains


def agreement(perf, ours):
    """(samples compared, samples identical up to the entry frame, first mismatches)."""
    compared = same = 0
    bad = []
    for key, pc in perf.items():
        if not pc:
            continue
        compared += 1
        want = [ip for ip, _ in pc]
        for i, (_, sym) in enumerate(pc):
            if sym.startswith(ENTRY):
                want = want[:i + 1]
                break
        got = ours.get(key, [])
        if got[:len(want)] == want:
            same += 1
        elif len(bad) < 5:
            bad.append((key, [hex(x) for x in want], [hex(x) for x in got]))
    return compared, same, bad


def symbol_ranges(path, names):
    """{name: (start, end)} from nm -S."""
    out = run(["nm", "-S", path]).stdout
    r = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[3] in names:
            r[f[3]] = (int(f[0], 16), int(f[0], 16) + int(f[1], 16))
    return r


def inside(ip, rng):
    return rng[0] <= ip < rng[1]


@pytest.fixture(scope="module")
def tools():
    if not os.path.exists(UNWIND_DUMP):
        pytest.fail(f"{UNWIND_DUMP} not built")
    if not shutil.which("perf"):
        pytest.skip("perf is not installed")


def check_against_perf(path, min_samples):
    perf = perf_chains(path)
    ours = sonde_chains(path)
    compared, same, bad = agreement(perf, ours)
    assert compared >= min_samples, f"only {compared} samples with user frames"
    assert same >= 0.95 * compared, f"{same}/{compared} identical; first differences: {bad}"
    return ours


def check_hot_reaches_main(chains, exe, leaf):
    syms = symbol_ranges(exe, {leaf, "main"})
    assert leaf in syms and "main" in syms
    leaf_samples = [c for c in chains.values() if c and inside(c[0], syms[leaf])]
    assert len(leaf_samples) >= 20, f"{len(leaf_samples)} samples in {leaf}"
    reach = sum(any(inside(ip, syms["main"]) for ip in c[1:]) for c in leaf_samples)
    assert reach >= 0.95 * len(leaf_samples), f"{reach}/{len(leaf_samples)} reach main"
    return leaf_samples


def test_split_nofp_sonde_capture(tools, tmp_path):
    f = str(tmp_path / "split.data")
    exe = workload("split-nofp")
    sonde("record", "--call-graph", "dwarf", "-o", f, "--", exe, "0.3")
    chains = check_against_perf(f, 300)
    samples = check_hot_reaches_main(chains, exe, "hot_fn")
    # hot_fn <- main <- libc: at least three frames
    assert all(len(c) >= 3 for c in samples)


def test_deep_stack_16k(tools, tmp_path):
    f = str(tmp_path / "deep.data")
    exe = workload("deep_stack")
    sonde("record", "--call-graph", "dwarf,16384", "-o", f, "--", exe, "0.3")
    chains = check_against_perf(f, 300)
    samples = check_hot_reaches_main(chains, exe, "leaf")
    # leaf, 25 descend frames, main: beyond what an 8 KB copy reaches
    main = symbol_ranges(exe, {"main"})["main"]
    assert all(len(c) >= 27 for c in samples if any(inside(ip, main) for ip in c))


def test_split_nofp_perf_capture(tools, tmp_path):
    f = str(tmp_path / "perf.data")
    exe = workload("split-nofp")
    run(["perf", "record", "-q", "--call-graph", "dwarf", "-o", f, "--", exe, "0.3"])
    chains = check_against_perf(f, 300)
    check_hot_reaches_main(chains, exe, "hot_fn")


def test_unwind_dump_bad_file(tools, tmp_path):
    f = tmp_path / "junk.data"
    f.write_bytes(b"not a perf file")
    p = subprocess.run([UNWIND_DUMP, str(f)], capture_output=True, text=True)
    assert p.returncode == 1 and "unwind_dump:" in p.stderr


def blocks(text):
    """The sample blocks of script output whose first user frame is in the [vdso]."""
    return [b for b in text.split("\n\n")
            if re.search(r"^\s+[0-9a-f]+ \S+ \(\[vdso\]\)$", b, re.M)]


@pytest.mark.parametrize("home", ["cache", "empty"])
def test_vdso_samples_keep_their_callers(tools, tmp_path, home):
    """A sample inside the vDSO is unwound with the vDSO's own CFI (the
    image from the build-id cache, or this machine's when the build ids
    match), as symbols find it: __vdso_clock_gettime <- clock_gettime
    <- main, frame for frame as perf script shows, even where the
    frame-pointer guess fails (its first instructions, before the frame is
    set up: ~2% of the samples)."""
    f = str(tmp_path / "vdso.data")
    (tmp_path / "cache").mkdir()
    (tmp_path / "empty").mkdir()
    env = dict(os.environ, HOME=str(tmp_path / "cache"))
    sonde("record", "--call-graph", "dwarf", "-F", "4000", "-o", f, "--", workload("vdso_loop"),
          env=env)
    theirs = blocks(run(["perf", "script", "-i", f], env=env).stdout)
    ours = blocks(sonde("script", "-i", f, env=dict(env, HOME=str(tmp_path / home))).stdout)
    assert len(theirs) > 500
    assert all(re.search(r"^\s+[0-9a-f]+ main\+0x[0-9a-f]+ \(", b, re.M) for b in theirs)
    assert ours == theirs
