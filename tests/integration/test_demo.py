"""make demo: the bundled program recorded with call graphs, reported,
annotated and written as HTML (scripts/demo), after installing only what
building needs (scripts/install-deps --build)."""
import os
import re
import shutil
import subprocess
import time

from conftest import BUILD, TOP, run

DEMO_FUNCS = [("hot_loop", 60), ("warm_loop", 30), ("cool_loop", 10)]


def test_demo_shows_the_main_job(tmp_path):
    t0 = time.monotonic()
    p = run([os.path.join(TOP, "scripts", "demo"), BUILD], env={**os.environ,
            "DEMO_DIR": str(tmp_path)}, timeout=120)
    took = time.monotonic() - t0
    out = p.stdout
    # Each step is shown with its command.
    for cmd in [r"record --call-graph dwarf ", r"report -i \S+ --no-children",
                r"annotate -i ", r"report -i \S+ --html "]:
        assert re.search(r"^\$ \S*sonde " + cmd, out, re.M), (cmd, out)
    # The profile: the program's 60/30/10 split, each with its callers, as perf sees it.
    data = tmp_path / "perf.data"
    theirs = run(["perf", "report", "-i", str(data), "--stdio", "--no-children", "--sort", "sym",
                  "-g", "none"]).stdout
    for fn, share in DEMO_FUNCS:
        ours = re.search(r"^\s+([\d.]+)%\s+demo\s+demo\s+\[\.\] " + fn + r"\s*$", out, re.M)
        perf = re.search(r"^\s+([\d.]+)%\s+\[\.\] " + fn + r"\s*$", theirs, re.M)
        assert ours and perf, (fn, out, theirs)
        assert float(ours.group(1)) == float(perf.group(1)), (fn, ours.group(0), perf.group(0))
        assert abs(float(ours.group(1)) - share) < 10, (fn, ours.group(0))
    chain = out[out.index("[.] hot_loop"):]
    assert re.search(r"hot_loop\n\s+main\n", chain), chain[:400]
    # The hottest lines: spin's loop in demo.c, inlined into hot_loop.
    assert re.search(r"^\s+[\d.]+ \* : demo\.c:\d+\s.*\[inlined: spin\]", out, re.M), out
    # The HTML report, written where the demo says.
    html = tmp_path / "report.html"
    assert str(html) in out and html.stat().st_size > 10000
    assert took < 30, took


def test_build_deps_are_only_build_deps(tmp_path):
    """--build installs no test toolchain and sets up no VM; --all does."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "tests" / "vm").mkdir(parents=True)
    shutil.copy(os.path.join(TOP, "scripts", "install-deps"), tmp_path / "scripts")
    marker = tmp_path / "vm-setup-ran"
    setup = tmp_path / "tests" / "vm" / "setup"
    setup.write_text(f"#!/bin/sh\necho \"$@\" >> {marker}\n")
    setup.chmod(0o755)
    script = str(tmp_path / "scripts" / "install-deps")
    text = open(script).read()
    build = re.search(r'BUILD_PACKAGES="(.*?)"', text, re.S).group(1).split()
    for heavy in ["chromium", "qemu-system-x86", "gcc-aarch64-linux-gnu", "linux-perf", "clang"]:
        assert heavy not in build, heavy
    p = run([script, "--build"], check=False)
    # Here every package is present; on a fresh machine the same list is installed.
    assert p.returncode == 0 and "(build)" in p.stdout, (p.stdout, p.stderr)
    assert not marker.exists()
    p = run([script, "--all"], check=False)
    assert "--arch amd64" in marker.read_text(), (p.stdout, p.stderr)
    dry = run(["make", "-n", "-C", TOP, "demo"]).stdout
    assert "install-deps --build" in dry and "scripts/demo" in dry, dry
