"""The VM harness (tests/vm) proves itself on what this machine's kernel
lacks: in a QEMU guest running Debian's 6.1 kernel, the function and
function_graph tracers trace, a kprobe fires, a module loads, and the
built sonde runs and sees all of it.

Two boots in all (~6 s each on an idle machine under TCG): one runs every
guest check and prints one section per check; one proves networking.
"""
import json
import re
import socket
import time

import pytest

from conftest import sonde_path

# One section per check: "=== NAME" then its output.  The function tracers
# run with a filter: enabling them on every function takes ~10 s under TCG.
CHECKS = r"""
T=/sys/kernel/tracing
sec() { echo "=== $1"; }
sec uname; uname -r
sec tracers; cat $T/available_tracers
sec function
echo 'vfs_read vfs_write' > $T/set_ftrace_filter
echo function > $T/current_tracer && echo "current=$(cat $T/current_tracer)"
cat /proc/version > /dev/null
echo 0 > $T/tracing_on
grep -v '^#' $T/trace
echo nop > $T/current_tracer; echo > $T/set_ftrace_filter
echo > $T/trace; echo 1 > $T/tracing_on
sec function_graph
echo vfs_read > $T/set_graph_function; echo vfs_read > $T/set_ftrace_filter
echo function_graph > $T/current_tracer && echo "current=$(cat $T/current_tracer)"
cat /proc/version > /dev/null
echo 0 > $T/tracing_on
grep -v '^#' $T/trace
echo nop > $T/current_tracer; echo > $T/set_graph_function; echo > $T/set_ftrace_filter
echo > $T/trace; echo 1 > $T/tracing_on
sec kprobe
echo 'p:myprobe do_sys_openat2' > $T/kprobe_events && echo created
echo 1 > $T/events/kprobes/myprobe/enable
cat /proc/version > /dev/null
echo 0 > $T/events/kprobes/myprobe/enable
grep 'myprobe:' $T/trace
echo '-:myprobe' >> $T/kprobe_events; echo > $T/trace
sec modprobe
modprobe dummy && echo "modprobe rc=0"
lsmod
rmmod dummy && echo "rmmod rc=0"
lsmod
sec sonde_doctor
{SONDE} doctor --json; echo "rc=$?"
sec sonde_stat
{SONDE} stat -e sched:sched_switch -- sleep 0.1 2>&1; echo "rc=$?"
sec done
"""


@pytest.fixture(scope="module")
def guest(vm):
    """Runs CHECKS in one boot; returns {section: output}."""
    rc, out = vm.run(CHECKS.replace("{SONDE}", sonde_path()),
                     files=[sonde_path()], timeout=600)
    print(f"vm: boot to command {vm.last_boot_seconds:.1f} s")
    assert rc == 0, out
    sections, name = {}, None
    for line in out.splitlines():
        if line.startswith("=== "):
            name = line[4:].strip()
            sections[name] = []
        elif name:
            sections[name].append(line)
    assert "done" in sections, out
    return {k: "\n".join(v) for k, v in sections.items()}


def test_guest_kernel(guest):
    assert guest["uname"].startswith("6.1."), guest["uname"]


def test_available_tracers(guest):
    tracers = guest["tracers"].split()
    assert "function" in tracers and "function_graph" in tracers, tracers


def test_function_tracer(guest):
    out = guest["function"]
    assert "current=function" in out, out
    # "cat-123 [001] .....  4.56: vfs_read <-ksys_read"
    entries = re.findall(r"^\s*\S+-\d+\s+\[\d+\].*: (vfs_read|vfs_write) <-\w+", out, re.M)
    assert entries, out


def test_function_graph_tracer(guest):
    out = guest["function_graph"]
    assert "current=function_graph" in out, out
    assert re.search(r"\|\s+vfs_read\(\)", out), out


def test_kprobe(guest):
    out = guest["kprobe"]
    assert "created" in out, out
    assert re.search(r"myprobe: \(do_sys_openat2\+0x0/", out), out


def test_modules(guest):
    out = guest["modprobe"]
    assert "modprobe rc=0" in out and "rmmod rc=0" in out, out
    loaded, after = out.split("rmmod rc=0")
    assert re.search(r"^dummy\s+\d+", loaded, re.M), out
    assert not re.search(r"^dummy\s", after, re.M), out


def test_sonde_doctor_in_guest(guest):
    out = guest["sonde_doctor"]
    assert out.rstrip().endswith("rc=0"), out
    checks = {c["id"]: c for c in json.loads(out.rstrip()[:-len("rc=0")])}
    for cid in ("kprobes", "tracer.function", "modules", "tracefs", "trace_events",
                "kernel_config"):
        assert checks[cid]["status"] == "ok", checks[cid]
    assert "function_graph" in checks["tracers"]["detail"], checks["tracers"]


def test_sonde_stat_in_guest(guest):
    out = guest["sonde_stat"]
    assert out.rstrip().endswith("rc=0"), out
    m = re.search(r"^\s*([\d,]+)\s+sched:sched_switch", out, re.M)
    assert m and int(m.group(1).replace(",", "")) >= 1, out
    assert "seconds time elapsed" in out, out


def test_network_forward(vm):
    """--net/fwd: eth0 is 10.0.2.15 and a host port reaches a guest port."""
    g = vm.start("ip -4 addr show eth0; echo listening; "
                 "echo hello-from-guest | nc -l -p 7000",
                 fwd=[(0, 7000)], timeout=600)
    with g:
        out = g.wait_for("listening")
        assert "10.0.2.15/24" in out, out
        port = g.host_ports[7000]
        got = b""
        deadline = time.monotonic() + 60
        while b"hello-from-guest" not in got and time.monotonic() < deadline:
            # slirp accepts before the guest listens; retry until data comes.
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                    got = s.recv(100)
            except OSError:
                pass
            if b"hello-from-guest" not in got:
                time.sleep(0.5)
        assert b"hello-from-guest" in got, g.log()
        rc, out = g.wait(timeout=120)
        assert rc == 0, out
