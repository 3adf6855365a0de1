"""perf's small capture commands under sonde: evlist, buildid-list and
version, with perf as the oracle on the same files (perf's and sonde's,
tracepoints, groups, frequency and period sampling, a system-wide capture
whose objects include some without a build id)."""
import re

import pytest

from conftest import run, sonde, workload


def record(who, path, *args, cmd=None):
    cmd = cmd or [workload("fixed_work")]
    if who == "perf":
        run(["perf", "record", "-q", "--no-buildid-cache", "-o", str(path), *args, "--", *cmd])
    else:
        sonde("record", "-q", "-o", str(path), *args, "--", *cmd)


CAPTURES = {
    "freq": ["-g"],
    "tracepoints": ["-e", "sched:sched_switch,sched:sched_process_exec", "-e", "page-faults",
                    "-c", "1", "-a"],
    "group": ["-e", "{cpu-clock,task-clock}"],
    "compressed": ["-z"],
}


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    d = tmp_path_factory.mktemp("evlist")
    files = {}
    for who in ("perf", "sonde"):
        for name, args in CAPTURES.items():
            p = d / f"{who}-{name}.data"
            record(who, p, *args)
            files[who, name] = p
    return files


@pytest.mark.parametrize("who", ["perf", "sonde"])
@pytest.mark.parametrize("name", list(CAPTURES))
@pytest.mark.parametrize("opt", [[], ["-F"], ["-v"], ["-g"], ["--trace-fields"]])
def test_evlist_is_perfs(captures, who, name, opt):
    path = str(captures[who, name])
    ours = sonde("evlist", *opt, "-i", path).stdout
    theirs = run(["perf", "evlist", *opt, "-i", path]).stdout
    assert ours == theirs.replace("perf evlist", "sonde evlist")
    if name == "tracepoints":
        assert "sched:sched_switch" in ours
        if opt == ["--trace-fields"]:
            assert "sched:sched_switch: trace_fields: prev_comm,prev_pid," in ours
    if name == "group" and opt == ["-g"]:
        assert ours.splitlines()[0] == "{cpu-clock,task-clock}"
    if opt == ["-v"]:
        assert re.search(r"sample_type: IP\|TID\|TIME", ours), ours


def test_group_members_follow_their_leader(captures):
    """sonde record opens {a,b} as perf does: the member in its leader's
    group, enabled with it (no disabled or enable_on_exec of its own), and
    the file says so (GROUP_DESC), for perf report --group."""
    lines = run(["perf", "evlist", "-v", "-i", str(captures["sonde", "group"])]).stdout
    leader, member = lines.splitlines()
    assert "disabled: 1" in leader and "enable_on_exec: 1" in leader
    assert "disabled" not in member and "enable_on_exec" not in member
    rep = run(["perf", "report", "--group", "--stdio", "-i",
               str(captures["sonde", "group"])]).stdout
    assert "of events 'anon group { cpu-clock, task-clock }'" in rep


def test_evlist_group_refuses_other_details(captures):
    p = sonde("evlist", "-g", "-v", "-i", str(captures["perf", "group"]), check=False)
    assert p.returncode == 2 and "--group can't be combined" in p.stderr


@pytest.mark.parametrize("who", ["perf", "sonde"])
@pytest.mark.parametrize("name", list(CAPTURES))
@pytest.mark.parametrize("opt", [[], ["-H"]])
def test_buildid_list_is_perfs(captures, who, name, opt):
    path = str(captures[who, name])
    ours = sonde("buildid-list", *opt, "-i", path).stdout
    theirs = run(["perf", "buildid-list", *opt, "-i", path]).stdout
    # perf renames the [vdso] object after the temporary copy it reads it
    # from, when it happened to read it (/tmp/perf-vdso.so-XXXXXX): a name
    # that changes between runs; sonde keeps the capture's [vdso].
    theirs = re.sub(r"/tmp/perf-vdso\.so-\w+", "[vdso]", theirs)
    if opt:
        # -H: the same objects.  perf lists a path a second time when its
        # samples were seen through a second dso object (another device or
        # inode for the name, in a system-wide capture) and in the order of
        # its dso list; sonde lists each (id, path) once, in the table's order.
        # perf names anonymous executable memory (JIT code) /tmp/perf-PID.map
        # per process; sonde keeps the kernel's name, //anon.
        theirs = re.sub(r"/tmp/perf-\d+\.map", "//anon", theirs)
        assert sorted(set(ours.splitlines())) == sorted(set(theirs.splitlines()))
        assert len(ours.splitlines()) == len(set(ours.splitlines()))
    else:
        assert ours == theirs
    if name == "freq":
        # The program itself had samples: its id is listed, as its file has it.
        ident = run(["readelf", "-n", workload("fixed_work")]).stdout
        bid = re.search(r"Build ID: ([0-9a-f]+)", ident).group(1)
        assert f"{bid} {workload('fixed_work')}\n" in ours


def test_buildid_list_kernel():
    ours = sonde("buildid-list", "-k").stdout
    assert re.fullmatch(r"[0-9a-f]{40}\n", ours)
    assert ours == run(["perf", "buildid-list", "-k"]).stdout


def test_version():
    assert re.fullmatch(r"sonde version \d+\.\d+\.\d+\n", sonde("version").stdout)
    opts = sonde("version", "--build-options").stdout.splitlines()[1:]
    assert [re.match(r"\s+(\w+): \[ (on |OFF) \]  # ", o).group(1) for o in opts] == \
        ["libtracecmd", "zstd", "capstone"]


def test_unknown_command_suggests():
    p = sonde("evlits", check=False)
    assert p.returncode == 2
    assert "'evlits' is not a sonde command; did you mean 'evlist'?" in p.stderr


@pytest.mark.parametrize("who", ["perf", "sonde"])
@pytest.mark.parametrize("name", list(CAPTURES))
def test_header_only_is_perfs(captures, who, name):
    path = str(captures[who, name])
    ours = sonde("report", "--header-only", "-i", path).stdout
    assert ours == run(["perf", "report", "--header-only", "-i", path]).stdout
    assert ours.startswith("# ========\n# captured on    : ")
    assert "# event : name = " in ours and "# missing features: " in ours
    if name == "group":
        assert "# group: {cpu-clock,task-clock}\n" in ours
    if name == "compressed":
        assert "# compressed : Zstd, level = 1, ratio = " in ours


def test_header_of_a_clock_data_capture(tmp_path):
    """perf record -k: CLOCKID and CLOCK_DATA (the reference time) as perf prints them."""
    path = tmp_path / "k.data"
    record("perf", path, "-k", "mono")
    ours = sonde("report", "--header-only", "-i", str(path)).stdout
    assert ours == run(["perf", "report", "--header-only", "-i", str(path)]).stdout
    assert "# clockid: monotonic (1)\n" in ours and "# reference time: " in ours


def test_header_then_report(captures):
    path = str(captures["sonde", "freq"])
    out = sonde("report", "--header", "--no-children", "-i", path).stdout
    head = sonde("report", "--header-only", "-i", path).stdout
    assert out.startswith(head)
    assert "# Samples: " in out[len(head):]


def test_header_of_a_pipe_capture_is_refused(tmp_path):
    path = tmp_path / "pipe.data"
    with open(path, "wb") as f:
        run(["perf", "record", "-q", "-o", "-", "--", "true"], stdout=f,
            capture_output=False, stderr=None)
    p = sonde("report", "--header-only", "-i", str(path), check=False)
    assert p.returncode == 1 and "pipe-format capture" in p.stderr
