"""Shared fixtures for sonde's integration tests.

They run the built binaries against this machine's real kernel, so they
need root (tracepoints, -a) and a build directory (SONDE_BUILD, default
build/ at the top of the tree).
"""
import os
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("SONDE_BUILD", os.path.join(TOP, "build"))


def sonde_path():
    return os.path.join(BUILD, "src", "cli", "sonde")


def workload(name):
    """Path of a built test workload from tests/workloads."""
    return os.path.join(BUILD, "tests", "workloads", name)


def perf_aborted(argv, p):
    """perf 6.1 here now and then aborts at the end of `perf record` while
    caching build ids ("util/build-id.c" assertion, stack smashing: see
    MACHINE.md): the peer's own crash, not a result, so the run is repeated."""
    if argv[:2] != ["perf", "record"] or p.returncode not in (-6, 134):
        return False
    err = p.stderr if isinstance(p.stderr, str) else (p.stderr or b"").decode(errors="replace")
    return "build-id" in err or "stack smashing" in err


def run(argv, check=True, **kw):
    """Runs a command, capturing text output; fails the test on a bad exit when check."""
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    p = subprocess.run(argv, **kw)
    for _ in range(2):
        if not perf_aborted(argv, p):
            break
        p = subprocess.run(argv, **kw)
    if check and p.returncode != 0:
        raise AssertionError(
            f"{argv} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def sonde(*args, check=True, **kw):
    return run([sonde_path(), *args], check=check, **kw)


def tracefs_root():
    with open("/proc/mounts") as f:
        for line in f:
            dev, mnt, typ = line.split()[:3]
            if typ == "tracefs":
                return mnt
    os.makedirs("/sys/kernel/tracing", exist_ok=True)
    subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"], check=True)
    return "/sys/kernel/tracing"


@pytest.fixture(scope="session")
def tracefs():
    if os.geteuid() != 0:
        pytest.fail("integration tests need root (tracepoints, system-wide counting)")
    return tracefs_root()


@pytest.fixture(scope="session")
def vm():
    """A QEMU guest with Debian's 6.1 kernel (modules, kprobes, function and
    function_graph tracers), from tests/vm: vm.run(cmd, files=[...],
    timeout=...) -> (rc, output) boots, runs cmd as root with `sh -c` and
    powers off; vm.start(...) returns a running Guest (see
    tests/vm/sondevm.py).  Files keep their host paths in the guest.
    Skips when tests/vm/setup cannot fetch QEMU or the kernel here."""
    import sys
    sys.path.insert(0, os.path.join(TOP, "tests", "vm"))
    import sondevm
    try:
        return sondevm.VM()
    except sondevm.VMUnavailable as e:
        pytest.skip(f"VM tests: cannot set up the VM: {e}")


@pytest.fixture(scope="session")
def vm_arm64():
    """The aarch64 guest of tests/vm: Debian's arm64 6.1 kernel and
    busybox-static:arm64 under qemu-system-aarch64 -machine virt -cpu max
    (TCG); the same API as `vm`, plus .root (the guest's root on the host,
    for --symfs) and .busybox.  Skips when tests/vm/setup --arch arm64
    cannot fetch QEMU, the kernel or busybox here."""
    import sys
    sys.path.insert(0, os.path.join(TOP, "tests", "vm"))
    import sondevm
    try:
        return sondevm.VM(arch="arm64")
    except sondevm.VMUnavailable as e:
        pytest.skip(f"arm64 VM tests: cannot set up the VM: {e}")


# Several developers (and their helpers) may run integration tests on one
# machine at once.  Tests that compare the global tracefs state before and
# after (the `unchanged` fixture of test_trace.py, or any test marked
# `tracefs_exclusive`) would see each other's instances, so they take an
# exclusive lock; every other test takes it shared.  In CI there is one
# runner and the lock is always free.
LOCK_PATH = "/tmp/sonde-integration-tracefs.lock"


@pytest.fixture(autouse=True)
def _tracefs_lock(request):
    import fcntl
    exclusive = ("unchanged" in request.fixturenames or
                 request.node.get_closest_marker("tracefs_exclusive") is not None)
    fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "tracefs_exclusive: the test needs tracefs to itself (compares global state)")
