"""Strings from the machine in every JSON output: all of them go through
the one writer (src/core/json.c), so a comm with UTF-8 and a byte that is
not UTF-8 comes out the same, valid, way in report --json, report --html's
data block and script --json: UTF-8 kept, the bad byte as U+FFFD (what
Python's own decoder makes of it, errors="replace")."""
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import sonde_path, workload

# The program's name is its comm: 'b', 'é' (2 bytes), 'd', an invalid 0xff, then "name".
NAME = b"b\xc3\xa9d\xffname"
COMM = NAME.decode("utf-8", "replace")


def sonde_bytes(*args):
    p = subprocess.run([sonde_path(), *args], capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode("utf-8", "replace")
    return p.stdout


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    d = tmp_path_factory.mktemp("jsonstr")
    prog = os.path.join(os.fsencode(str(d)), NAME)
    shutil.copy(workload("fixed_work"), prog)
    out = str(d / "c.data")
    p = subprocess.run([os.fsencode(sonde_path()), b"record", b"-F", b"2000", b"-o",
                        os.fsencode(out), b"--", prog, b"50000000"], capture_output=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    return out


def test_report_json_comm(capture):
    # Strict decoding: a raw 0xff in the output fails here.
    rep = json.loads(sonde_bytes("report", "-i", capture, "--json", "--sort", "comm")
                     .decode("utf-8"))
    comms = {e["comm"] for e in rep["entries"]}
    assert COMM in comms, comms


def test_script_json_comm(capture):
    lines = sonde_bytes("script", "-i", capture, "--json").decode("utf-8").splitlines()
    comms = {json.loads(line)["comm"] for line in lines}
    assert COMM in comms, comms


def test_html_data_block_comm(capture, tmp_path):
    out = tmp_path / "r.html"
    sonde_bytes("report", "-i", capture, "--html", str(out))
    page = out.read_bytes().decode("utf-8")
    m = re.search(r'<script type="application/json" id="sonde-data">(.*?)</script>', page, re.S)
    data = json.loads(m.group(1))
    assert COMM in {t[2] for t in data["timeline"]["threads"]}
