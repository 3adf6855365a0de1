"""sonde trace against the real kernel, with trace-cmd as the oracle.

Every run checks that sonde left tracefs as it found it: the top-level
files it could touch, the instances, and the block device switch.
"""
import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import run, sonde, sonde_path, workload

GETPPID = "syscalls:sys_enter_getppid"


def snapshot(tracefs):
    """The top-level state sonde trace may touch, and the instance list."""
    files = ["current_tracer", "tracing_on", "buffer_size_kb", "tracing_cpumask",
             "set_event", "set_event_pid", "trace_clock", "options/event-fork",
             "options/function-fork", "events/syscalls/sys_enter_getppid/enable",
             "events/syscalls/sys_enter_getppid/filter",
             "events/syscalls/sys_enter_write/filter"]
    state = {}
    for f in files:
        try:
            with open(os.path.join(tracefs, f)) as fh:
                state[f] = fh.read()
        except OSError as e:
            state[f] = f"error {e.errno}"
    state["instances"] = sorted(os.listdir(os.path.join(tracefs, "instances")))
    for dev in ("vda",):
        p = f"/sys/block/{dev}/trace/enable"
        if os.path.exists(p):
            with open(p) as fh:
                state[p] = fh.read()
    return state


@pytest.fixture
def unchanged(tracefs):
    """Fails the test when tracefs differs after it from before it."""
    before = snapshot(tracefs)
    yield before
    after = snapshot(tracefs)
    assert after == before


def report_events(path):
    """(pid, cpu, event) of every event trace-cmd report prints."""
    p = run(["trace-cmd", "report", path])
    out = []
    for line in p.stdout.splitlines():
        m = re.match(r"\s*(.+)-(\d+)\s+\[(\d+)\]\s+[\d.]+:\s+(\S+):", line)
        if m:
            out.append((int(m.group(2)), int(m.group(3)), m.group(4)))
    return out


def test_record_exact_count(tracefs, unchanged, tmp_path):
    out = str(tmp_path / "trace.dat")
    p = sonde("trace", "-e", GETPPID, "-o", out, "--", workload("getppid_loop"), "1000")
    ev = report_events(out)
    assert len(ev) == 1000
    assert {e[2] for e in ev} == {"sys_enter_getppid"}
    assert len({e[0] for e in ev}) == 1  # the workload only
    assert "[ sonde trace: 1000 events on CPUs" in p.stderr
    # sonde's own reader agrees with trace-cmd
    r = sonde("trace", "report", out)
    assert sum(1 for l in r.stdout.splitlines() if "sys_enter_getppid" in l) == 1000
    assert not [f for f in os.listdir(tmp_path) if "sonde-cpu" in f]


def test_only_workload(tracefs, unchanged, tmp_path):
    """Another process making the same calls meanwhile is not traced."""
    noise = subprocess.Popen([workload("getppid_loop"), "100000000"])
    try:
        out = str(tmp_path / "trace.dat")
        sonde("trace", "-e", GETPPID, "-o", out, "--", workload("getppid_loop"), "500", "0.1")
    finally:
        noise.kill()
        noise.wait()
    ev = report_events(out)
    assert len(ev) == 500
    assert noise.pid not in {e[0] for e in ev}


def test_pid_option(tracefs, unchanged, tmp_path):
    target = subprocess.Popen([workload("getppid_loop"), "100000000"])
    other = subprocess.Popen([workload("getppid_loop"), "100000000"])
    out = str(tmp_path / "trace.dat")
    try:
        p = subprocess.Popen([sonde_path(), "trace", "-e", GETPPID, "-b", "4096",
                              "-P", str(target.pid), "-o", out],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    finally:
        for proc in (target, other):
            proc.kill()
            proc.wait()
    assert p.returncode == 0, err
    ev = report_events(out)
    assert ev
    assert {e[0] for e in ev} == {target.pid}


def test_filter(tracefs, unchanged, tmp_path):
    out = str(tmp_path / "trace.dat")
    sonde("trace", "-e", "syscalls:sys_enter_write", "--filter", "count == 777", "-o", out,
          "--", workload("writer"), "777", "100", "777", "5", "777")
    ev = report_events(out)
    assert len(ev) == 3
    p = run(["trace-cmd", "report", out])
    assert p.stdout.count("count: 0x00000309") == 3  # 777


def test_bad_filter(tracefs, unchanged):
    p = sonde("trace", "-e", GETPPID, "--filter", "nosuchfield == 1", "--", "true",
              check=False)
    assert p.returncode == 1
    assert "filter 'nosuchfield == 1' refused" in p.stderr


def test_live(tracefs, unchanged):
    p = sonde("trace", "-e", GETPPID, "--", workload("getppid_loop"), "50")
    # trace_pipe names tasks from the kernel's saved comms, which a short
    # workload may not have refreshed since its exec: count by pid.
    lines = [l for l in p.stdout.splitlines() if "sys_getppid" in l]
    assert len(lines) == 50
    assert len({re.match(r"\s*\S*-(\d+)\s", l).group(1) for l in lines}) == 1
    assert "[ sonde trace: 50 events" in p.stderr


def test_buffer_and_cpumask_applied(tracefs, unchanged, tmp_path):
    """-b and -C are in the instance's files while the trace runs."""
    p = subprocess.Popen([sonde_path(), "trace", "-e", GETPPID, "-b", "2048", "-C", "1",
                          "--", "sleep", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    inst = os.path.join(tracefs, "instances", f"sonde-{p.pid}")
    for _ in range(50):
        if os.path.exists(os.path.join(inst, "buffer_size_kb")):
            break
        time.sleep(0.02)
    time.sleep(0.2)
    with open(os.path.join(inst, "buffer_size_kb")) as f:
        kb = f.read().strip()
    with open(os.path.join(inst, "tracing_cpumask")) as f:
        mask = f.read().strip()
    with open(os.path.join(inst, "set_event_pid")) as f:
        pids = f.read().split()
    p.communicate(timeout=30)
    assert p.returncode == 0
    assert 2048 <= int(kb) < 2048 + 64  # the kernel rounds up to whole pages
    assert int(mask, 16) == 2
    assert len(pids) == 1


@pytest.mark.skipif(os.cpu_count() < 2, reason="needs two CPUs")
def test_cpumask_filters_cpus(tracefs, unchanged, tmp_path):
    out = str(tmp_path / "trace.dat")
    p = sonde("trace", "-e", GETPPID, "-C", "0", "-o", out, "--",
              "taskset", "-c", "0", workload("getppid_loop"), "300")
    ev = [e for e in report_events(out) if e[2] == "sys_enter_getppid"]
    assert len(ev) == 300 and {e[1] for e in ev} == {0}
    # the summary names the CPUs traced, not every online one
    assert re.search(r"events on CPUs 0 written to", p.stderr), p.stderr
    p = sonde("trace", "-e", GETPPID, "-C", "1", "--", workload("getppid_loop"), "3")
    assert re.search(r"events on CPUs 1 \]", p.stderr), p.stderr
    sonde("trace", "-e", GETPPID, "-C", "0", "-o", out, "--",
          "taskset", "-c", "1", workload("getppid_loop"), "300")
    assert [e for e in report_events(out) if e[2] == "sys_enter_getppid"] == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("mode", ["live", "record"])
def test_signal_restores(tracefs, unchanged, tmp_path, sig, mode):
    args = [sonde_path(), "trace", "-e", GETPPID, "-e", "sched:sched_switch",
            "--filter", "prev_pid != 0", "-b", "512"]
    if mode == "record":
        args += ["-o", str(tmp_path / "trace.dat")]
    p = subprocess.Popen(args + ["--", workload("getppid_loop"), "100000000"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    inst = os.path.join(tracefs, "instances", f"sonde-{p.pid}")
    for _ in range(100):
        if os.path.exists(inst):
            break
        time.sleep(0.01)
    time.sleep(0.4)
    assert os.path.exists(inst)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert "sonde trace:" in err
    # the workload got the signal too and sonde passes its end on
    assert p.returncode == 128 + sig
    if mode == "record":
        assert report_events(str(tmp_path / "trace.dat"))


def test_crashing_workload(tracefs, unchanged, tmp_path):
    out = str(tmp_path / "trace.dat")
    p = sonde("trace", "-e", "signal:signal_deliver", "-o", out, "--", workload("crash"),
              check=False)
    assert p.returncode == 128 + signal.SIGSEGV
    assert "sonde trace:" in p.stderr
    assert any(e[2] == "signal_deliver" for e in report_events(out))


def test_bad_event(tracefs, unchanged):
    p = sonde("trace", "-e", "nosuch:event", "--", "true", check=False)
    assert p.returncode == 1
    assert "no trace event matches 'nosuch:event'" in p.stderr


def test_missing_command(tracefs, unchanged):
    p = sonde("trace", "-e", GETPPID, "--", "/nonexistent/cmd", check=False)
    assert p.returncode == 1


def test_list(tracefs):
    p = sonde("trace", "-l", "syscalls:sys_enter_getpp*")
    assert "tracers:" in p.stdout and "events:" in p.stdout
    assert "  syscalls:sys_enter_getppid" in p.stdout
    assert "sched:sched_switch" not in p.stdout
    p = sonde("trace", "-l")
    assert re.search(r"^  nop$", p.stdout, re.M)
    assert "  sched:sched_switch" in p.stdout


def tracer_refused(tracefs, tracer):
    """Whether the kernel refuses @tracer in a scratch instance (None: not built)."""
    with open(os.path.join(tracefs, "available_tracers")) as f:
        if tracer not in f.read().split():
            return None
    d = os.path.join(tracefs, "instances", f"sonde-test-{os.getpid()}")
    os.mkdir(d)
    try:
        try:
            with open(os.path.join(d, "current_tracer"), "w") as f:
                f.write(tracer)
            with open(os.path.join(d, "current_tracer"), "w") as f:
                f.write("nop")
            return False
        except OSError:
            return True
    finally:
        os.rmdir(d)


def test_function_tracer(tracefs, unchanged, tmp_path):
    """Records the filtered function where the kernel allows it; explains the refusal here."""
    refused = tracer_refused(tracefs, "function")
    out = str(tmp_path / "trace.dat")
    p = sonde("trace", "-p", "function", "-f", "ksys_getppid", "-f", "__x64_sys_getppid",
              "-o", out, "--", workload("getppid_loop"), "200", check=False)
    if refused is None:
        assert p.returncode == 1 and "no function tracer" in p.stderr
    elif refused:
        assert p.returncode == 1
        assert "lists the function tracer but refuses it (EPERM)" in p.stderr
    else:
        assert p.returncode == 0, p.stderr
        ev = [e for e in report_events(out) if e[2] == "function"]
        assert len(ev) >= 200


def test_function_graph(tracefs, unchanged):
    refused = tracer_refused(tracefs, "function_graph")
    p = sonde("trace", "-p", "function_graph", "--notrace", "*rcu*", "--", "true",
              check=False)
    if refused is None:
        assert p.returncode == 1
        assert "no function_graph tracer" in p.stderr
        assert "CONFIG_FUNCTION_GRAPH_TRACER" in p.stderr
    elif refused:
        assert "refuses it" in p.stderr
    else:
        assert p.returncode == 0, p.stderr


def test_usage_errors():
    for args in (["-f", "foo", "-e", GETPPID], ["--filter", "x == 1"], [],
                 ["-p", "blk"], ["-b", "0", "-e", GETPPID]):
        p = sonde("trace", *args, check=False)
        assert p.returncode == 2, args
    p = sonde("trace", "--help")
    assert "sonde trace -l" in p.stdout


@pytest.mark.skipif(not os.path.exists("/sys/block/vda/trace/enable"), reason="no vda")
def test_blk_top_level(tracefs, unchanged, tmp_path):
    blob = tmp_path / "blob"
    blob.write_bytes(os.urandom(1 << 20))
    os.sync()
    out = str(tmp_path / "trace.dat")
    p = sonde("trace", "-p", "blk", "-d", "vda", "-o", out, "--", "dd", f"if={blob}",
              "of=/dev/null", "bs=64k", "iflag=direct", check=False)
    if p.returncode != 0:
        # refused: it must say so clearly
        assert "blk" in p.stderr
        return
    ev = report_events(out)
    assert any(e[2] == "blktrace" for e in ev)


def test_overrun_reported(tracefs, unchanged, tmp_path):
    out = str(tmp_path / "trace.dat")
    p = sonde("trace", "-b", "4", "-e", GETPPID, "-o", out, "--",
              workload("getppid_loop"), "2000000")
    m = re.search(r"\[ sonde trace: (\d+) events on CPUs [\d,-]+ written to \S+(.*) \]",
                  p.stderr)
    assert m, p.stderr
    overruns = [int(x) for x in re.findall(r"(\d+) overrun on CPU \d+", m.group(2))]
    assert overruns and sum(overruns) > 0
    kept = int(m.group(1))
    assert kept == len(report_events(out))
    assert kept + sum(overruns) == 2000000


def test_doctor_explains_function_tracer(tracefs):
    d = {c["id"]: c for c in json.loads(sonde("doctor", "--json").stdout)}
    assert "ftrace.dynamic" in d
    if tracer_refused(tracefs, "function"):
        assert d["ftrace.dynamic"]["status"] == "fail"
        assert "EPERM" in d["ftrace.dynamic"]["detail"]
        assert d["tracer.function"]["status"] == "fail"
