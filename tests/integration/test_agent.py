"""sonde-agent and sonde record --target over loopback TCP and stdio.

The agent runs on this machine, so the remote capture can be compared with a
local one of the same workload; perf report is the oracle for the file.
Some tests speak the wire protocol directly (see include/sonde/agent_proto.h)
to check what the agent itself refuses, whatever a host would send.
"""
import json
import os
import re
import shutil
import signal
import socket
import stat
import struct
import subprocess
import tempfile
import threading
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
    """An agent on loopback; its stderr is read by a thread (self.log), so
    it never blocks on a full pipe."""

    def __init__(self, *args, listen="127.0.0.1:0", user=None):
        pre = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] if user else []
        self.p = subprocess.Popen([*pre, AGENT, "--listen", listen, *args],
                                  stderr=subprocess.PIPE, text=True)
        self.log = []
        for line in self.p.stderr:
            self.log.append(line)
            m = re.search(r"listening on (\S+)$", line.strip())
            if m:
                break
        assert m, self.log
        threading.Thread(target=lambda: self.log.extend(self.p.stderr), daemon=True).start()
        self.where = m.group(1)
        if not self.where.startswith("unix:"):
            self.port = int(self.where.rsplit(":", 1)[1])
            self.target = f"127.0.0.1:{self.port}"
        else:
            self.target = self.where

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


DEFAULT_TOKEN = "/run/sonde-agent/token"


def default_token():
    with open(DEFAULT_TOKEN, "rb") as f:
        return f.read().strip()


class Conn:
    """A raw protocol session: hello read, AUTH sent with @token (by default
    the one a local agent keeps in DEFAULT_TOKEN)."""

    def __init__(self, port, token=None):
        if token is None:
            token = default_token()
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
    """perf event fds held by @pid and its descendants (the agent serves
    each connection in a child process)."""
    n = 0
    for p in [pid, *descendants(pid)]:
        try:
            fds = os.listdir(f"/proc/{p}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if "perf_event" in os.readlink(f"/proc/{p}/fd/{fd}"):
                    n += 1
            except OSError:
                pass
    return n


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        kids = children(todo.pop())
        out += kids
        todo += kids
    return out


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
    # A class, as the local list takes it: the same software events.
    local = {ln.split()[0] for ln in sonde("list", "sw").stdout.splitlines() if ln.strip()}
    p = sonde("list", "--target", a.target, "sw")
    remote = {ln.split()[0] for ln in p.stdout.splitlines() if ln.endswith("[Software event]")}
    assert remote == local and "cpu-clock" in remote, (remote, local)
    assert "[Software event]" not in sonde("list", "--target", a.target, "tracepoint").stdout


def test_token_always_required(agent_factory, tmp_path):
    """Off loopback as on it: a missing --token-file is made (0600, 64 hex
    digits), a wrong or empty token is refused, the right one served."""
    tok = tmp_path / "made" / "token"
    a = agent_factory("--token-file", str(tok), listen="0.0.0.0:0")
    assert stat.S_IMODE(tok.stat().st_mode) == 0o600
    assert stat.S_IMODE(tok.parent.stat().st_mode) == 0o700
    assert re.fullmatch(rb"[0-9a-f]{64}\n", tok.read_bytes())
    wrong = tmp_path / "wrong"
    wrong.write_text("s3cret-tokem\n")
    p = sonde("list", "--target", a.target, "--token-file", str(wrong), check=False)
    assert p.returncode == 1 and "authentication failed" in p.stderr, p.stderr
    for t in (b"", b"s3cret-tokem"):
        assert Conn(a.port, t).auth[0] == ERROR
    p = sonde("list", "--target", a.target, "--token-file", str(tok), "cpu-clock")
    assert "cpu-clock" in p.stdout
    p = sonde("list", "--target", a.target, "--token", tok.read_text().strip(), "cpu-clock")
    assert "cpu-clock" in p.stdout
    p = sonde("list", "--target", a.target, "cpu-clock",
              env=dict(os.environ, SONDE_AGENT_TOKEN=tok.read_text().strip()))
    assert "cpu-clock" in p.stdout


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

# A raw client for an unprivileged user: hello, AUTH with argv[2], then
# whatever it can get (kallsyms); prints what came back.
RAW_CLIENT = r"""
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
def recv():
    h = b""
    while len(h) < 8:
        c = s.recv(8 - len(h))
        if not c:
            return None, b""
        h += c
    n, t, v = struct.unpack("<IHH", h)
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            return None, b""
        b += c
    return t, b
t, _ = recv()
tok = sys.argv[2].encode()
s.sendall(struct.pack("<IHH", 8 + len(tok), 2, 1) + struct.pack("<II", 1, len(tok)) + tok)
t, b = recv()
print("auth", t)
try:
    s.sendall(struct.pack("<IHH", 4, 13, 1) + struct.pack("<I", 0))
    t, b = recv()
except OSError:
    t, b = None, b""
print("file", t, len(b))
"""


def test_unprivileged_user_refused_on_loopback(agent_factory, tmp_path):
    """The README's own example, no token given: a local unprivileged user
    gets nothing (the token file is root's), root with the token is served."""
    a = agent_factory("--allow-exec")
    assert stat.S_IMODE(os.stat(DEFAULT_TOKEN).st_mode) == 0o600
    out = "/tmp/sonde-nobody-%d.data" % os.getpid()
    p = run([*NOBODY, os.path.join(BUILD, "src", "cli", "sonde"), "record", "--target", a.target,
             "-o", out, "--", "sh", "-c", "id"], check=False)
    assert p.returncode == 1 and "requires a token" in p.stderr, p.stderr
    assert "uid=" not in p.stdout and not os.path.exists(out)
    p = run([*NOBODY, os.path.join(BUILD, "src", "cli", "sonde"), "list", "--target", a.target,
             "sw"], check=False)
    assert p.returncode == 1 and "requires a token" in p.stderr, p.stderr
    for guess in ("", "0" * 64):
        p = run([*NOBODY, "/usr/bin/python3", "-c", RAW_CLIENT, str(a.port), guess])
        assert p.stdout.split("\n")[:2] == [f"auth {ERROR}", "file None 0"], p.stdout
    # Root, with the token from the agent's file, is served.
    data = tmp_path / "root.data"
    sonde("record", "--target", a.target, "-o", str(data), "-e", "syscalls:sys_enter_getppid",
          "-c", "1", "--", workload("getppid_loop"), "50")
    assert run(["perf", "script", "-i", str(data)]).stdout.count("sys_enter_getppid") == 50
    p = run(["/usr/bin/python3", "-c", RAW_CLIENT, str(a.port), default_token().decode()])
    assert p.stdout.startswith(f"auth {OK}\nfile {FILE_REPLY} "), p.stdout


@pytest.fixture
def open_dir():
    """A directory anyone may enter, for sockets an unprivileged user tries."""
    d = tempfile.mkdtemp(prefix="sonde-agent-", dir="/tmp")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_unix_socket_peer_credentials(agent_factory, open_dir):
    sonde_bin = os.path.join(BUILD, "src", "cli", "sonde")
    path = os.path.join(open_dir, "agent.sock")
    a = agent_factory("--allow-exec", listen="unix:" + path)
    assert a.target == "unix:" + path
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    p = sonde("list", "--target", a.target, "sw")
    assert "cpu-clock" in p.stdout, p.stdout
    # nobody: the file system says no, and with the file opened up, the agent.
    p = run([*NOBODY, sonde_bin, "list", "--target", a.target, "sw"], check=False)
    assert p.returncode == 1 and "Permission denied" in p.stderr, p.stderr
    os.chmod(path, 0o666)
    p = run([*NOBODY, sonde_bin, "list", "--target", a.target, "sw"], check=False)
    assert p.returncode == 1 and "uid 65534 may not use this agent" in p.stderr, p.stderr
    # --allow-group: its members are served, others still refused.
    path2 = os.path.join(open_dir, "group.sock")
    b = agent_factory("--allow-group", "nogroup", listen="unix:" + path2)
    st = os.stat(path2)
    assert stat.S_IMODE(st.st_mode) == 0o660 and st.st_gid == 65534
    p = run([*NOBODY, sonde_bin, "list", "--target", b.target, "sw"])
    assert "cpu-clock" in p.stdout, p.stdout
    os.chmod(path2, 0o666)
    p = run(["setpriv", "--reuid=65534", "--regid=100", "--clear-groups", sonde_bin, "list",
             "--target", b.target, "sw"], check=False)
    assert p.returncode == 1 and "may not use this agent" in p.stderr, p.stderr
    b.p.terminate()
    b.p.wait(timeout=10)
    assert not os.path.exists(path2), "the socket file outlived the agent"


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
    # The session's process and, under it, the workload.
    while time.time() < deadline and len(descendants(a.p.pid)) < 2:
        time.sleep(0.1)
    kids = descendants(a.p.pid)
    assert len(kids) >= 2, "the workload did not start on the agent"
    assert perf_fds(a.p.pid) > 0
    time.sleep(0.5)
    host.kill()
    host.wait()
    deadline = time.time() + 10
    while time.time() < deadline and (descendants(a.p.pid) or perf_fds(a.p.pid)):
        time.sleep(0.1)
    assert not descendants(a.p.pid), "the workload outlived the host"
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
    kids = descendants(a.p.pid)
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


def test_one_capture_at_a_time(agent_factory, tmp_path, tracefs):
    """A second capture is refused as busy while one runs; other requests
    (a list) are served meanwhile."""
    a = agent_factory("--allow-exec")
    host = subprocess.Popen([os.path.join(BUILD, "src", "cli", "sonde"), "record", "--target",
                             a.target, "-o", str(tmp_path / "a.data"), "--",
                             workload("getppid_loop"), "10", "3"],
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while time.time() < deadline and not perf_fds(a.p.pid):
        time.sleep(0.1)
    p = sonde("record", "--target", a.target, "-o", str(tmp_path / "b.data"), "--", "true",
              check=False)
    assert p.returncode == 1 and "busy" in p.stderr, p.stderr
    assert not (tmp_path / "b.data").exists() or (tmp_path / "b.data").stat().st_size < 4096
    assert "cpu-clock" in sonde("list", "--target", a.target, "sw").stdout
    assert host.wait(timeout=30) == 0
    out = tmp_path / "c.data"
    sonde("record", "--target", a.target, "-o", str(out), "-e", "syscalls:sys_enter_getppid",
          "-c", "1", "--", workload("getppid_loop"), "20")
    assert run(["perf", "script", "-i", str(out)]).stdout.count("sys_enter_getppid") == 20


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
        for line in p.stderr:
            m = re.search(r"listening on .*:(\d+)$", line.strip())
            if m:
                break
        port = m.group(1)
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
    split, loop, vdso = workload("split"), workload("getppid_loop"), workload("vdso_loop")
    g = vm.start(f"echo vm-token-4711 > /tmp/token; "
                 f"{AGENT} --listen 0.0.0.0:4243 --token-file /tmp/token --allow-exec",
                 files=[AGENT, split, loop, vdso], fwd=[(0, 4243)], timeout=900)
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
        # The guest's vDSO (another kernel's: this machine's can't stand in)
        # comes with the capture into the build-id cache.
        home, vd = tmp_path / "home", tmp_path / "vm-vdso.data"
        home.mkdir()
        env = dict(os.environ, HOME=str(home))
        sonde("record", "--target", target, "--token-file", str(tok), "-o", str(vd),
              "-e", "cpu-clock", "-F", "1000", "--", vdso, "3000000", timeout=600, env=env)
        bid = re.search(r"^([0-9a-f]{40}) \[vdso\]$",
                        run(["perf", "buildid-list", "-i", str(vd)]).stdout, re.M).group(1)
        assert bid != own_vdso_build_id(tmp_path / "own.vdso")
        rep = sonde("report", "-i", str(vd), "--no-children", "--sort", "dso,sym",
                    env=env).stdout
        # Under TCG the guest's share in libc's wrapper varies (35-60% seen in
        # the vDSO itself): assert the vDSO's samples are named, not a share.
        vdso = re.findall(r"^\s+([\d.]+)%\s+\[vdso\]\s+\[\.\] (\S+)", rep, re.M)
        named = sum(float(p) for p, s in vdso if s == "__vdso_clock_gettime")
        assert named >= 20 and named >= 0.9 * sum(float(p) for p, _ in vdso), rep
        g.kill()


def own_vdso_build_id(path):
    """This machine's vDSO build id: the [vdso] mapping of this process."""
    m = re.search(r"^([0-9a-f]+)-([0-9a-f]+) .*\[vdso\]$", open("/proc/self/maps").read(), re.M)
    with open("/proc/self/mem", "rb") as f:
        f.seek(int(m.group(1), 16))
        path.write_bytes(f.read(int(m.group(2), 16) - int(m.group(1), 16)))
    return elf_build_id(path)


def timed_list(target):
    t0 = time.monotonic()
    p = sonde("list", "--target", target, "sw", timeout=60)
    assert "cpu-clock" in p.stdout, p.stdout
    return time.monotonic() - t0


def test_slow_loris_in_the_handshake(agent_factory):
    """A peer that sends its AUTH a byte every half second is dropped at the
    handshake deadline (5 s), however long its frame, and a legitimate host
    is served meanwhile."""
    a = agent_factory()
    loris = socket.create_connection(("127.0.0.1", a.port), timeout=30)
    t0 = time.monotonic()
    frame_bytes = frame(AUTH, struct.pack("<I", 1) + blob(b"x" * 256))
    stop = threading.Event()

    def drip():
        for i in range(len(frame_bytes)):
            if stop.is_set():
                return
            try:
                loris.send(frame_bytes[i:i + 1])
            except OSError:
                return
            time.sleep(0.5)
    threading.Thread(target=drip, daemon=True).start()
    time.sleep(1)
    assert timed_list(a.target) < 3
    # The agent hangs up on it: hello, then EOF (or a reset).
    got = b""
    try:
        while True:
            chunk = loris.recv(4096)
            if not chunk:
                break
            got += chunk
    except ConnectionResetError:
        pass
    dropped = time.monotonic() - t0
    stop.set()
    assert got[4:6] == struct.pack("<H", HELLO)
    assert 4 < dropped < 9, dropped


def test_idle_connections_do_not_lock_hosts_out(agent_factory):
    """200 connections that say nothing: the agent keeps serving (the oldest
    unauthenticated one makes room), and answers at once."""
    a = agent_factory()
    idle = [socket.create_connection(("127.0.0.1", a.port), timeout=10) for _ in range(200)]
    try:
        assert timed_list(a.target) < 3
        assert timed_list(a.target) < 3
    finally:
        for c in idle:
            c.close()


def test_non_reading_peer_is_dropped(agent_factory):
    """An authenticated host that sends 2,000 requests and reads nothing
    stalls only its own session, which ends at the send timeout (10 s)."""
    a = agent_factory()
    c = Conn(a.port)
    assert c.auth[0] == OK
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.sock.sendall(b"".join(frame(15, s("")) for _ in range(2000)))  # LIST
    time.sleep(1)
    assert timed_list(a.target) < 3
    deadline = time.monotonic() + 25
    while time.monotonic() < deadline and descendants(a.p.pid):
        time.sleep(0.2)
    assert not descendants(a.p.pid), "the non-reading peer's session is still there"
    c.sock.close()


def record_req(specs, freq=1000, cg=0, flags=0, argv=(), pids=()):
    req = struct.pack("<I", len(specs)) + b"".join(s(e) + s("") for e in specs)
    req += struct.pack("<QQIIII", freq, 0, cg, 8192, 8, flags) + s("")
    req += struct.pack("<I", len(pids)) + b"".join(struct.pack("<I", p) for p in pids)
    req += struct.pack("<I", 0) + struct.pack("<I", len(argv)) + b"".join(s(x) for x in argv)
    return req + struct.pack("<I", 0)


def test_capture_ends_when_the_host_stops_reading(agent_factory, tmp_path):
    """A system-wide capture whose host reads nothing: the agent's sends
    stall, and after the send timeout the capture is closed (no perf fd
    left), while other hosts are served all along."""
    a = agent_factory()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", a.port))
    sock.settimeout(10)
    c = Conn.__new__(Conn)
    c.sock = sock
    t, _ = c.recv()
    assert t == HELLO
    c.send(AUTH, struct.pack("<I", 1) + blob(default_token()))
    assert c.recv()[0] == OK
    c.send(RECORD, record_req(["cpu-clock"], freq=20000, cg=1, flags=1))
    busy = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not perf_fds(a.p.pid):
            time.sleep(0.1)
        assert perf_fds(a.p.pid) > 0
        t0 = time.monotonic()
        assert timed_list(a.target) < 3
        while time.monotonic() - t0 < 40 and perf_fds(a.p.pid):
            time.sleep(0.2)
        assert perf_fds(a.p.pid) == 0, "the capture outlived a host that reads nothing"
    finally:
        busy.kill()
        busy.wait()
        sock.close()


def elf_build_id(path):
    m = re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", str(path)]).stdout)
    return m.group(1)


def test_buildid_only_from_the_captured_file(agent_factory, tmp_path):
    """After a capture the agent serves a build id only from the file the
    capture mapped (device and inode), not from whatever the name points at
    now: a symlink to /bin/bash or a copy of it swapped in get nothing."""
    a = agent_factory()
    prog, old = tmp_path / "prog", tmp_path / "prog.old"
    shutil.copy(workload("getppid_loop"), prog)
    proc = subprocess.Popen([str(prog), "10", "60"])
    try:
        time.sleep(0.3)
        c = Conn(a.port)
        c.send(RECORD, record_req(["cpu-clock"], pids=[proc.pid]))
        assert c.recv()[0] == EVENTS
        c.send(10)  # STOP
        while c.recv()[0] != 9:  # until END
            pass

        def bid(pid):
            c.send(BUILDID, struct.pack("<II", 2, pid) + s(str(prog)))
            t, payload = c.recv()
            assert t == BUILDID_REPLY, c.error_text(payload)
            n = struct.unpack_from("<I", payload)[0]
            return payload[4:4 + n].hex()

        mine, bash = elf_build_id(prog), elf_build_id(os.path.realpath("/bin/bash"))
        assert mine != bash
        assert bid(proc.pid) == mine and bid(0) == mine
        os.rename(prog, old)
        os.symlink("/bin/bash", prog)
        assert bid(proc.pid) == "" and bid(0) == ""
        prog.unlink()
        shutil.copy("/bin/bash", prog)
        assert bid(proc.pid) == "" and bid(0) == ""
        prog.unlink()
        os.rename(old, prog)  # the captured file itself, back under its name
        assert bid(0) == mine
    finally:
        proc.kill()
        proc.wait()


def test_remote_vdso_kept_in_the_cache(agent_factory, tmp_path):
    """A remote capture's [vdso] gets the target's build id and image (the
    agent's vDSO: every process's on its kernel), kept in the host's
    build-id cache as perf record keeps a local one, so perf report and
    sonde report name __vdso_clock_gettime from it."""
    a = agent_factory("--allow-exec")
    home, out = tmp_path / "home", tmp_path / "remote.data"
    home.mkdir()
    env = dict(os.environ, HOME=str(home))
    sonde("record", "--target", a.target, "-o", str(out), "--", workload("vdso_loop"),
          "5000000", env=env)
    ids = run(["perf", "buildid-list", "-i", str(out)]).stdout
    bid = re.search(r"^([0-9a-f]{40}) \[vdso\]$", ids, re.M).group(1)
    image = home / ".debug" / "[vdso]" / bid / "vdso"
    assert elf_build_id(image) == bid
    assert os.readlink(home / ".debug" / ".build-id" / bid[:2] / bid[2:]) == f"../../[vdso]/{bid}"
    rep = run(["perf", "report", "-i", str(out), "--stdio", "--no-children", "--sort", "dso,sym"],
              env=env).stdout
    # Named from the cached image (the kernel's vDSO may keep its hot loop
    # outside the symbol: 6.18's does, so no share is asserted), and sonde
    # report's rows are perf's.
    assert re.search(r"^\s+\d+\.\d+%\s+\[vdso\]\s+\[\.\] __vdso_clock_gettime$", rep, re.M), rep
    ours = sonde("report", "-i", str(out), "--stdio", "--sort", "dso,sym", env=env).stdout
    rows = lambda text: [ln.split() for ln in text.splitlines() if ln.strip() and ln[0] != "#"]
    assert rows(ours)[:5] == rows(rep)[:5], (ours, rep)
    a = json.loads(sonde("annotate", "-i", str(out), "--json", "__vdso_clock_gettime",
                         env=env).stdout)
    assert os.path.realpath(a["symbols"][0]["symbol_file"]) == str(image)


def test_agent_links_the_explainer_not_the_doctor():
    """The agent explains a failed perf_event_open with the doctor's
    explainer, and links nothing else of the doctor (its checks, run table
    and report: ~30 KB of a static binary)."""
    out = run(["nm", "--defined-only", AGENT], check=False)
    if out.returncode or "no symbols" in out.stderr:
        pytest.skip(f"{AGENT} is stripped")
    names = {ln.split()[-1] for ln in out.stdout.splitlines() if ln.strip()}
    assert "sonde_doctor_explain_open_error" in names
    # the hook dispatch and readers of doctor_probe.c, which the explainer uses
    probe = {"sonde_doctor_" + n for n in ("bpf_probe", "cpu_pmus", "exists", "has_cap",
                                           "no_pmu_errno", "perf_probe", "privileged",
                                           "read_int", "write")}
    doctor = sorted(n for n in names if "doctor" in n and n not in probe)
    assert doctor == ["sonde_doctor_config_default", "sonde_doctor_errno_name",
                      "sonde_doctor_explain_open_error",
                      "sonde_doctor_explain_open_error_at"], doctor


def test_open_error_explained_whole(agent_factory, open_dir):
    """An agent without privileges refuses a system-wide capture the way a
    local record by the same user does: the same explanation line, whole,
    even after a long event name (the host kept 511 bytes and cut it)."""
    home = os.path.join(open_dir, "nobody")
    os.mkdir(home, 0o700)
    os.chown(home, 65534, 65534)
    tok = os.path.join(home, "token")
    with open(tok, "w") as f:
        f.write("nobody-agent-token\n")
    os.chmod(tok, 0o600)
    os.chown(tok, 65534, 65534)
    a = agent_factory("--token-file", tok, user=65534)
    spec = "cpu-clock/name=%s/" % ("n" * 300)
    local = run([*NOBODY, os.path.join(BUILD, "src", "cli", "sonde"), "record", "-a", "-o",
                 os.path.join(home, "x.data"), "-e", spec, "--", "true"], check=False)
    if local.returncode == 0:
        pytest.skip("perf_event_paranoid lets an unprivileged user record system wide")
    why = [ln for ln in local.stderr.splitlines() if "perf_event_open:" in ln]
    assert len(why) == 1 and len(why[0]) > 100, local.stderr
    p = sonde("record", "--target", a.target, "--token-file", tok, "-a", "-o",
              os.path.join(open_dir, "r.data"), "-e", spec, check=False)
    assert p.returncode == 1, p.stderr
    assert why[0] in p.stderr.splitlines(), (why[0], p.stderr)
    assert "n" * 300 in p.stderr


# A fake agent for an unprivileged user: a hello, then it prints the token
# the host sends in AUTH.
FAKE_AGENT = r"""
import socket, struct, sys
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
print(srv.getsockname()[1], flush=True)
c, _ = srv.accept()
def st(t):
    return struct.pack("<I", len(t) + 1) + t + b"\0"
hello = (struct.pack("<II", 1, 0) + st(b"0") + st(b"x86_64") + st(b"6")
         + struct.pack("<IIIQQ", 1, 1, 1, 0, 0))
c.sendall(struct.pack("<IHH", len(hello), 1, 1) + hello)
h = c.recv(8)
n = struct.unpack("<I", h[:4])[0]
body = b""
while len(body) < n:
    body += c.recv(n - len(body))
print("token", body[8:].decode(errors="replace"), flush=True)
"""


def test_local_token_not_sent_to_another_users_listener(agent_factory):
    """Any local user may listen on a free loopback port: root's host tool
    must not hand such a listener the local agent's token."""
    agent_factory()  # makes sure the default token file exists
    fake = subprocess.Popen([*NOBODY, "/usr/bin/python3", "-c", FAKE_AGENT],
                            stdout=subprocess.PIPE, text=True)
    try:
        port = int(fake.stdout.readline())
        sonde("list", "--target", f"127.0.0.1:{port}", check=False, timeout=20)
        out = fake.stdout.read()
    finally:
        fake.kill()
        fake.wait()
    secret = default_token().decode()
    assert "token" in out and secret not in out, out
