"""The embedded story in one QEMU guest (issue 8): sonde-agent on the target,
capture and analysis on the host.

One boot of Debian's 6.1 kernel (tests/vm) with the static sonde-agent,
busybox, dash (the workload's `sh`: glibc's write(2) has a symbol, static
busybox's has none), Debian's perf and the real module
tests/fixtures/kmod/sonde_chardev.ko (built against the same release's
linux-headers).  The guest loads the module, times the module's walk plain
and under a local `perf record -g`, then serves two agents: one with
--allow-exec, one without, both with a token, on ports QEMU forwards from
127.0.0.1.  A monitor loop prints the agent's state (open perf events,
children, tracefs instances, VmHWM) on the console every second.

On the host: a wrong token and a command for the agent without --allow-exec
are refused; `sonde record --target -g -- sh -c "echo 10000 >
/dev/sonde_chardev"` captures; `sonde report --modules-dir` puts
sonde_chardev_walk in [sonde_chardev] on top of the kernel symbols with the
call path write (libc) -> syscall entry -> vfs_write -> sonde_chardev_write
-> sonde_chardev_walk; `sonde annotate` shows the walk's source lines.
Then the overhead of the agent's capture against perf's, the agent's peak
RSS, and a connection cut mid-capture (through a proxy on the host): a
valid file on the host, a clean agent that takes the next capture.
"""
import os
import re
import shutil
import socket
import statistics
import struct
import subprocess
import threading
import time
import json

import pytest

from conftest import BUILD, run, sonde, sonde_path
from test_agent import AGENT, ERROR, OK, RECORD, Conn, s

KO = os.path.join(BUILD, "tests", "fixtures", "sonde_chardev.ko")
MODS = os.path.dirname(KO)
DEV = "/dev/sonde_chardev"
PORT, PORT_NOEXEC = 4243, 4244
TOKEN = "embedded-vm-token-0815"
WALK = "/usr/local/bin/sonde-walk"      # the timed workload in the guest
DATE = "/usr/local/bin/date"            # coreutils: busybox's has no %N
PASSES = 10000                          # ~1 s of walking under TCG
RUNS = 3                                # timed runs per mode
EVENT = ["-e", "cpu-clock", "-F", "4000", "-g"]   # the same for perf and sonde

# The guest's timed workload: passes, mode -> "@@walk MODE US@@" on stdout.
WALK_SH = f"""#!/usr/local/bin/sh
s=$({DATE} +%s%N)
echo "$1" > {DEV}
e=$({DATE} +%s%N)
echo "@@walk $2 $(( (e - s) / 1000 ))@@"
"""


def ko_release():
    """The kernel release the .ko was built for (its vermagic)."""
    p = run(["modinfo", "-F", "vermagic", KO], check=False)
    return p.stdout.split()[0] if p.returncode == 0 and p.stdout.strip() else None


def find_perf():
    """Debian's real perf binary (not the wrapper script), or None."""
    for c in sorted(set(["/usr/bin/perf"] + [os.path.join("/usr/bin", n)
                    for n in os.listdir("/usr/bin") if re.fullmatch(r"perf_\d+\.\d+", n)])):
        try:
            with open(c, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    return c
        except OSError:
            pass
    return None


def guest_script(perf):
    perf_runs = ""
    if perf:
        perf_runs = f"""
for i in {' '.join(str(i) for i in range(RUNS))}; do
	{perf} record {' '.join(EVENT)} -o /tmp/perf.data -- {WALK} {PASSES} perf \\
		>/tmp/perf.out 2>&1 || {{ echo "@@perf failed@@"; cat /tmp/perf.out; }}
	cat /tmp/perf.out | grep '@@walk'
done
{perf} report -i /tmp/perf.data --stdio --no-children --sort dso,sym 2>/dev/null \\
	| grep -m 4 '%\\|^# Samples' | sed 's/^/@@perf-top /'
"""
    return f"""
insmod {KO} || exit 3
i=0; while [ ! -c {DEV} ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ -c {DEV} ] || {{ echo "no {DEV}"; exit 4; }}
echo 10 > {DEV}
for i in {' '.join(str(i) for i in range(RUNS))}; do {WALK} {PASSES} plain; done
{perf_runs}
echo {TOKEN} > /tmp/token
{AGENT} --listen 0.0.0.0:{PORT} --token-file /tmp/token --allow-exec &
A=$!
{AGENT} --listen 0.0.0.0:{PORT_NOEXEC} --token-file /tmp/token &
n=0
while kill -0 $A 2>/dev/null; do
	# The agent serves each connection in a child: its perf fds count, and
	# "children" are the sessions (a workload runs under one).
	S=$(grep -l "^PPid:[[:space:]]*$A\\$" /proc/[0-9]*/status 2>/dev/null | cut -d/ -f3)
	p=$(for q in $A $S; do ls -l /proc/$q/fd 2>/dev/null; done | grep -c perf_event)
	k=$(echo $S | wc -w)
	t=$(ls /sys/kernel/tracing/instances | wc -l)
	h=$(awk '/^VmHWM/ {{print $2}}' /proc/$A/status)
	r=$(for q in $A $S; do cat /proc/$q/status; done 2>/dev/null | awk '/^VmRSS/ {{s += $2}} END {{print s}}')
	c=$(for q in $A $S; do cat /proc/$q/stat; done 2>/dev/null | awk '{{s += $14 + $15}} END {{print s}}')
	m=$(for q in $A $S; do cat /proc/$q/smaps_rollup; done 2>/dev/null | awk '/^Rss:/ {{s += $2}} END {{print s}}')
	echo "@@state $n perf_fds=$p children=$k instances=$t hwm_kb=$h rss_kb=$r smaps_rss_kb=$m cpu_ticks=$c@@"
	n=$((n + 1))
	sleep 1
done
echo "@@agent exited@@"
"""


def states(out):
    return [dict(kv.split("=") for kv in m.group(2).split()) | {"seq": int(m.group(1))}
            for m in re.finditer(r"@@state (\d+) ([^@]*)@@", out)]


def wait_state(g, pred, timeout=120, after=None):
    """Waits for a monitor line (newer than seq @after) for which pred holds."""
    end = time.time() + timeout
    while time.time() < end:
        st = [x for x in states(g.output()) if after is None or x["seq"] > after]
        for x in st:
            if pred(x):
                return x
        time.sleep(0.5)
    raise AssertionError(f"no guest state matching within {timeout} s; last: "
                         f"{states(g.output())[-3:]}")


def walk_times(text, mode):
    return [int(x) for x in re.findall(rf"@@walk {mode} (\d+)@@", text)]


class Proxy:
    """A TCP relay on 127.0.0.1 to @port whose connections can be cut."""

    def __init__(self, port):
        self.to = port
        self.lsock = socket.socket()
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(4)
        self.port = self.lsock.getsockname()[1]
        self.socks = []
        self.relayed = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.lsock.accept()
            except OSError:
                return
            u = socket.create_connection(("127.0.0.1", self.to))
            self.socks += [c, u]
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                self.relayed += len(d)
                b.sendall(d)
        except OSError:
            pass
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def cut(self):
        for x in self.socks:
            try:
                x.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            x.close()

    def close(self):
        self.cut()
        self.lsock.close()


def kernel_rows(path, *extra):
    j = json.loads(sonde("report", "-i", str(path), "--modules-dir", MODS, "--json",
                         "--no-children", "--sort", "dso,sym", *extra, timeout=300).stdout)
    return j, [e for e in j["entries"] if e.get("kernel")]


def hottest_path(tree, samples):
    """The callers-first path of a --json callchain tree that most samples
    take: down the heaviest branch while it holds half of them."""
    path = []
    while tree:
        node = max(tree, key=lambda n: n["counts"][0]["samples"])
        if node["counts"][0]["samples"] * 2 < samples:
            break
        path.append(node)
        tree = node.get("callers") or []
    return path


def test_embedded_story(vm, tmp_path):
    if not os.path.exists(KO):
        pytest.skip("no sonde_chardev.ko: no linux-headers when meson was set up "
                    "(scripts/install-deps installs linux-headers-amd64)")
    rel = ko_release()
    if rel != vm.release:
        pytest.skip(f"sonde_chardev.ko is for {rel}, the VM kernel is {vm.release}: "
                    "install the VM kernel's linux-headers and set meson up again")
    if not os.path.exists(AGENT) or "statically linked" not in run(["file", "-L", AGENT]).stdout:
        pytest.skip(f"{AGENT} is not a static build (meson -Dagent_static=true)")
    dash = shutil.which("dash")
    if not dash:
        pytest.skip("no dash on the host (the guest's sh, for a symbolized libc write)")
    perf = find_perf()
    walk = tmp_path / "sonde-walk"
    walk.write_text(WALK_SH)
    walk.chmod(0o755)
    tok, wrong = tmp_path / "token", tmp_path / "wrong"
    tok.write_text(TOKEN + "\n")
    wrong.write_text(TOKEN[:-1] + "6\n")
    tok.chmod(0o600)
    wrong.chmod(0o600)
    files = [AGENT, KO, (dash, "/usr/local/bin/sh"), ("/usr/bin/date", DATE),
             (str(walk), WALK)] + ([perf] if perf else [])

    g = vm.start(guest_script(perf), files=files, fwd=[(0, PORT), (0, PORT_NOEXEC)],
                 timeout=1800, boot_timeout=300)
    with g:
        g.wait_for(f"listening on 0.0.0.0:{PORT}", timeout=900)
        g.wait_for(f"listening on 0.0.0.0:{PORT_NOEXEC}", timeout=120)
        target = f"127.0.0.1:{g.host_ports[PORT]}"
        noexec = f"127.0.0.1:{g.host_ports[PORT_NOEXEC]}"
        auth = ["--token-file", str(tok)]
        print(f"\nembedded: kernel {vm.release}, boot to command {g.boot_seconds:.1f} s")

        # -- refusals ----------------------------------------------------
        p = sonde("list", "--target", target, "--token-file", str(wrong), check=False)
        assert p.returncode == 1 and "authentication failed" in p.stderr, p.stderr
        # No token given: QEMU's forward is a root-owned listener on
        # loopback, so the host offers the local agent's token, if any.
        p = sonde("list", "--target", target, check=False)
        assert p.returncode == 1 and ("requires a token" in p.stderr
                                      or "authentication failed" in p.stderr), p.stderr
        p = sonde("record", "--target", noexec, *auth, "-o", str(tmp_path / "no.data"),
                  "--", "sh", "-c", f"echo 1 > {DEV}", check=False)
        assert p.returncode == 2 and "--allow-exec" in p.stderr, p.stderr
        assert not (tmp_path / "no.data").exists()
        # The agent refuses it itself, whatever a host sends.
        c = Conn(g.host_ports[PORT_NOEXEC], TOKEN.encode())
        assert c.auth[0] == OK
        req = (struct.pack("<I", 0) + struct.pack("<QQIIII", 1000, 0, 0, 8192, 8, 0) + s("")
               + struct.pack("<II", 0, 0) + struct.pack("<I", 1) + s("/bin/true")
               + struct.pack("<I", 0))
        c.send(RECORD, req)
        t, payload = c.recv()
        assert t == ERROR and "--allow-exec" in c.error_text(payload)
        c.sock.close()

        # -- the capture ---------------------------------------------------
        out = tmp_path / "out.data"
        p = sonde("record", "--target", target, *auth, "-g", "-o", str(out), "--",
                  "sh", "-c", f"echo {PASSES} > {DEV}", timeout=600)
        assert "captured on " + target in p.stderr, p.stderr
        j, krows = kernel_rows(out)
        print("embedded: top kernel symbols:",
              ", ".join(f"{e['dso']} {e['symbol']} {e['self'][0]['percent']:.1f}%"
                        for e in krows[:4]))
        assert krows, j
        top = krows[0]
        assert (top["dso"], top["symbol"]) == ("[sonde_chardev]", "sonde_chardev_walk"), krows[:5]
        assert top["self"][0]["percent"] > 50, top
        # Within the .ko too.
        _, mrows = kernel_rows(out, "--dso", "[sonde_chardev]")
        assert mrows[0]["symbol"] == "sonde_chardev_walk", mrows[:3]

        # The call path, callers first: the shell's write(2) in libc, the
        # syscall entry, vfs_write, the module's write handler, the walk.
        cj = json.loads(sonde("report", "-i", str(out), "--modules-dir", MODS, "--json", "-G",
                              "--no-children", "--sort", "dso,sym", "--callchain-limit", "0",
                              timeout=300).stdout)
        walk_e = [e for e in cj["entries"] if e.get("symbol") == "sonde_chardev_walk"]
        assert walk_e and walk_e[0].get("callchain"), cj["entries"][:2]
        best = hottest_path(walk_e[0]["callchain"], walk_e[0]["self"][0]["samples"])
        names = [(f["symbol"], f["dso"], f["kernel"]) for f in best]
        print("embedded: hottest call path:", " -> ".join(f"{n} [{d}]" for n, d, _ in names), flush=True)
        syms = [n for n, _, _ in names]
        users = [i for i, (_, _, k) in enumerate(names) if not k]
        assert users, names
        first_k = users[-1] + 1
        assert re.search(r"write", syms[users[-1]]) and "libc" in names[users[-1]][1], names
        assert all(k for _, _, k in names[first_k:]), names
        assert re.match(r"(entry_SYSCALL|do_syscall)", syms[first_k]), names
        kpath = syms[first_k:]
        for a, b in (("vfs_write", "sonde_chardev_write"),
                     ("sonde_chardev_write", "sonde_chardev_walk")):
            assert a in kpath and b in kpath and kpath.index(a) < kpath.index(b), kpath
        assert kpath[-1] == "sonde_chardev_walk" and names[-1][1] == "[sonde_chardev]", names
        assert names[-2][:2] == ("sonde_chardev_write", "[sonde_chardev]"), names

        # annotate: the walk's source lines, with samples.
        a = json.loads(sonde("annotate", "-i", str(out), "--modules-dir", MODS, "--json",
                             "sonde_chardev_walk", timeout=300).stdout)
        txt = sonde("annotate", "-i", str(out), "--modules-dir", MODS, "--source-only",
                    "sonde_chardev_walk", timeout=300).stdout
        assert "sonde_chardev_walk" in txt and "READ_ONCE(sonde_walk_buf[off])" in txt, txt
        print("embedded: sonde annotate sonde_chardev_walk (source):\n" + txt)
        assert a, a

        # -- overhead: the agent's capture of the timed walk ------------------
        before = wait_state(g, lambda x: True)
        nsamples = []
        for i in range(RUNS):
            ov = tmp_path / f"ov{i}.data"
            sonde("record", "--target", target, *auth, *EVENT, "-o", str(ov),
                  "--", WALK, str(PASSES), "agent", timeout=600)
            nsamples.append(json.loads(sonde("report", "-i", str(ov), "--json", "--sort", "dso",
                                             "--no-children").stdout)["events"][0]["samples"])
        seen = wait_state(g, lambda x: True, after=before["seq"])
        gout = g.output()
        plain, under_agent = walk_times(gout, "plain"), walk_times(gout, "agent")
        under_perf = walk_times(gout, "perf")
        assert len(plain) == RUNS and len(under_agent) == RUNS, gout[-3000:]
        mp, ma = statistics.median(plain), statistics.median(under_agent)
        print(f"embedded: echo {PASSES} > {DEV} (median of {RUNS}, guest wall time): "
              f"plain {mp / 1000:.0f} ms, under the agent's capture ({' '.join(EVENT)}) "
              f"{ma / 1000:.0f} ms = {ma / mp:.2f}x", end="")
        if under_perf:
            mf = statistics.median(under_perf)
            print(f", under local perf record {mf / 1000:.0f} ms = {mf / mp:.2f}x; "
                  f"agent/perf {ma / mf:.2f}")
        else:
            print(f"; perf record: {'failed' if perf else 'no perf binary on the host'}")
        print("embedded: perf's top in the guest:",
              "; ".join(m.strip() for m in re.findall(r"@@perf-top ([^\n]*)", gout)))
        # VmHWM/VmRSS lag (6.1 caches RSS counters per task and syncs them
        # every 64 faults): smaps_rollup walks the page tables, so its Rss,
        # sampled every second while capturing, is the figure.
        during = [x for x in states(gout) if before["seq"] <= x["seq"] <= seen["seq"]]
        peak = max(int(x["smaps_rss_kb"]) for x in during)
        print(f"embedded: agent: {nsamples} samples per capture; CPU time over the {RUNS} "
              f"captures {(int(seen['cpu_ticks']) - int(before['cpu_ticks'])) * 10} ms; "
              f"RSS (smaps_rollup, max of {len(during)} 1-s readings during the captures) "
              f"{peak} kB; VmHWM says {seen['hwm_kb']} kB")
        assert peak > 0

        # -- the connection cut mid-capture ------------------------------------
        proxy = Proxy(g.host_ports[PORT])
        try:
            cut = tmp_path / "cut.data"
            host = subprocess.Popen([sonde_path(), "record", "--target",
                                     f"127.0.0.1:{proxy.port}", *auth, "-g", "-o", str(cut),
                                     "--", "sh", "-c", f"echo 100000 > {DEV}"],
                                    stderr=subprocess.PIPE, text=True)
            st = wait_state(g, lambda x: int(x["children"]) > 0 and int(x["perf_fds"]) > 0)
            t0 = time.time()
            while proxy.relayed < 200000 and time.time() - t0 < 60:
                time.sleep(0.2)
            proxy.cut()
            _, err = host.communicate(timeout=120)
            assert host.returncode == 1 and "capture was cut" in err, err
            clean = wait_state(g, lambda x: x["perf_fds"] == "0" and x["children"] == "0",
                               after=st["seq"], timeout=60)
            assert clean["instances"] == "0", clean
            # A valid file of what was received: the samples, with the
            # kernel's (kallsyms and module sections come after the capture,
            # so a cut one leaves the kernel addresses unresolved).
            cj, crows = kernel_rows(cut)
            assert cj["events"][0]["samples"] > 100 and crows, cj["events"]
            assert run(["perf", "report", "-i", str(cut), "--stdio"]).stdout.count("%") > 0
            print(f"embedded: cut after {proxy.relayed} bytes: host file valid "
                  f"({cj['events'][0]['samples']} samples; top kernel row "
                  f"{crows[0]['dso']} {crows[0]['symbol']}), agent clean "
                  f"{clean['seq'] - st['seq']} s later")
        finally:
            proxy.close()
        nxt = tmp_path / "next.data"
        sonde("record", "--target", target, *auth, "-g", "-o", str(nxt), "--",
              "sh", "-c", f"echo 1000 > {DEV}", timeout=600)
        _, nrows = kernel_rows(nxt)
        assert nrows and nrows[0]["symbol"] == "sonde_chardev_walk", nrows[:3]
        g.kill()
