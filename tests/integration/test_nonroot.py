"""sonde as an unprivileged user (uid 65534) with kernel.perf_event_paranoid=2,
the default of most distributions: perf falls back to counting user space
(:u) and so must sonde; what can't be read says why instead of printing
nothing.  perf 6.1 run as the same user is the oracle."""
import json
import os
import re
import shutil
import stat
import tempfile

import pytest

from conftest import run, sonde_path, workload

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def read_sysctl(name):
    with open(f"/proc/sys/kernel/{name}") as f:
        return f.read().strip()


def write_sysctl(name, value):
    with open(f"/proc/sys/kernel/{name}", "w") as f:
        f.write(value)


@pytest.fixture(scope="module")
def paranoid2(tracefs):
    old = read_sysctl("perf_event_paranoid")
    write_sysctl("perf_event_paranoid", "2")
    try:
        yield
    finally:
        write_sysctl("perf_event_paranoid", old)


@pytest.fixture
def userdir(paranoid2):
    """A directory the unprivileged user may write."""
    d = tempfile.mkdtemp(prefix="sonde-nonroot-")
    os.chown(d, 65534, 65534)
    yield d
    shutil.rmtree(d)


def as_nobody(*argv, cwd="/", check=False):
    return run(NOBODY + list(argv), check=check, cwd=cwd)


def csv(text):
    """{event: value} from stat -x, lines."""
    out = {}
    for line in text.splitlines():
        f = line.split(",")
        if len(f) >= 3 and f[0] and not line.startswith(("#", "sonde:")):
            out[f[2]] = f[0]
    return out


def test_stat_falls_back_to_user_space_as_perf_does(userdir):
    args = ["-x,", "-e", "task-clock,page-faults", "--", workload("getppid_loop"), "200000"]
    ours = as_nobody(sonde_path(), "stat", *args)
    theirs = as_nobody("perf", "stat", *args)
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0, ours.stderr
    a, b = csv(ours.stderr), csv(theirs.stderr)
    assert sorted(a) == sorted(b) == ["page-faults:u", "task-clock:u"], (a, b)
    # The same program faults the same pages, give or take the loader.
    assert abs(int(a["page-faults:u"]) - int(b["page-faults:u"])) <= 5, (a, b)
    # Said once, with the reason and the fixes.
    said = [l for l in ours.stderr.splitlines() if "perf_event_paranoid=2" in l]
    assert len(said) == 1 and "user space only" in said[0] and "CAP_PERFMON" in said[0], \
        ours.stderr


def test_record_falls_back_to_user_space_as_perf_does(userdir):
    ours, theirs = os.path.join(userdir, "s.data"), os.path.join(userdir, "p.data")
    r = as_nobody(sonde_path(), "record", "-o", ours, "--", workload("split"), "0.3",
                  cwd=userdir)
    assert r.returncode == 0, r.stderr
    assert sum("user space only" in l for l in r.stderr.splitlines()) == 1, r.stderr
    p = as_nobody("perf", "record", "--no-buildid-cache", "-e", "cpu-clock", "-o", theirs,
                  "--", workload("split"), "0.3", cwd=userdir)
    assert p.returncode == 0, p.stderr
    for f in (ours, theirs):
        os.chown(f, 0, 0)  # perf reads files of root or of the caller only
    names = [run(["perf", "evlist", "-i", f]).stdout.split() for f in (ours, theirs)]
    assert names[0] == names[1] == ["cpu-clock:u"], names
    ev_ours = run(["perf", "evlist", "-v", "-i", ours]).stdout
    ev_theirs = run(["perf", "evlist", "-v", "-i", theirs]).stdout
    for text in (ev_ours, ev_theirs):
        assert "exclude_kernel: 1" in text and "exclude_hv: 1" in text, text
    rows = run(["perf", "report", "-i", ours, "--stdio", "--sort", "dso"]).stdout
    assert re.search(r"^\s+[\d.]+%\s+split\s*$", rows, re.M), rows
    assert "[kernel.kallsyms]" not in rows, rows


def tracefs_closed_to_others(tracefs):
    return not os.stat(tracefs).st_mode & (stat.S_IROTH | stat.S_IXOTH)


def test_list_tracepoints_says_why(tracefs, paranoid2):
    if not tracefs_closed_to_others(tracefs):
        pytest.skip(f"{tracefs} is readable by other users here")
    r = as_nobody(sonde_path(), "list", "tracepoint")
    assert r.returncode == 1 and r.stdout == "", (r.returncode, r.stdout)
    assert "Permission denied" in r.stderr and "root" in r.stderr, r.stderr
    r = as_nobody(sonde_path(), "list", "sched:*")
    assert r.returncode == 1 and "Permission denied" in r.stderr, r.stderr
    # The whole list still lists what it can, and says what it could not.
    r = as_nobody(sonde_path(), "list")
    assert r.returncode == 0 and "task-clock" in r.stdout, r.stderr
    assert re.search(r"tracepoints: not available \(.*Permission denied", r.stdout), r.stdout


def test_doctor_kallsyms_advice(paranoid2):
    if read_sysctl("kptr_restrict") != "0":
        pytest.skip("kernel.kptr_restrict is not 0 here")
    r = as_nobody(sonde_path(), "doctor", "--json")
    checks = {c["id"]: c for c in json.loads(r.stdout)}
    k = checks["kptr_restrict"]
    # kptr_restrict=0 with paranoid 2: the kernel shows zeros to users
    # (kallsyms_show_value); the fix is the paranoid level, not kptr_restrict.
    assert k["status"] == "fail", k
    assert "kptr_restrict=0" not in k["fix"].replace("kernel.kptr_restrict=0 shows", ""), k
    assert "sysctl -w kernel.perf_event_paranoid=1" in k["fix"], k


def test_doctor_says_tracefs_is_root_only(tracefs, paranoid2):
    if not tracefs_closed_to_others(tracefs):
        pytest.skip(f"{tracefs} is readable by other users here")
    checks = {c["id"]: c for c in json.loads(
        as_nobody(sonde_path(), "doctor", "--json").stdout)}
    # Root's doctor finds tracers and events here; the user's must not say
    # the kernel lacks them (the fix was "build the kernel with CONFIG_FTRACE=y").
    for cid in ("tracers", "trace_events"):
        c = checks[cid]
        assert c["status"] == "fail" and "Permission denied" in c["detail"], c
        assert "root" in c["fix"] and "build the kernel" not in c["fix"], c
