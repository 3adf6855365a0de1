"""sonde stat against the real kernel, with perf stat as the oracle."""
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import run, sonde, sonde_path, workload

GETPPID = "syscalls:sys_enter_getppid"


def csv_counts(text, sep=","):
    """{event: value} from CSV lines (value,unit,event,...)."""
    out = {}
    for line in text.splitlines():
        f = line.split(sep)
        if len(f) >= 3 and not line.startswith("#"):
            out[f[2]] = f[0]
    return out


def table_counts(text):
    """{event: value} from the aligned table."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) < 2 or line.startswith(" Performance") or "seconds" in line:
            continue
        if f[0].startswith("<not"):
            out[f[2]] = f[0] + " " + f[1]
        elif f[1] == "msec":
            out[f[2]] = f[0]
        else:
            out[f[1]] = f[0]
    return out


def test_exact_tracepoint_count_matches_perf(tracefs):
    n = 12345
    ours = sonde("stat", "-x,", "-e", GETPPID, "--", workload("getppid_loop"), str(n))
    theirs = run(["perf", "stat", "-x,", "-e", GETPPID, "--", workload("getppid_loop"), str(n)])
    assert csv_counts(ours.stderr)[GETPPID] == str(n)
    assert csv_counts(theirs.stderr)[GETPPID] == str(n)


def test_table_csv_and_json_hold_the_same_numbers(tracefs):
    n = 4321
    argv = ["-e", GETPPID + ",cycles", "--", workload("getppid_loop"), str(n)]
    table = table_counts(sonde("stat", *argv).stderr)
    csv = csv_counts(sonde("stat", "-x;", *argv).stderr, sep=";")
    objs = [json.loads(l) for l in sonde("stat", "--json", *argv).stderr.splitlines() if l.strip()]
    js = {o["event"]: o["counter-value"] for o in objs}
    assert table[GETPPID] == str(n)
    assert csv[GETPPID] == str(n)
    assert float(js[GETPPID]) == n
    assert table["cycles"] == "<not supported>"
    assert csv["cycles"] == "<not supported>"
    assert js["cycles"] == "<not supported>"


def test_default_events_and_unsupported_hardware(tracefs):
    p = sonde("stat", "--", workload("getppid_loop"), "10")
    counts = table_counts(p.stderr)
    for ev in ["task-clock", "context-switches", "cpu-migrations", "page-faults", "cycles",
               "instructions", "branches", "branch-misses"]:
        assert ev in counts, p.stderr
    assert float(counts["task-clock"]) > 0
    # This machine has no hardware PMU: perf agrees.
    perf = table_counts(run(["perf", "stat", "--", workload("getppid_loop"), "10"]).stderr)
    assert counts["cycles"] == perf["cycles"] == "<not supported>"
    assert "seconds time elapsed" in p.stderr
    assert "CPUs utilized" in p.stderr


def test_workload_exit_status_becomes_ours():
    p = sonde("stat", "-e", "task-clock", "--", "sh", "-c", "exit 7", check=False)
    assert p.returncode == 7
    assert "task-clock" in p.stderr


def test_workload_that_cannot_start():
    p = sonde("stat", "--", "/nonexistent/program", check=False)
    assert p.returncode == 127
    assert "can't run '/nonexistent/program': No such file or directory" in p.stderr


def test_repeat_gives_mean_and_runs(tracefs):
    p = sonde("stat", "-r", "3", "-e", GETPPID, "--", workload("getppid_loop"), "1000")
    assert "(3 runs)" in p.stderr
    assert table_counts(p.stderr)[GETPPID] == "1000"
    assert "+-" in p.stderr.split("seconds time elapsed")[0].splitlines()[-1]


def test_interval_counts_add_up(tracefs):
    n = 3000000
    p = sonde("stat", "-I", "100", "-x,", "-e", GETPPID, "--", workload("getppid_loop"), str(n))
    lines = [l.split(",") for l in p.stderr.splitlines() if GETPPID in l]
    assert len(lines) >= 2, p.stderr
    assert sum(int(f[1]) for f in lines) == n
    times = [float(f[0]) for f in lines]
    assert times == sorted(times)


def test_system_wide_sees_other_processes(tracefs):
    n = 20000
    p = sonde("stat", "-a", "-x,", "-e", GETPPID, "--", workload("getppid_loop"), str(n))
    got = int(csv_counts(p.stderr)[GETPPID])
    assert n <= got < n + 1000
    t0 = time.monotonic()
    cpus = sonde("stat", "-C", "0", "-x,", "-e", "cpu-clock", "--", "sleep", "0.2")
    wall_ms = (time.monotonic() - t0) * 1000
    msec = float(csv_counts(cpus.stderr)["cpu-clock"])
    # One CPU's clock, counted while the workload ran: at least its 0.2 s
    # sleep, at most the whole run (however slow a loaded machine makes it).
    assert 199 < msec <= wall_ms, (msec, wall_ms)


def attach_and_count(flag, pid_of):
    n = 7777
    proc = subprocess.Popen([workload("getppid_loop"), str(n), "1.0"])
    try:
        time.sleep(0.2)  # it now sleeps 1 s before its calls
        p = sonde("stat", flag, str(pid_of(proc)), "-x,", "-e", GETPPID)
    finally:
        proc.wait()
    # stat ends by itself when the process exits.
    return int(csv_counts(p.stderr)[GETPPID]), n


def test_attach_to_running_process(tracefs):
    got, n = attach_and_count("-p", lambda p: p.pid)
    assert got == n


def test_attach_to_thread(tracefs):
    got, n = attach_and_count("-t", lambda p: p.pid)
    assert got == n


def test_ctrl_c_prints_counts_so_far(tracefs):
    n = 1000
    proc = subprocess.Popen([sonde_path(), "stat", "-x,", "-e", GETPPID, "--",
                             workload("getppid_loop"), str(n), "0.5"],
                            stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)  # after the calls, during the second pause
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert csv_counts(err)[GETPPID] == str(n)
    assert proc.returncode == 128 + signal.SIGINT


def test_system_wide_stops_on_sigint(tracefs):
    proc = subprocess.Popen([sonde_path(), "stat", "-a", "-x,", "-e", "cpu-clock"],
                            stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert float(csv_counts(err)["cpu-clock"]) > 0


def test_output_file(tmp_path, tracefs):
    out = tmp_path / "counts.csv"
    p = sonde("stat", "-o", str(out), "-x,", "-e", GETPPID, "--", workload("getppid_loop"), "99")
    assert GETPPID not in p.stderr
    assert csv_counts(out.read_text())[GETPPID] == "99"


def test_groups_count_together(tracefs):
    p = sonde("stat", "-x,", "-e", "{" + GETPPID + ",task-clock}", "--",
              workload("getppid_loop"), "500")
    c = csv_counts(p.stderr)
    assert c[GETPPID] == "500"
    assert float(c["task-clock"]) > 0


def test_unknown_event_suggests_close_names():
    p = sonde("stat", "-e", "task-clokc", "--", "true", check=False)
    assert p.returncode == 2
    assert "'task-clock'" in p.stderr
    p = sonde("stat", "-e", "syscalls:sys_enter_getppidd", "--", "true", check=False)
    assert p.returncode == 2
    assert "'syscalls:sys_enter_getppid'" in p.stderr


def test_usage_errors():
    assert sonde("stat", check=False).returncode == 2
    assert sonde("stat", "-r", "0", "--", "true", check=False).returncode == 2
    assert sonde("stat", "-p", "abc", check=False).returncode == 2
    # Above the kernel's PID_MAX_LIMIT: no pid at all (tests/integration/test_ids.py).
    p = sonde("stat", "-p", "999999999", check=False)
    assert p.returncode == 2 and "a process id is 1..4194304" in p.stderr, p.stderr
    p = sonde("stat", "-p", "999999", check=False)
    assert p.returncode == 1
    assert "no process with pid 999999" in p.stderr
    h = sonde("stat", "--help")
    assert "usage: sonde stat" in h.stdout


def test_unsupported_event_is_explained():
    p = sonde("stat", "-e", "cycles,cs", "--", "true")
    assert "<not supported>" in p.stderr
    assert "'cycles' is not supported here" in p.stderr
    assert "no hardware PMU" in p.stderr
