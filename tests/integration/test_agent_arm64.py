"""The aarch64 sonde-agent in an aarch64 guest, analysed on this x86 host.

tests/vm boots Debian's arm64 6.1 kernel with busybox-static:arm64 under
qemu-system-aarch64 -machine virt -cpu max (TCG).  The cross-built static
agent (scripts/build-agent-cross ... aarch64) listens there with a token;
the host goes through QEMU's port forwarding.  This is where the Arm PMU
path runs for real: QEMU's -cpu max emulates a PMUv3 (armv8_pmuv3), and
whatever events the guest's kernel exposes are listed by
`sonde list --target` and tried for sampling.

What worked is printed ("arm64-vm: ..." lines; `pytest -s` or `-rP`) and
kept in $SONDE_BUILD/arm64-vm-notes.txt: boot time, the PMU events listed
and which ones sampled, the agent's memory during a capture.

Debian's busybox is stripped (no .symtab, no debug package in main), so
its samples resolve to the object and an address only; the user-space
symbols and the aarch64 disassembly come from tests/workloads/split.c
cross-compiled here (static, -g) and given to report/annotate through a
--symfs sysroot that also holds the extracted busybox.
"""
import os
import re
import shutil
import subprocess
import types

import pytest

from conftest import BUILD, TOP, run, sonde

TOKEN = "arm64-token-5150"
PORT = 4243
LOOP = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"
SPLIT = "/usr/local/bin/split"
NOTES = []

pytestmark = pytest.mark.skipif(not shutil.which("aarch64-linux-gnu-gcc"),
                                reason="needs gcc-aarch64-linux-gnu (scripts/install-deps)")


def note(msg):
    NOTES.append(msg)
    print("arm64-vm: " + msg)


def samples(stderr):
    m = re.search(r"\((\d+) samples\)", stderr)
    return int(m.group(1)) if m else 0


def report_rows(path, sysroot, *extra):
    """{(dso, symbol): percent} of `sonde report --sort dso,sym`."""
    out = sonde("report", "-i", str(path), "--no-children", "--sort", "dso,sym",
                "--symfs", str(sysroot), *extra).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(\S+)", line)
        if m:
            rows[(m.group(2), m.group(4), m.group(3))] = float(m.group(1))
    return rows, out


@pytest.fixture(scope="module")
def arm64(vm_arm64, tmp_path_factory):
    vm = vm_arm64
    tmp = tmp_path_factory.mktemp("arm64")
    # The agent, as scripts/build-agent-cross builds it (static, stripped).
    agents = os.path.join(BUILD, "agents")
    run([os.path.join(TOP, "scripts", "build-agent-cross"), agents, "aarch64"], timeout=900)
    agent = os.path.join(agents, "sonde-agent-aarch64")
    assert "ARM aarch64" in run(["file", agent]).stdout
    # A sysroot as a board's build would have: the guest's busybox and a
    # workload with symbols and line info, at their paths in the guest.
    sysroot = tmp / "sysroot"
    (sysroot / "bin").mkdir(parents=True)
    shutil.copy2(vm.busybox, sysroot / "bin" / "busybox")
    split = sysroot / SPLIT.lstrip("/")
    split.parent.mkdir(parents=True)
    run(["aarch64-linux-gnu-gcc", "-static", "-g", "-O1", "-fno-omit-frame-pointer",
         "-o", str(split), os.path.join(TOP, "tests", "workloads", "split.c")])
    tok = tmp / "token"
    tok.write_text(TOKEN + "\n")
    tok.chmod(0o600)
    pmu = "/sys/bus/event_source/devices"
    cmd = (f"echo \"PMUS=[$(cd {pmu} && echo armv8_pmuv3*)]\"; "
           f"for d in {pmu}/armv8_pmuv3*/events; do [ -d $d ] && echo \"EVENTS=[$(echo $(ls $d))]\"; done; "
           f"echo {TOKEN} > /tmp/token; chmod 600 /tmp/token; "
           f"sonde-agent --listen 0.0.0.0:{PORT} --token-file /tmp/token --allow-exec")
    g = vm.start(cmd, files=[(agent, "/usr/local/bin/sonde-agent"), (str(split), SPLIT)],
                 fwd=[(0, PORT)], timeout=1800)
    with g:
        out = g.wait_for(f"listening on 0.0.0.0:{PORT}", timeout=300)
        note("kernel %s, boot to command %.1f s (guest uptime %.1f s)"
             % (vm.release, g.boot_seconds, g.guest_uptime or -1))
        pmus = re.search(r"PMUS=\[(.*)\]", out).group(1).split()
        pmus = [p for p in pmus if "*" not in p]
        events = re.search(r"EVENTS=\[(.*)\]", out)
        events = sorted(set(events.group(1).split())) if events else []
        note("guest PMUs: %s; sysfs events: %s" % (" ".join(pmus) or "none",
                                                   " ".join(events) or "none"))
        yield types.SimpleNamespace(vm=vm, guest=g, target=f"127.0.0.1:{g.host_ports[PORT]}",
                                    tok=str(tok), sysroot=sysroot, tmp=tmp, pmus=pmus,
                                    events=events, split=split)
    with open(os.path.join(BUILD, "arm64-vm-notes.txt"), "w") as f:
        f.write("".join(n + "\n" for n in NOTES))


def record(a, out, *args, check=True):
    return sonde("record", "--target", a.target, "--token-file", a.tok, "-o", str(out), *args,
                 check=check, timeout=900)


def test_list_shows_the_pmu_events(arm64):
    a = arm64
    p = sonde("list", "--target", a.target, "--token-file", a.tok)
    head = p.stdout.strip().splitlines()[0]
    assert "(aarch64 6.1.0" in head, head
    listed = sorted(set(re.findall(r"^\s*(armv8_pmuv3\S*/[^/\s]+/)", p.stdout, re.M)))
    hw = [l for l in p.stdout.splitlines() if "Hardware event" in l]
    if not a.pmus:
        assert not listed, listed
        assert "no hardware PMU" in head and all("not supported" in l for l in hw), p.stdout
        note("no armv8_pmuv3 PMU in the guest; sonde list --target says: no hardware PMU")
        return
    note("sonde list --target lists: %s" % (" ".join(listed) or "none"))
    for ev in a.events:
        assert any(l.endswith("/%s/" % ev) for l in listed), (ev, listed)
    # The generic hardware events are offered too (the PMU is there).
    assert "hardware PMU" in head and "no hardware PMU" not in head, head
    cyc = [l for l in hw if re.search(r"\bcycles\b", l)]
    assert cyc and "not supported" not in cyc[0], hw
    # The glob of the manual page's example.
    g = sonde("list", "--target", a.target, "--token-file", a.tok, "armv8*").stdout
    assert all(l in g for l in listed), g


def test_busybox_loop_cpu_clock_and_pmu(arm64):
    a = arm64
    tried = [("cpu-clock", "-e", "cpu-clock")]
    if a.pmus:
        tried += [(f"{a.pmus[0]}/cpu_cycles/", "-e", f"{a.pmus[0]}/cpu_cycles/"),
                  ("cycles", "-e", "cycles")]
    sampled = []
    for name, *opt in tried:
        out = a.tmp / ("loop-%s.data" % re.sub(r"\W", "_", name))
        p = record(a, out, *opt, "--", "/bin/sh", "-c", LOOP, check=False)
        n = samples(p.stderr)
        if p.returncode != 0 or n == 0:
            note("busybox loop, -e %s: no samples (exit %d: %s)"
                 % (name, p.returncode, p.stderr.strip().splitlines()[-1:]))
            assert name != "cpu-clock", p.stderr
            continue
        assert "(aarch64 6.1.0" in p.stderr, p.stderr
        rows, text = report_rows(out, a.sysroot)
        bb = sum(v for (dso, _, _), v in rows.items() if dso == "busybox")
        ksyms = [s for (dso, s, k) in rows if k == "k" and not s.startswith("0x")]
        note("busybox loop, -e %s: %d samples, %.0f%% in busybox (stripped: addresses), "
             "kernel symbols from the captured kallsyms: %s"
             % (name, n, bb, ", ".join(ksyms[:3]) or "none"))
        assert bb > 50, text
        sampled.append(name)
    note("sampled the busybox loop: %s" % ", ".join(sampled))


def test_report_and_annotate_aarch64_workload(arm64):
    a = arm64
    events = ["cpu-clock"] + [f"{a.pmus[0]}/{e}/" for e in a.events] if a.pmus else ["cpu-clock"]
    sampled = []
    for ev in events:
        out = a.tmp / ("split-%s.data" % re.sub(r"\W", "_", ev))
        # The workload prints the agent's memory (its parent) at its end,
        # while the capture is still on: it lands on the guest's console.
        tag = "AGENT-MEM-%d" % len(sampled + [ev])
        p = record(a, out, "-e", ev, "-g", "--", "/bin/sh", "-c",
                   f"{SPLIT} 2; echo {tag} $(cat /proc/$PPID/comm)"
                   f" $(grep -E 'VmRSS|VmHWM' /proc/$PPID/status)",
                   check=False)
        n = samples(p.stderr)
        if p.returncode == 0 and n == 0:
            # QEMU advertises STALL, STALL_FRONTEND, STALL_BACKEND but their
            # count is always 0 (target/arm: zero_event_get_count), so they
            # never overflow: a valid capture without samples.
            note("split, -e %s: opened, 0 samples (QEMU never counts it)" % ev)
            continue
        if p.returncode != 0:
            note("split, -e %s: refused (exit %d: %s)"
                 % (ev, p.returncode, p.stderr.strip().splitlines()[-1:]))
            assert ev != "cpu-clock", p.stderr
            continue
        rows, text = report_rows(out, a.sysroot)
        user = {s: v for (dso, s, k), v in rows.items() if dso == "split"}
        top = sorted(user, key=user.get, reverse=True)[:3]
        note("split, -e %s -g: %d samples, top user symbols %s"
             % (ev, n, ", ".join("%s %.0f%%" % (s, user[s]) for s in top)))
        # cpu-clock: the 60/30/10 split's order.  A PMU event: hot_fn in
        # the top two (the guest kernel throttles the PMU interrupt under
        # TCG, which leaves few samples).
        assert top and (top[0] if ev == "cpu-clock" else top[:2]).count("hot_fn"), text
        sampled.append(ev)
        mem = re.search(tag + r" (.*)", a.guest.output())
        if mem:
            note("agent memory at the end of the -e %s capture: %s" % (ev, mem.group(1).strip()))
    note("sampled split: %s" % ", ".join(sampled))
    # The agent's peak over all the captures so far (the kallsyms snapshot
    # is built at a capture's end, after the workload's own reading).
    record(a, a.tmp / "peak.data", "-e", "cpu-clock", "--", "/bin/sh", "-c",
           "echo AGENT-PEAK $(grep -E 'VmHWM|VmRSS' /proc/$PPID/status)")
    mem = re.search(r"AGENT-PEAK (.*)", a.guest.output())
    if mem:
        note("agent memory after all the captures: %s" % mem.group(1).strip())
    # annotate on the host: capstone's aarch64 disassembly and split.c's lines.
    out = a.tmp / "split-cpu_clock.data"
    ann = sonde("annotate", "-i", str(out), "--symfs", str(a.sysroot), "hot_fn").stdout
    insns = re.findall(r"\b(madd|mul|ldr|str|add|subs|cmp|b\.ne|b\.hi|cbnz|ret)\b", ann)
    assert len(set(insns)) >= 3, ann
    assert "6364136223846793005" in ann or "WORK(6)" in ann, ann
    note("annotate hot_fn (aarch64, capstone): %d instruction rows, mnemonics %s"
         % (len(insns), " ".join(sorted(set(insns)))))
    # The call chains were unwound on the target's frame pointers.
    rep = sonde("report", "-i", str(out), "--symfs", str(a.sysroot), "--children",
                "--sort", "sym").stdout
    assert re.search(r"\bmain\b", rep), rep
