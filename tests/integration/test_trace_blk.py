"""The blk tracer's records in a trace.dat, decoded by sonde trace report,
against the kernel's own text of the same events.

The blk tracer writes raw struct blk_io_trace records into the top-level
ring buffer; the kernel formats them in /sys/kernel/tracing/trace and
trace_pipe, trace-cmd (no blk plugin) prints only the pid.  The I/O goes to
a loop device over a file in the test's directory, so nothing else touches
the traced device and the workload decides every request.
"""
import os
import re
import subprocess

import pytest

from conftest import run, sonde

TRACEFS = "/sys/kernel/tracing"
# comm-pid [cpu] (irq flags) secs.usecs: text  (kernel text and sonde/trace-cmd report)
LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(?:[^\s\d]\S*\s+)?(\d+\.\d+):\s(.*)$")
BS = 4096
SEEK = 5      # first block dd writes: sectors from SEEK * 8
COUNT = 6


def parse(text, prefix=""):
    """{(pid, cpu, usecs): decoded text} of the blk lines of a listing."""
    out = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if not m or not m.group(5).startswith(prefix):
            continue
        secs, frac = m.group(4).split(".")
        usecs = int(secs) * 1000000 + int(frac[:6].ljust(6, "0"))
        key = (int(m.group(2)), int(m.group(3)), usecs)
        # leading blanks: report pads the event name to a column, so the
        # "%3d" of the major number is not told apart from the padding
        out.setdefault(key, []).append(m.group(5)[len(prefix):].lstrip())
    return out


def fields(text):
    """The kernel's blk text split as blk_log_action prints it: dev, act, rwbs, rest."""
    m = re.match(r"^\s*(\d+,\d+)\s+(\S+)\s+(\S+)\s(.*)$", text)
    assert m, text
    return m.groups()


@pytest.fixture
def loopdev(tmp_path):
    img = tmp_path / "disk.img"
    with open(img, "wb") as f:
        f.truncate(8 << 20)
    dev = run(["losetup", "-f", "--show", str(img)]).stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)


def workload(dev):
    """Direct writes of COUNT blocks, direct reads of them, a flush, a discard."""
    run(["dd", "if=/dev/urandom", f"of={dev}", f"bs={BS}", f"seek={SEEK}", f"count={COUNT}",
         "oflag=direct", "conv=fsync"])
    run(["dd", f"if={dev}", "of=/dev/null", f"bs={BS}", f"skip={SEEK}", f"count={COUNT}",
         "iflag=direct"])
    run(["blkdiscard", "-o", str(1 << 20), "-l", str(1 << 20), dev])


def write(path, text):
    with open(os.path.join(TRACEFS, path), "w") as f:
        f.write(text)


def read(path):
    with open(os.path.join(TRACEFS, path)) as f:
        return f.read()


@pytest.mark.tracefs_exclusive
def test_report_equals_kernel_text(tracefs, loopdev, tmp_path):
    """The same records: the kernel's trace file, then the buffer extracted."""
    name = os.path.basename(loopdev)
    saved = {f: read(f).strip() for f in ("current_tracer", "tracing_on")}
    try:
        write("tracing_on", "0")
        write("current_tracer", "blk")
        write("trace", "")
        with open(f"/sys/block/{name}/trace/enable", "w") as f:
            f.write("1")
        write("tracing_on", "1")
        workload(loopdev)
        write("tracing_on", "0")
        kernel = parse(read("trace"))
        dat = str(tmp_path / "x.dat")
        run(["trace-cmd", "extract", "-o", dat])
    finally:
        with open(f"/sys/block/{name}/trace/enable", "w") as f:
            f.write("0")
        write("current_tracer", saved["current_tracer"])
        write("tracing_on", saved["tracing_on"])
    ours = parse(sonde("trace", "report", dat).stdout, "blktrace: ")
    assert kernel and ours.keys() == kernel.keys()
    for key in kernel:
        assert ours[key] == kernel[key], key
    acts = {fields(t)[1] for v in kernel.values() for t in v}
    rwbs = {fields(t)[2] for v in kernel.values() for t in v}
    # the workload made what is compared: queue, get, issue, complete, plug,
    # unplug; writes, reads, a flush and a discard
    assert {"Q", "G", "D", "C", "P", "U"} <= acts, acts
    assert {"WS", "RS", "FN", "DS"} <= rwbs, rwbs


def blk_texts(listing, prefix=""):
    out = []
    for v in parse(listing, prefix).values():
        out += v
    return sorted(fields(t)[1:] for t in out)


@pytest.mark.tracefs_exclusive
def test_sonde_trace_dat_matches_live(tracefs, loopdev, tmp_path):
    """sonde trace -o, then the live sonde trace (the kernel's trace_pipe text),
    over the same writes: the same lines once time and pids are left out."""
    name = os.path.basename(loopdev)
    dd = ["dd", "if=/dev/zero", f"of={loopdev}", f"bs={BS}", f"seek={SEEK}",
          f"count={COUNT}", "oflag=direct"]
    out = str(tmp_path / "t.dat")
    sonde("trace", "-p", "blk", "-d", name, "-o", out, "--", *dd)
    ours = blk_texts(sonde("trace", "report", out).stdout, "blktrace: ")
    live = blk_texts(sonde("trace", "-p", "blk", "-d", name, "--", *dd).stdout)
    assert ours == live
    queued = sorted(rest for act, rwbs, rest in ours if act == "Q" and rwbs == "WS")
    assert queued == sorted(f"{(SEEK + i) * BS // 512} + {BS // 512} [dd]"
                            for i in range(COUNT))
