"""sonde doctor on this machine's real kernel (see /work/shared/MACHINE.md).

This VM has no hardware PMU, no kprobes and no loadable modules; uprobes,
trace events and BPF work; the function tracer is listed but refused with
EPERM; the blk tracer runs only in the top-level instance.  doctor must say
exactly that, and leave tracefs as it found it.
"""
import json
import os
import signal
import subprocess
import time

from conftest import sonde, sonde_path


def read(tracefs, name):
    with open(os.path.join(tracefs, name)) as f:
        return f.read()


def snapshot(tracefs):
    return {
        "current_tracer": read(tracefs, "current_tracer"),
        "tracing_on": read(tracefs, "tracing_on"),
        "set_event": read(tracefs, "set_event"),
        "instances": sorted(os.listdir(os.path.join(tracefs, "instances"))),
    }


def doctor_json(*args):
    p = sonde("doctor", "--json", *args)
    checks = json.loads(p.stdout)
    for c in checks:
        assert set(c) == {"id", "title", "status", "detail", "fix"}, c
        assert c["status"] in ("ok", "warn", "unavailable", "fail"), c
        # every problem comes with its fix
        if c["status"] == "ok":
            assert c["fix"] is None, c
        elif c["status"] in ("unavailable", "fail"):
            assert c["fix"], c
        # Never cut short: a fixed-size field once ended one mid-sentence
        # ("...the kernel's own policy, a").
        for field in ("detail", "fix"):
            text = c[field] or ""
            assert text.count("(") == text.count(")"), (c["id"], field, text)
    by_id = {c["id"]: c for c in checks}
    assert len(by_id) == len(checks), "duplicate check ids"
    return by_id


def test_text_holds_every_whole_message(tracefs):
    checks = doctor_json()
    text = sonde("doctor").stdout
    for c in checks.values():
        assert c["detail"] in text, c
        if c["fix"]:
            assert "fix: " + c["fix"] in text, c


def test_facts_of_this_machine(tracefs):
    before = snapshot(tracefs)
    d = doctor_json()
    after = snapshot(tracefs)
    assert after == before

    assert d["hw_pmu"]["status"] == "unavailable"
    assert "perf_event_open(cycles): ENOENT" in d["hw_pmu"]["detail"]
    assert "cpu-clock" in d["hw_pmu"]["fix"]
    assert not any(k.startswith("pmu.") for k in d)
    assert d["sw_events"]["status"] == "ok"

    assert d["kprobes"]["status"] == "unavailable"
    assert "CONFIG_KPROBES=y" in d["kprobes"]["fix"]
    assert d["modules"]["status"] == "unavailable"
    assert "CONFIG_MODULES=y" in d["modules"]["fix"]

    assert d["uprobes"]["status"] == "ok"
    assert d["trace_events"]["status"] == "ok"
    assert d["bpf"]["status"] == "ok"
    assert d["btf"]["status"] == "ok"

    assert "function" in d["tracers"]["detail"].split()
    assert d["tracer.function"]["status"] == "fail"
    assert "listed but refused (EPERM)" in d["tracer.function"]["detail"]
    assert d["tracer.blk"]["status"] == "warn"
    assert "blk: top-level instance only" in d["tracer.blk"]["detail"]
    assert "top-level instance only" in d["blk"]["detail"]
    assert d["tracer.function_graph"]["status"] == "unavailable"
    assert "scratch_instance" not in d

    # /proc/config.gz exists here, and agrees with what was measured
    assert d["kernel_config"]["status"] == "ok"
    assert d["config.CONFIG_KPROBES"]["status"] == "unavailable"
    assert d["config.CONFIG_MODULES"]["status"] == "unavailable"
    assert d["config.CONFIG_UPROBE_EVENTS"]["status"] == "ok"
    assert d["config.CONFIG_BPF_SYSCALL"]["status"] == "ok"

    # root here: the sysctls don't limit us
    assert d["perf_event_paranoid"]["status"] == "ok"
    assert d["capabilities"]["status"] == "ok"
    assert d["tracefs"]["status"] == "ok"
    assert d["tracefs"]["detail"] == f"mounted at {tracefs}"


def test_table(tracefs):
    before = snapshot(tracefs)
    p = sonde("doctor")
    assert snapshot(tracefs) == before
    lines = p.stdout.splitlines()
    assert lines[0].startswith("sonde doctor: Linux ")
    pmu = [l for l in lines if l.startswith("unavailable") and "hardware PMU" in l]
    assert len(pmu) == 1 and "ENOENT" in pmu[0]
    # the fix follows its check, indented
    fix = lines[lines.index(pmu[0]) + 1]
    assert fix.startswith(" ") and "fix: " in fix
    assert any(l.startswith("fail") and "refused (EPERM)" in l for l in lines)
    assert lines[-1].endswith("fail") and " ok, " in lines[-1]


def test_no_top_level(tracefs):
    before = snapshot(tracefs)
    d = doctor_json("--no-top-level")
    assert snapshot(tracefs) == before
    assert "top level not tried: disabled" in d["tracer.blk"]["detail"]
    assert "refused in instances (EPERM)" in d["tracer.function"]["detail"]


def test_usage():
    p = sonde("doctor", "extra", check=False)
    assert p.returncode == 2
    p = sonde("doctor", "--help")
    assert "--json" in p.stdout


def test_signal_restores(tracefs):
    """A SIGINT at any moment leaves no scratch instance and no tracer behind."""
    before = snapshot(tracefs)
    for delay in (0, 0.001, 0.003, 0.01, 0.03):
        proc = subprocess.Popen([sonde_path(), "doctor", "--json"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        assert snapshot(tracefs) == before, f"after SIGINT at {delay}s"
