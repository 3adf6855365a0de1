"""Pipe-mode perf.data (perf record -o -, sonde record -o -) read by sonde,
with perf script -i - on the same bytes as the oracle."""
import collections
import json
import re
import signal
import subprocess

import pytest

from conftest import run, sonde, sonde_path, workload

EVENTS = "sched:sched_switch,cpu-clock:ppp"
GETPPID = "syscalls:sys_enter_getppid"
N_GETPPID = 2345


def piped(cmd, data):
    """Runs cmd with data on stdin: (returncode, stdout, stderr)."""
    p = subprocess.run(cmd, input=data, capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def perf_pipe(events, *cmd):
    """The bytes perf record -o - writes for a workload."""
    p = subprocess.run(["perf", "record", "-o", "-", "--no-bpf-event", "-e", events, "--",
                        *cmd], capture_output=True, timeout=120, check=True)
    return p.stdout


def event_counts(script_text):
    """{event: lines} from perf script / sonde script -F event output."""
    return collections.Counter(" ".join(l.split()).rstrip(":")
                               for l in script_text.splitlines() if l.strip())


@pytest.fixture(scope="module")
def stream(tracefs):
    """A perf pipe stream with tracepoints and a modified cpu-clock.  sh waits
    for its child and for sleep, so it switches out for sure.  perf 6.1 here
    sometimes writes a stream its own script aborts on (MACHINE.md): such a
    stream is made again."""
    cmd = ["sh", "-c", f"{workload('getppid_loop')} {N_GETPPID}; sleep 0.01"]
    for _ in range(3):
        data = perf_pipe(EVENTS + "," + GETPPID, *cmd)
        if piped(["perf", "script", "-i", "-"], data)[0] == 0:
            return data
    pytest.fail("perf could not read its own pipe stream three times")


def test_events_named_as_perf_names_them(stream):
    rc, ours, err = piped([sonde_path(), "script", "-i", "-", "-F", "comm,event"], stream)
    assert rc == 0, err
    rc, theirs, _ = piped(["perf", "script", "-i", "-", "-F", "comm,event"], stream)
    assert rc == 0
    counts = event_counts(ours)
    assert counts == event_counts(theirs)
    assert counts["getppid_loop " + GETPPID] == N_GETPPID
    assert counts["getppid_loop cpu-clock:ppp"] > 0
    assert not any("(unnamed)" in k for k in counts)


def test_tracepoints_decode_from_the_pipe(stream):
    """The tracing data comes in HEADER_TRACING_DATA: fields decode as perf's do."""
    f = "comm,tid,event,trace"
    rc, ours, err = piped([sonde_path(), "script", "-i", "-", "-F", f, "--event",
                           "sched:sched_switch"], stream)
    assert rc == 0, err
    rc, theirs, _ = piped(["perf", "script", "-i", "-", "-F", f], stream)
    switches = [l for l in theirs.splitlines() if "sched:sched_switch" in l]
    assert switches and "prev_comm=" in ours
    assert ours.splitlines() == switches


def test_summary_and_json(stream):
    rc, out, err = piped([sonde_path(), "script", "-i", "-", "--summary"], stream)
    assert rc == 0, err
    assert re.search(r"^\s+%d\s+getppid_loop\s+\d+\s+%s$" % (N_GETPPID, GETPPID), out,
                     re.M), out
    rc, out, err = piped([sonde_path(), "script", "-i", "-", "--json",
                          "--event", GETPPID, "--comm", "getppid_loop"], stream)
    assert rc == 0, err
    rows = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    assert len(rows) == N_GETPPID and {r["event"] for r in rows} == {GETPPID}


def test_report_names_events(stream):
    rc, out, err = piped([sonde_path(), "report", "-i", "-", "--stdio"], stream)
    assert rc == 0, err
    for ev in ("sched:sched_switch", "cpu-clock:ppp", GETPPID):
        assert f"of event '{ev}'" in out


@pytest.mark.parametrize("cut", [0, 8, 100, 1000, 5000, -1000, -7])
def test_cut_streams_neither_crash_nor_hang(stream, cut):
    """A stream that ends anywhere: an error or a report of what came, no signal."""
    data = stream[:16 + cut] if cut >= 0 else stream[:cut]
    for cmd in (["report", "--stdio"], ["script"], ["script", "--summary"]):
        rc, out, err = piped([sonde_path(), *cmd, "-i", "-"], data)
        assert rc in (0, 1), (cmd, rc, err)
        if rc == 1:
            assert err.startswith("sonde: "), err


def test_header_only_stream_is_an_error_not_a_crash():
    """PERFILE2 and the pipe header size, nothing else: what perf writes when
    it fails at once."""
    data = b"PERFILE2" + (16).to_bytes(8, "little")
    rc, out, err = piped([sonde_path(), "report", "-i", "-"], data)
    assert rc == 1 and "declares no events" in err


def sonde_record_stream(*args, cwd=None):
    """sonde record -o - ...: (returncode, stream bytes, stderr)."""
    p = subprocess.run([sonde_path(), "record", "-o", "-", *args], capture_output=True,
                       timeout=120, cwd=cwd)
    return p.returncode, p.stdout, p.stderr.decode()


def test_record_to_stdout_is_perf_pipe_mode(tmp_path, tracefs):
    # sh waits for its child and then for sleep: switches out for sure.
    rc, data, err = sonde_record_stream(
        "-e", GETPPID + ",sched:sched_switch,cpu-clock", "--", "sh", "-c",
        f"{workload('getppid_loop')} {N_GETPPID}; sleep 0.01", cwd=tmp_path)
    assert rc == 0, err
    assert data[:16] == b"PERFILE2" + (16).to_bytes(8, "little")
    assert list(tmp_path.iterdir()) == []  # no file named "-"
    rc, theirs, perr = piped(["perf", "script", "-i", "-", "-F", "comm,event"], data)
    assert rc == 0 and perr == "", perr
    assert event_counts(theirs)["getppid_loop " + GETPPID] == N_GETPPID
    rc, ours, err = piped([sonde_path(), "script", "-i", "-", "-F", "comm,event"], data)
    assert rc == 0, err
    assert event_counts(ours) == event_counts(theirs)
    # Fields decode in perf from the HEADER_TRACING_DATA record sonde sent.
    f = "tid,event,trace"
    rc, theirs, _ = piped(["perf", "script", "-i", "-", "-F", f], data)
    switches = [l for l in theirs.splitlines() if "sched:sched_switch" in l]
    assert switches and all("prev_comm=" in l for l in switches)
    rc, ours, _ = piped([sonde_path(), "script", "-i", "-", "-F", f, "--event",
                         "sched:sched_switch"], data)
    assert ours.splitlines() == switches


def test_record_pipe_into_both_reports(tmp_path):
    """sonde record -o - -- cmd | perf report -i - and | sonde report -i -."""
    rc, data, err = sonde_record_stream("-z", "--", workload("getppid_loop"), "200000")
    assert rc == 0, err
    rc, theirs, perr = piped(["perf", "report", "-i", "-", "--stdio", "--sort", "comm"], data)
    assert rc == 0 and "Error" not in perr, perr
    # perf abbreviates sample counts from 1000 on ("1K"): the event count is exact.
    m = re.search(r"# Event count \(approx.\): (\d+)", theirs)
    assert m and int(m.group(1)) > 10 * 250000, theirs
    rc, ours, err = piped([sonde_path(), "report", "-i", "-", "--stdio", "--sort", "comm"], data)
    assert rc == 0, err
    assert re.search(r"# Event count \(approx.\): %s$" % m.group(1), ours, re.M), ours
    assert re.search(r"100\.00%\s+getppid_loop", ours)


def test_record_into_a_fifo(tmp_path, tracefs):
    """A FIFO gets the pipe format (no seeks, no 'Illegal seek'), and stays a FIFO."""
    import os
    import stat
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # The shell's open blocks until sonde opens the other end (a non-blocking
    # open would let perf read EOF at once, and sonde would then wait for a reader).
    reader = subprocess.Popen(["sh", "-c", 'exec perf script -i - -F event < "$0"', str(fifo)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p = sonde("record", "-e", GETPPID, "-o", str(fifo), "--", workload("getppid_loop"),
              str(N_GETPPID))
    out, perr = reader.communicate(timeout=60)
    assert "Illegal seek" not in p.stderr
    assert reader.returncode == 0, perr
    assert event_counts(out)[GETPPID] == N_GETPPID
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(f.name for f in tmp_path.iterdir()) == ["fifo"]
