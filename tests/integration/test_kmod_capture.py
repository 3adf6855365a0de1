"""Samples inside a kernel module, in a capture made the way a target's is.

This machine's kernel loads no modules, so the capture comes from
tests/unit/kmod_capture_gen over the real tests/fixtures/kmod/sonde_chardev.ko
(built by meson against Debian's linux-headers): its sections laid out as
the kernel loads them, the MMAPs and the modules feature made by sonde's
own synthesizers over a fake /proc and /sys, and 1010 samples at known
addresses.  Checked here:

  - perf opens the capture and attributes the samples to the DSOs
    ([sonde_chardev] 1000, [kernel.kallsyms] 10); perf cannot resolve the
    module's functions without the .ko at its load path, so nothing more
    is asked of it;
  - the modules feature text has the recorder's format and the layout;
  - the expectation JSON (symbol, innermost function, file:line of every
    sampled address, computed by the generator with libdwfl) agrees with
    eu-addr2line run on the .ko, the oracle.

expected_report() is what `sonde report` on this capture must show.
"""
import collections
import json
import os
import re
import shutil
import tempfile

import pytest

from conftest import BUILD, run

PERF = shutil.which("perf")
ADDR2LINE = shutil.which("eu-addr2line")
KO = os.path.join(BUILD, "tests", "fixtures", "sonde_chardev.ko")
GEN = os.path.join(BUILD, "tests", "unit", "kmod_capture_gen")
BASE = 0xffffffffc0a00000

pytestmark = [
    pytest.mark.skipif(not os.path.exists(KO),
                       reason="no sonde_chardev.ko: kernel headers not installed when meson "
                              "configured (scripts/install-deps installs linux-headers-amd64)"),
    pytest.mark.skipif(not os.path.exists(GEN), reason="kmod_capture_gen not built"),
]


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    """Generates the capture once: (perf.data path, expectation dict)."""
    out = str(tmp_path_factory.mktemp("kmod") / "perf.data")
    run([GEN, KO, hex(BASE), out])
    with open(out + ".json") as f:
        return out, json.load(f)


# ---- what `sonde report` must show ---------------------------------------

def expected_report(exp=None):
    """EXPECTED REPORT of the kmod capture, for `sonde report` tests.

    Percent of all samples (1010, equal periods) per sort key:
      "dso":      "[sonde_chardev]" / "[kernel.kallsyms]"
      "sym":      ELF symbol (perf's --sort sym): sonde_chardev_mix ~59.4,
                  sonde_chardev_write ~29.7, sonde_chardev_ioctl ~9.9, and
                  the kernel functions (vfs_write, ...)
      "function": innermost function, inlines included (fold_byte, ...)
      "srcline":  "sonde_chardev.c:42" style (basename:line), module only
    @exp is the generator's JSON (read from a fresh capture when None).
    Values are rounded to 2 decimals.
    """
    if exp is None:
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "perf.data")
            run([GEN, KO, hex(BASE), out])
            with open(out + ".json") as f:
                exp = json.load(f)
    total = exp["total_samples"]
    keys = {"dso": collections.Counter(), "sym": collections.Counter(),
            "function": collections.Counter(), "srcline": collections.Counter()}
    for s in exp["samples"]:
        keys["dso"][s["dso"]] += s["count"]
        keys["sym"][s["symbol"]] += s["count"]
        if s["dso"] == "[sonde_chardev]":
            keys["function"][s["function"]] += s["count"]
            keys["srcline"][f'{os.path.basename(s["file"])}:{s["line"]}'] += s["count"]
    return {k: {name: round(100.0 * n / total, 2) for name, n in c.items()}
            for k, c in keys.items()}


# ---- the capture itself ---------------------------------------------------

def test_expected_distribution(capture):
    _, exp = capture
    rep = expected_report(exp)
    assert exp["total_samples"] == 1010
    assert rep["sym"]["sonde_chardev_mix"] == pytest.approx(59.41, abs=0.01)
    assert rep["sym"]["sonde_chardev_write"] == pytest.approx(29.70, abs=0.01)
    assert rep["sym"]["sonde_chardev_ioctl"] == pytest.approx(9.90, abs=0.01)
    # the inlined step of the hot loop is the hottest function and line
    assert max(rep["function"], key=rep["function"].get) == "fold_byte"
    assert max(rep["srcline"], key=rep["srcline"].get).startswith("sonde_chardev.c:4")


def test_modules_feature_format(capture):
    """Line 1 "NAME 0xBASE SIZE PATH", then "\\t.SECTION 0xADDR", sorted."""
    _, exp = capture
    lines = exp["modules_feature"].splitlines()
    assert lines[0] == f'sonde_chardev {hex(BASE)} {exp["size"]} [sonde_chardev]'
    secs = {}
    for l in lines[1:]:
        m = re.fullmatch(r"\t(\S+) (0x[0-9a-f]+)", l)
        assert m, l
        secs[m.group(1)] = int(m.group(2), 16)
    assert list(secs) == sorted(secs)
    assert secs == {k: int(v, 16) for k, v in exp["sections"].items()}
    assert secs[".text"] == BASE
    assert ".modinfo" not in secs and "__versions" not in secs
    # text | rodata | data, each page-aligned; init sections outside the core
    core_end = BASE + exp["size"]
    for name, addr in secs.items():
        if name.startswith(".init"):
            assert addr >= core_end
        else:
            assert BASE <= addr < core_end, name
    assert secs[".rodata"] % 4096 == 0 or secs[".note.gnu.build-id"] % 4096 == 0
    assert secs[".data"] % 4096 == 0


@pytest.mark.skipif(PERF is None, reason="perf is not installed")
def test_perf_dso_attribution(capture):
    path, exp = capture
    p = run([PERF, "report", "-i", path, "--stdio", "--sort", "dso"])
    got = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(\S+)\s*$", line)
        if m:
            got[m.group(2)] = float(m.group(1))
    want = expected_report(exp)["dso"]
    assert got.keys() == want.keys(), p.stdout
    for dso, pct in want.items():
        assert got[dso] == pytest.approx(pct, abs=0.01), p.stdout
    assert "Samples: 1K of event 'cpu-clock'" in p.stdout
    h = run([PERF, "report", "-i", path, "--header-only"]).stdout
    assert f'# os release : {exp["osrelease"]}' in h
    assert "# arch : x86_64" in h


@pytest.mark.skipif(PERF is None, reason="perf is not installed")
def test_perf_samples_at_addresses(capture):
    """perf script sees every sample at the address the expectation names."""
    path, exp = capture
    p = run([PERF, "script", "-i", path, "-F", "ip"])
    got = collections.Counter(int(l.strip(), 16) for l in p.stdout.splitlines() if l.strip())
    want = {int(s["addr"], 16): s["count"] for s in exp["samples"]}
    assert got == want


@pytest.mark.skipif(ADDR2LINE is None, reason="eu-addr2line (elfutils) is not installed")
def test_expectation_matches_eu_addr2line(capture):
    _, exp = capture
    mod = [s for s in exp["samples"] if s["dso"] == "[sonde_chardev]"]
    assert len(mod) > 30
    offs = [s["offset"] for s in mod]
    # -S: symbol+offset; -f: innermost function ("fold_byte inlined at ... in
    # sonde_chardev_mix"); both print file:line:column on the next line.
    sym = run([ADDR2LINE, "-S", "-e", KO, "--section=.text", *offs]).stdout.splitlines()
    fn = run([ADDR2LINE, "-f", "-e", KO, "--section=.text", *offs]).stdout.splitlines()
    assert len(sym) == len(fn) == 2 * len(mod)
    for i, s in enumerate(mod):
        assert int(s["addr"], 16) - int(exp["sections"][".text"], 16) == int(s["offset"], 16)
        assert sym[2 * i] == f'{s["symbol"]}+{s["symoff"]}', s
        assert fn[2 * i].split()[0] == s["function"], s
        file, line = fn[2 * i + 1].split(":")[:2]
        assert (file, int(line)) == (s["file"], s["line"]), s
        assert sym[2 * i + 1] == fn[2 * i + 1]
