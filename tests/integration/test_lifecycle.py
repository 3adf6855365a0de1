"""How captures end: signals under a flood of events, a workload that ignores
them, and a sonde killed with SIGKILL (its workload must not run on, its
leftovers are reported by the doctor and removed by the next run)."""
import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import sonde, sonde_path, workload

GETPPID = "syscalls:sys_enter_getppid"


def children(pid):
    """Direct children of @pid."""
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as f:
            out += [int(x) for x in f.read().split()]
    return out


def wait_for(cond, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def alive(pid):
    """Whether @pid runs (a zombie does not count)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def stop(p, child=None):
    """Kills what a failed test left running."""
    if p.poll() is None:
        p.kill()
        p.wait()
    for pid in [child] if child else []:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def start_with_workload(args):
    """Starts sonde with a busy workload; returns (sonde Popen, workload pid)."""
    p = subprocess.Popen([sonde_path(), *args, "--", workload("getppid_loop"), "1000000000"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    kids = []
    assert wait_for(lambda: kids.extend(children(p.pid)) or kids, 10)
    # the workload runs once it exec'd (it waits at the gate before)
    assert wait_for(lambda: os.path.basename(os.readlink(f"/proc/{kids[0]}/exe")) ==
                    "getppid_loop", 10)
    return p, kids[0]


@pytest.mark.tracefs_exclusive
@pytest.mark.parametrize("mode", ["live", "record"])
def test_ctrl_c_ends_a_flood_in_bounded_time(tracefs, tmp_path, mode):
    """The issue's case: a flood of events keeps trace_pipe ready, so ppoll()
    never delivered the SIGINT; sonde ran on (state R) until SIGKILL."""
    args = ["trace", "-e", GETPPID, "-e", "sched:sched_switch", "--filter", "prev_pid != 0",
            "-b", "512"]
    if mode == "record":
        args += ["-o", str(tmp_path / "t.dat")]
    p, child = start_with_workload(args)
    time.sleep(2)
    p.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    try:
        _, err = p.communicate(timeout=20)
    finally:
        stop(p, child)
    took = time.monotonic() - t0
    assert p.returncode == 128 + signal.SIGINT, err
    assert took < 10, f"took {took:.1f} s to stop"
    assert not alive(child)
    assert f"sonde-{p.pid}" not in os.listdir(os.path.join(tracefs, "instances"))


@pytest.mark.tracefs_exclusive
def test_workload_ignoring_the_signal_is_killed(tracefs, tmp_path):
    """A workload that ignores SIGINT can't keep the capture running."""
    cmd = f"trap '' INT; exec {workload('getppid_loop')} 1000000000"
    p = subprocess.Popen([sonde_path(), "trace", "-e", GETPPID, "-o", str(tmp_path / "t.dat"),
                          "--", "sh", "-c", cmd],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    kids = []
    assert wait_for(lambda: kids.extend(children(p.pid)) or kids, 10)
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=30)
    finally:
        stop(p, kids[0])
    assert "did not exit within 3 s of Interrupt: killed" in err
    assert p.returncode == 128 + signal.SIGKILL
    assert f"sonde-{p.pid}" not in os.listdir(os.path.join(tracefs, "instances"))


@pytest.mark.tracefs_exclusive
@pytest.mark.parametrize("cmd", ["trace", "record", "stat"])
def test_workload_dies_with_a_killed_sonde(tracefs, tmp_path, cmd):
    """PR_SET_PDEATHSIG: a SIGKILLed sonde leaves no orphan workload."""
    args = {"trace": ["trace", "-e", GETPPID, "-o", str(tmp_path / "t.dat")],
            "record": ["record", "-e", "cpu-clock", "-o", str(tmp_path / "p.data")],
            "stat": ["stat", "-e", GETPPID]}[cmd]
    p, child = start_with_workload(args)
    p.kill()
    p.wait()
    try:
        assert wait_for(lambda: not alive(child), 5), "the workload runs on as an orphan"
    finally:
        if alive(child):
            os.kill(child, signal.SIGKILL)
        if cmd == "trace":
            # the next run removes the instance the killed one left
            inst = f"sonde-{p.pid}"
            assert inst in os.listdir(os.path.join(tracefs, "instances"))
            sonde("trace", "-e", GETPPID, "-o", str(tmp_path / "u.dat"), "--", "true")
            assert inst not in os.listdir(os.path.join(tracefs, "instances"))


def trace_cmd_events(path):
    """The sys_enter_getppid lines of trace-cmd report, as (pid, event) pairs."""
    p = subprocess.run(["trace-cmd", "report", str(path)], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    out = []
    for line in p.stdout.splitlines():
        m = re.match(r"\s*(.+)-(\d+)\s+\[(\d+)\]\s+[\d.]+:\s+(\S+):", line)
        if m:
            out.append((int(m.group(2)), m.group(4)))
    return out


def doctor_checks():
    return {c["id"]: c for c in json.loads(sonde("doctor", "--json").stdout)}


@pytest.mark.tracefs_exclusive
def test_killed_trace_is_reported_and_recovered(tracefs, tmp_path):
    """SIGKILL during trace -o: the earlier file stays, the doctor names the
    instance and the unsaved capture, recover writes a trace.dat trace-cmd
    reads with the workload's events, and nothing is left afterwards."""
    out = tmp_path / "t.dat"
    out.write_text("earlier capture\n")
    p, child = start_with_workload(["trace", "-e", GETPPID, "-o", str(out)])
    time.sleep(1.5)
    p.kill()
    p.wait()
    inst = f"sonde-{p.pid}"
    try:
        assert wait_for(lambda: not alive(child), 5)
        assert out.read_text() == "earlier capture\n"
        assert inst in os.listdir(os.path.join(tracefs, "instances"))
        checks = doctor_checks()
        assert checks["stale.instances"]["status"] == "warn"
        assert inst in checks["stale.instances"]["detail"]
        assert checks["stale.captures"]["status"] == "warn"
        assert f"{out} (pid {p.pid}," in checks["stale.captures"]["detail"]
        assert checks["stale.captures"]["fix"] == f"sonde trace recover {out}"

        r = sonde("trace", "recover", str(out))
        m = re.search(r"recover: (\d+) events of the killed sonde (\d+) written to (\S+) \]",
                      r.stderr)
        assert m and int(m.group(2)) == p.pid and m.group(3) == str(out), r.stderr
        events = trace_cmd_events(out)
        # 1.5 s of a getppid loop: far more than one buffer page of events
        assert len(events) > 10000
        assert len(events) == int(m.group(1))
        assert set(events) == {(child, "sys_enter_getppid")}
        assert sorted(os.listdir(tmp_path)) == ["t.dat"]
        assert inst not in os.listdir(os.path.join(tracefs, "instances"))
        checks = doctor_checks()
        assert checks["stale.instances"]["status"] == "ok"
        assert checks["stale.captures"]["status"] == "ok"
        assert sonde("trace", "recover", check=False).returncode == 1
    finally:
        if alive(child):
            os.kill(child, signal.SIGKILL)


@pytest.mark.tracefs_exclusive
def test_next_trace_warns_about_a_killed_capture(tracefs, tmp_path):
    out = tmp_path / "t.dat"
    p, child = start_with_workload(["trace", "-e", GETPPID, "-o", str(out)])
    time.sleep(1)
    p.kill()
    p.wait()
    r = sonde("trace", "-e", GETPPID, "-o", str(tmp_path / "u.dat"), "--", "true")
    assert f"a sonde trace (pid {p.pid}) was killed while recording {out}" in r.stderr
    assert f"sonde-{p.pid}" not in os.listdir(os.path.join(tracefs, "instances"))
    sonde("trace", "recover", str(out))
    assert trace_cmd_events(out)


def test_failed_trace_keeps_the_earlier_file(tracefs, tmp_path):
    """Writing the trace.dat fails (file size limit): the earlier file stays
    whole and no temporary file is left (before: cut to the limit)."""
    import resource
    out = tmp_path / "t.dat"
    out.write_text("earlier capture\n")

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (200 * 1024, 200 * 1024))

    p = subprocess.run([sonde_path(), "trace", "-e", GETPPID, "-o", str(out), "--",
                        workload("getppid_loop"), "100"], preexec_fn=limit,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1
    assert "writing the headers" in p.stderr
    assert out.read_text() == "earlier capture\n"
    assert sorted(os.listdir(tmp_path)) == ["t.dat"]
    for e in ["nosuch:event"]:
        p = sonde("trace", "-e", e, "-o", str(out), "--", "true", check=False)
        assert p.returncode == 1
    assert out.read_text() == "earlier capture\n"
    assert sorted(os.listdir(tmp_path)) == ["t.dat"]


def capture_args(cmd, tmp_path):
    return {"record": ["record", "-o", str(tmp_path / "r.data")],
            "stat": ["stat"],
            "trace": ["trace", "-e", GETPPID, "-o", str(tmp_path / "t.dat")]}[cmd]


@pytest.mark.tracefs_exclusive
@pytest.mark.parametrize("cmd", ["record", "stat", "trace"])
def test_exit_codes_agree(tracefs, tmp_path, cmd):
    """The commands that run a workload share one signal and exit-code helper
    (src/cli/signals.c): its exit status, 128 + the signal that killed it, and
    a SIGTERM to sonde passed on to the workload, the same for all three."""
    args = capture_args(cmd, tmp_path)
    p = sonde(*args, "--", "sh", "-c", "exit 7", check=False)
    assert p.returncode == 7, p.stderr
    p = sonde(*args, "--", "sh", "-c", "kill -SEGV $$", check=False)
    assert p.returncode == 128 + signal.SIGSEGV, p.stderr
    p, child = start_with_workload(args)
    p.send_signal(signal.SIGTERM)
    try:
        _, err = p.communicate(timeout=20)
    finally:
        stop(p, child)
    assert p.returncode == 128 + signal.SIGTERM, err
    assert not alive(child)


@pytest.mark.tracefs_exclusive
def test_trace_on_a_full_disk_names_the_cause(tracefs, tmp_path):
    """trace -o on a file system without space says "No space left on
    device" (before: "writing the headers (event formats …) failed"), and
    the earlier file there is kept."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(mnt)], check=True)
    try:
        out = mnt / "t.dat"
        out.write_bytes(b"earlier capture")
        p = sonde("trace", "-e", "sched:sched_switch", "-o", str(out), "--", "sh", "-c",
                  "for i in $(seq 200); do sleep 0.001; done", check=False)
        assert p.returncode == 1, p.stderr
        first = [l for l in p.stderr.splitlines() if l.startswith("sonde:")][0]
        assert re.match(r"sonde: \S+: No space left on device", first), p.stderr
        assert out.read_bytes() == b"earlier capture"
    finally:
        subprocess.run(["umount", str(mnt)], check=True)
