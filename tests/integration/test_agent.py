"""sonde-agent and sonde record --target over loopback TCP and stdio.

The agent runs on this machine, so the remote capture can be compared with a
local one of the same workload; perf report is the oracle for the file.
Some tests speak the wire protocol directly (see include/sonde/agent_proto.h)
to check what the agent itself refuses, whatever a host would send.
"""
import os
import re
import shutil
import signal
import socket
import stat
import struct
import subprocess
import time

import pytest

from conftest import BUILD, run, sonde, workload

from conftest import TOP

# SONDE_AGENT runs the tests against another agent build (e.g. the musl one
# from scripts/build-agent-cross).
AGENT = os.environ.get("SONDE_AGENT", os.path.join(BUILD, "src", "agent", "sonde-agent"))

HELLO, AUTH, OK, ERROR, RECORD, EVENTS = 1, 2, 3, 4, 5, 6
BUILDID, BUILDID_REPLY, FILE, FILE_REPLY, BYE = 11, 12, 13, 14, 17


class Agent:
    def __init__(self, *args, listen="127.0.0.1:0"):
        self.p = subprocess.Popen([AGENT, "--listen", listen, *args],
                                  stderr=subprocess.PIPE, text=True)
        line = self.p.stderr.readline()
        m = re.search(r"listening on (\S+):(\d+)$", line.strip())
        assert m, line
        self.port = int(m.group(2))
        self.target = f"127.0.0.1:{self.port}"

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


@pytest.fixture
def agent_factory():
    started = []

    def start(*args, **kw):
        a = Agent(*args, **kw)
        started.append(a)
        return a
    yield start
    for a in started:
        a.stop()


def frame(mtype, payload=b""):
    return struct.pack("<IHH", len(payload), mtype, 1) + payload


def s(text):
    b = text.encode() + b"\0"
    return struct.pack("<I", len(b)) + b


def blob(b):
    return struct.pack("<I", len(b)) + b


class Conn:
    """A raw protocol session: hello read, AUTH sent with @token."""

    def __init__(self, port, token=b""):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        t, self.hello = self.recv()
        assert t == HELLO
        self.send(AUTH, struct.pack("<I", 1) + blob(token))
        self.auth = self.recv()

    def send(self, mtype, payload=b""):
        self.sock.sendall(frame(mtype, payload))

    def recv_exact(self, n):
        b = b""
        while len(b) < n:
            chunk = self.sock.recv(n - len(b))
            if not chunk:
                raise EOFError
            b += chunk
        return b

    def recv(self):
        n, t, v = struct.unpack("<IHH", self.recv_exact(8))
        assert v == 1
        return t, self.recv_exact(n)

    def error_text(self, payload):
        n = struct.unpack_from("<I", payload, 4)[0]
        return payload[8:8 + n - 1].decode()


def top(rows, n=3):
    return sorted(rows.items(), key=lambda kv: -kv[1])[:n]


def sonde_symbols(path):
    out = sonde("report", "-i", str(path), "--no-children", "--sort", "sym").stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+\[.\]\s+(\S+)", line)
        if m:
            rows[m.group(2)] = float(m.group(1))
    return rows


def perf_symbols(path):
    out = run(["perf", "report", "-i", str(path), "--stdio", "--no-children",
               "--sort", "sym"]).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+\[.\]\s+(\S+)", line)
        if m:
            rows[m.group(2)] = float(m.group(1))
    return rows


def perf_fds(pid):
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if "perf_event" in os.readlink(f"/proc/{pid}/fd/{fd}"):
                n += 1
        except OSError:
            pass
    return n


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return out


def test_remote_capture_matches_local(agent_factory, tmp_path, tracefs):
    a = agent_factory("--allow-exec")
    remote, local = tmp_path / "remote.data", tmp_path / "local.data"
    p = sonde("record", "--target", a.target, "-o", str(remote), "--", workload("split"), "0.5")
    assert "captured on " + a.target in p.stderr
    sonde("record", "-o", str(local), "--", workload("split"), "0.5")
    mine, theirs = perf_symbols(remote), perf_symbols(local)
    assert [k for k, _ in top(mine)] == ["hot_fn", "warm_fn", "cool_fn"], mine
    for name in ("hot_fn", "warm_fn", "cool_fn"):
        assert abs(mine[name] - theirs[name]) <= 8, (name, mine[name], theirs[name])
    # sonde report resolves it too, and agrees with perf on it.
    resolved = sonde_symbols(remote)
    for name in ("hot_fn", "warm_fn", "cool_fn"):
        assert abs(resolved[name] - mine[name]) <= 0.5, (name, resolved, mine)
    # Build ids fetched from the target for the objects that got samples.
    ids = run(["perf", "buildid-list", "-i", str(remote)]).stdout
    assert "split" in ids and "[kernel.kallsyms]" in ids, ids


def test_tracepoint_exact_counts(agent_factory, tmp_path, tracefs):
    a = agent_factory("--allow-exec")
    out = tmp_path / "tp.data"
    sonde("record", "--target", a.target, "-o", str(out), "-e", "syscalls:sys_enter_getppid",
          "-c", "1", "--", workload("getppid_loop"), "4321")
    script = run(["perf", "script", "-i", str(out)]).stdout
    assert script.count("sys_enter_getppid") == 4321
    # The tracing data came from the target: perf decodes the fields.
    assert "__syscall_nr" in script or "sys_enter_getppid:" in script


def test_list_target(agent_factory, tracefs):
    a = agent_factory()
    p = sonde("list", "--target", a.target, "sched:sched_switch")
    assert "sched:sched_switch" in p.stdout and "Tracepoint event" in p.stdout
    p = sonde("list", "--target", a.target, "cpu-clock")
    assert "Software event" in p.stdout


def test_token_required_off_loopback(agent_factory, tmp_path):
    p = run([AGENT, "--listen", "0.0.0.0:0"], check=False)
    assert p.returncode == 2 and "--token-file" in p.stderr
    tok = tmp_path / "token"
    tok.write_text("s3cret-token\n")
    os.chmod(tok, stat.S_IRUSR | stat.S_IWUSR)
    wrong = tmp_path / "wrong"
    wrong.write_text("s3cret-tokem\n")
    a = agent_factory("--token-file", str(tok), listen="0.0.0.0:0")
    p = sonde("list", "--target", a.target, "--token-file", str(wrong), check=False)
    assert p.returncode == 1 and "authentication failed" in p.stderr, p.stderr
    p = sonde("list", "--target", a.target, check=False)
    assert p.returncode == 1 and "requires a token" in p.stderr, p.stderr
    # Raw: an empty token is refused by the agent itself.
    c = Conn(a.port, b"")
    assert c.auth[0] == ERROR
    p = sonde("list", "--target", a.target, "--token-file", str(tok), "cpu-clock")
    assert "cpu-clock" in p.stdout


def test_exec_refused_without_allow_exec(agent_factory, tmp_path):
    a = agent_factory()
    p = sonde("record", "--target", a.target, "-o", str(tmp_path / "x.data"), "--", "true",
              check=False)
    assert p.returncode == 2 and "--allow-exec" in p.stderr, p.stderr
    assert not (tmp_path / "x.data").exists()
    # The agent refuses it too, whatever the host checked.
    c = Conn(a.port)
    assert c.auth[0] == OK
    req = (struct.pack("<I", 0) + struct.pack("<QQIIII", 1000, 0, 0, 8192, 8, 0) + s("")
           + struct.pack("<II", 0, 0) + struct.pack("<I", 1) + s("/bin/true")
           + struct.pack("<I", 0))
    c.send(RECORD, req)
    t, payload = c.recv()
    assert t == ERROR and "--allow-exec" in c.error_text(payload)


def test_file_requests_limited_to_allow_list(agent_factory, tracefs):
    a = agent_factory()
    c = Conn(a.port)
    assert c.auth[0] == OK
    for path in ("../../etc/shadow", "/etc/shadow", "/proc/self/../../etc/shadow",
                 "/usr//lib/x"):
        c.send(BUILDID, struct.pack("<II", 2, 0) + s(path))
        t, payload = c.recv()
        assert t == ERROR and "refused" in c.error_text(payload), path
    c.send(BUILDID, struct.pack("<II", 1, 0) + s("../evil"))
    t, payload = c.recv()
    assert t == ERROR and "refused" in c.error_text(payload)
    c.send(FILE, struct.pack("<I", 7))
    t, payload = c.recv()
    assert t == ERROR and "refused" in c.error_text(payload)
    c.send(FILE, struct.pack("<I", 0))  # kallsyms is on the list
    t, payload = c.recv()
    assert t == FILE_REPLY and len(payload) > 1000
    # A malformed message ends the session, and the agent serves the next one.
    c.sock.sendall(struct.pack("<IHH", 3, BUILDID, 1) + b"abc")
    t, payload = c.recv()
    c2 = Conn(a.port)
    assert c2.auth[0] == OK


def test_host_killed_mid_capture(agent_factory, tmp_path, tracefs):
    a = agent_factory("--allow-exec")
    host = subprocess.Popen([os.path.join(BUILD, "src", "cli", "sonde"), "record", "--target",
                             a.target, "-o", str(tmp_path / "cut.data"), "--",
                             workload("getppid_loop"), "10", "30"],
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while time.time() < deadline and not children(a.p.pid):
        time.sleep(0.1)
    kids = children(a.p.pid)
    assert kids, "the workload did not start on the agent"
    assert perf_fds(a.p.pid) > 0
    time.sleep(0.5)
    host.kill()
    host.wait()
    deadline = time.time() + 10
    while time.time() < deadline and (children(a.p.pid) or perf_fds(a.p.pid)):
        time.sleep(0.1)
    assert not children(a.p.pid), "the workload outlived the host"
    assert perf_fds(a.p.pid) == 0, "perf events still open"
    assert a.p.poll() is None
    # And it takes the next capture.
    out = tmp_path / "next.data"
    sonde("record", "--target", a.target, "-o", str(out), "-e", "syscalls:sys_enter_getppid",
          "-c", "1", "--", workload("getppid_loop"), "100")
    assert run(["perf", "script", "-i", str(out)]).stdout.count("sys_enter_getppid") == 100


def test_agent_killed_mid_capture(agent_factory, tmp_path, tracefs):
    a = agent_factory("--allow-exec")
    out = tmp_path / "cut.data"
    host = subprocess.Popen([os.path.join(BUILD, "src", "cli", "sonde"), "record", "--target",
                             a.target, "-o", str(out), "--", workload("split"), "20"],
                            stderr=subprocess.PIPE, text=True)
    time.sleep(2.5)
    kids = children(a.p.pid)
    a.p.kill()
    a.p.wait()
    for k in kids:
        try:
            os.kill(k, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, err = host.communicate(timeout=30)
    assert host.returncode == 1
    assert "capture was cut" in err, err
    rows = perf_symbols(out)
    assert rows and max(rows, key=rows.get) == "hot_fn", rows
    assert sonde_symbols(out)


def test_busy_while_capturing(agent_factory, tmp_path, tracefs):
    a = agent_factory("--allow-exec")
    host = subprocess.Popen([os.path.join(BUILD, "src", "cli", "sonde"), "record", "--target",
                             a.target, "-o", str(tmp_path / "a.data"), "--",
                             workload("getppid_loop"), "10", "2"],
                            stderr=subprocess.DEVNULL)
    time.sleep(1)
    p = sonde("list", "--target", a.target, check=False)
    assert p.returncode == 1 and "busy" in p.stderr, p.stderr
    assert host.wait(timeout=30) == 0


def test_stdio_transport_through_ssh(tmp_path, tracefs):
    """ssh://: a stand-in for ssh runs the remote command as sshd would."""
    fake = tmp_path / "fake-ssh"
    fake.write_text("#!/bin/sh\n"
                    "# fake-ssh [-p PORT] -- DEST COMMAND: run COMMAND here\n"
                    "for last; do :; done\n"
                    "exec /bin/sh -c \"$last\"\n")
    fake.chmod(0o755)
    env = dict(os.environ, SONDE_SSH=str(fake), SONDE_AGENT_REMOTE=f"{AGENT} --allow-exec")
    out = tmp_path / "ssh.data"
    p = sonde("record", "--target", "ssh://user@board:2222", "-o", str(out), "-e",
              "syscalls:sys_enter_getppid", "-c", "1", "--", workload("getppid_loop"), "777",
              env=env)
    assert "captured on ssh://user@board:2222" in p.stderr
    assert run(["perf", "script", "-i", str(out)]).stdout.count("sys_enter_getppid") == 777
    p = sonde("list", "--target", "ssh://board", "cpu-clock", env=env)
    assert "cpu-clock" in p.stdout


def test_bad_options_fail_before_capture(agent_factory, tmp_path):
    a = agent_factory("--allow-exec")
    out = tmp_path / "x.data"
    p = sonde("record", "--target", a.target, "-o", str(out), "-C", "4096", "--", "true",
              check=False)
    assert p.returncode == 2 and "not on the target" in p.stderr, p.stderr
    p = sonde("record", "--target", a.target, "-o", str(out), "-e", "nosuch:event", "--", "true",
              check=False)
    assert p.returncode == 1 and "on the target" in p.stderr, p.stderr
    p = sonde("record", "--target", "127.0.0.1:1", "-o", str(out), "--", "true", check=False)
    assert p.returncode == 1 and "can't connect" in p.stderr, p.stderr


@pytest.mark.skipif(not shutil.which("qemu-aarch64-static") or not shutil.which("aarch64-linux-gnu-gcc"),
                    reason="needs qemu-user-static and gcc-aarch64-linux-gnu")
def test_aarch64_agent_handshake_under_qemu_user(tmp_path):
    """The cross-built static aarch64 agent answers the hello and lists its
    events; qemu-user has no perf_event_open, so a capture fails cleanly."""
    d = tmp_path / "b"
    run(["meson", "setup", str(d), TOP, "--cross-file",
         os.path.join(TOP, "cross", "aarch64-linux-gnu.txt"), "-Dhost=false", "-Dtests=false"])
    run(["ninja", "-C", str(d), "src/agent/sonde-agent"], timeout=600)
    exe = d / "src" / "agent" / "sonde-agent"
    assert "ARM aarch64" in run(["file", str(exe)]).stdout
    p = subprocess.Popen(["qemu-aarch64-static", str(exe), "--listen", "127.0.0.1:0"],
                         stderr=subprocess.PIPE, text=True)
    try:
        port = re.search(r":(\d+)$", p.stderr.readline().strip()).group(1)
        out = sonde("list", "--target", f"127.0.0.1:{port}", "cpu-clock").stdout
        assert "(aarch64 " in out and "cpu-clock" in out, out
        r = sonde("record", "--target", f"127.0.0.1:{port}", "-a", "-o", str(tmp_path / "q.data"),
                  "-e", "cpu-clock", check=False)
        assert r.returncode == 1 and "on the target" in r.stderr, r.stderr
    finally:
        p.kill()
        p.wait()


def test_ctrl_c_stops_a_remote_system_wide_capture(agent_factory, tmp_path):
    a = agent_factory()
    out = tmp_path / "a.data"
    host = subprocess.Popen([os.path.join(BUILD, "src", "cli", "sonde"), "record", "--target",
                             a.target, "-a", "-e", "cpu-clock", "-o", str(out)],
                            stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    host.send_signal(signal.SIGINT)
    _, err = host.communicate(timeout=30)
    assert host.returncode == 0, err
    assert "captured on" in err and "cut" not in err, err
    assert perf_fds(a.p.pid) == 0
    assert run(["perf", "report", "-i", str(out), "--stdio", "--sort", "comm"]).stdout.count("%") > 1


def test_agent_in_a_vm(vm, tmp_path):
    """The embedded story on a real second kernel: the static agent inside a
    QEMU guest (Debian's 6.1 kernel) listening off loopback with a token,
    the host outside through QEMU's port forwarding."""
    tok = tmp_path / "token"
    tok.write_text("vm-token-4711\n")
    tok.chmod(0o600)
    wrong = tmp_path / "wrong"
    wrong.write_text("vm-token-4712\n")
    split, loop = workload("split"), workload("getppid_loop")
    g = vm.start(f"echo vm-token-4711 > /tmp/token; "
                 f"{AGENT} --listen 0.0.0.0:4243 --token-file /tmp/token --allow-exec",
                 files=[AGENT, split, loop], fwd=[(0, 4243)], timeout=900)
    with g:
        g.wait_for("listening on 0.0.0.0:4243", timeout=300)
        target = f"127.0.0.1:{g.host_ports[4243]}"
        p = sonde("list", "--target", target, "--token-file", str(wrong), check=False)
        assert p.returncode == 1 and "authentication failed" in p.stderr, p.stderr
        p = sonde("list", "--target", target, "--token-file", str(tok), "sched:sched_switch")
        assert "6.1.0" in p.stdout and "sched:sched_switch" in p.stdout, p.stdout
        tp = tmp_path / "vm-tp.data"
        sonde("record", "--target", target, "--token-file", str(tok), "-o", str(tp),
              "-e", "syscalls:sys_enter_getppid", "-c", "1", "--", loop, "2000", timeout=600)
        assert run(["perf", "script", "-i", str(tp)]).stdout.count("sys_enter_getppid") == 2000
        out = tmp_path / "vm.data"
        p = sonde("record", "--target", target, "--token-file", str(tok), "-o", str(out),
                  "-e", "cpu-clock", "-F", "1000", "-g", "--", split, "2", timeout=600)
        assert "6.1.0" in p.stderr, p.stderr
        rows = sonde_symbols(out)
        assert top(rows)[0][0] == "hot_fn", rows
        ids = run(["perf", "buildid-list", "-i", str(out)]).stdout
        assert "split" in ids and "[kernel.kallsyms]" in ids, ids
        # The guest's kernel symbols come from the kallsyms captured there.
        rep = sonde("report", "-i", str(out), "--no-children", "--sort", "dso,sym").stdout
        assert re.search(r"\[kernel\.kallsyms\]\s+\[k\] \w+", rep), rep
        g.kill()
