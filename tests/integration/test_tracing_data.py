"""sonde's tracing data blob, with perf as the oracle.

Before sonde can record, the blob is checked the only way that matters: a
real `perf record` capture gets its HEADER_TRACING_DATA feature section
replaced by the blob tracing_data_dump writes for the same tracepoints,
and `perf script` must decode the rewritten file exactly as the original,
without a word on stderr.  Perf finds each evsel's format by the ID in
attr.config, so the blob's formats are the only thing telling it field
names, offsets, sizes and print formats.

The perf.data rewriting (PerfData below) follows tools/perf/util/header.h:
a 104-byte header (magic, size, attr_size, attrs, data, event_types as
{offset, size} pairs, a 256-bit feature bitmap), and right after the data
section a table of {u64 offset, u64 size}, one per set bit in bit order,
pointing at the feature contents.
"""
import os
import struct

import pytest

from conftest import BUILD, run

HEADER_TRACING_DATA = 1
HEADER = struct.Struct("<8sQQ QQ QQ QQ 32s")
assert HEADER.size == 104
SECTION = struct.Struct("<QQ")


def dump_tool():
    return os.path.join(BUILD, "tests", "unit", "tracing_data_dump")


class PerfData:
    """A perf.data file split into what precedes the feature table and the features."""

    def __init__(self, raw):
        (magic, size, attr_size, _ao, _asz, data_off, data_size, _eo, _esz,
         bitmap) = HEADER.unpack_from(raw, 0)
        assert magic == b"PERFILE2", magic
        assert size == HEADER.size
        self.bits = [b for b in range(256) if bitmap[b // 8] >> (b % 8) & 1]
        self.table_off = data_off + data_size
        self.head = raw[:self.table_off]
        self.features = {}
        for i, bit in enumerate(self.bits):
            off, sz = SECTION.unpack_from(raw, self.table_off + i * SECTION.size)
            assert off + sz <= len(raw), (bit, off, sz, len(raw))
            self.features[bit] = raw[off:off + sz]

    def build(self):
        """The file again, features laid out after their table in bit order."""
        table, body = b"", b""
        pos = self.table_off + len(self.bits) * SECTION.size
        for bit in self.bits:
            content = self.features[bit]
            table += SECTION.pack(pos + len(body), len(content))
            body += content
        return self.head + table + body


def perf_record(tmp_path, name, events, cmd):
    out = tmp_path / f"{name}.data"
    # --no-buildid-cache: perf 6.1 here can abort at exit while caching build
    # ids (MACHINE.md); these tests read the tracing data, not the cache.
    argv = ["perf", "record", "-q", "--no-buildid-cache", "-o", str(out)]
    for e in events:
        argv += ["-e", e]
    run(argv + ["--"] + cmd)
    return out


def splice_blob(tmp_path, perf_file, events):
    """Writes a copy of @perf_file whose tracing data is sonde's; returns (path, pd, blob)."""
    blob_file = tmp_path / (perf_file.stem + ".blob")
    run([dump_tool(), str(blob_file), *events])
    blob = blob_file.read_bytes()
    pd = PerfData(perf_file.read_bytes())
    assert HEADER_TRACING_DATA in pd.features
    pd.features[HEADER_TRACING_DATA] = blob
    out = tmp_path / (perf_file.stem + ".sonde.data")
    out.write_bytes(pd.build())
    return out, pd, blob


def perf_script(path):
    p = run(["perf", "script", "-i", str(path)])
    return p.stdout, p.stderr


def test_rewrite_is_identity(tmp_path, tracefs):
    """The helper itself: rebuilding with perf's own section changes nothing perf shows."""
    orig = perf_record(tmp_path, "ident", ["syscalls:sys_enter_write"], ["true"])
    pd = PerfData(orig.read_bytes())
    again = tmp_path / "ident.again.data"
    again.write_bytes(pd.build())
    assert PerfData(again.read_bytes()).features == pd.features
    assert perf_script(again) == perf_script(orig)


def test_same_layout_as_perf(tmp_path, tracefs):
    """Up to printk_formats, sonde's blob is byte for byte perf's own for one event."""
    orig = perf_record(tmp_path, "layout", ["syscalls:sys_enter_write"], ["true"])
    _, pd, blob = splice_blob(tmp_path, orig, ["syscalls:sys_enter_write"])
    theirs = PerfData(orig.read_bytes()).features[HEADER_TRACING_DATA]
    # kallsyms (u32 0 in both) is followed by printk_formats, which may change
    # between the two reads; compare everything before it.
    fmt_end = blob.index(b"print fmt:")
    cut = blob.index(b"\n", fmt_end) + 1 + 4
    assert blob[:cut] == theirs[:cut]
    assert struct.unpack_from("<I", blob, cut - 4)[0] == 0


def test_sys_enter_write(tmp_path, tracefs):
    sizes = [1234, 4321, 77]
    prog = ("import os\nfd = os.open('/dev/null', os.O_WRONLY)\n"
            + "".join(f"os.write(fd, b'x' * {n})\n" for n in sizes))
    orig = perf_record(tmp_path, "write", ["syscalls:sys_enter_write"],
                       ["python3", "-c", prog])
    rewritten, _, _ = splice_blob(tmp_path, orig, ["syscalls:sys_enter_write"])

    want_out, want_err = perf_script(orig)
    got_out, got_err = perf_script(rewritten)
    assert got_err == "" and want_err == ""
    assert got_out == want_out
    for n in sizes:
        assert f"count: 0x{n:08x}" in got_out, got_out


def test_sched_switch(tmp_path, tracefs):
    events = ["sched:sched_switch", "sched:sched_wakeup", "syscalls:sys_enter_write"]
    orig = perf_record(tmp_path, "switch", events, ["sh", "-c", "sleep 0.05; echo hi >/dev/null"])
    # The dump tool gets duplicates and another order: the blob groups and dedups.
    rewritten, _, blob = splice_blob(
        tmp_path, orig,
        ["sched:sched_wakeup", "syscalls:sys_enter_write", "sched:sched_switch",
         "sched:sched_wakeup"])
    assert blob.count(b"name: sched_wakeup\n") == 1

    want_out, want_err = perf_script(orig)
    got_out, got_err = perf_script(rewritten)
    assert got_err == "" and want_err == ""
    assert got_out == want_out
    switches = [ln for ln in got_out.splitlines() if "sched:sched_switch:" in ln]
    assert switches, got_out
    for ln in switches:
        assert "prev_comm=" in ln and "next_comm=" in ln and " ==> " in ln, ln
    # sleep blocks: a symbolic prev_state, decoded through __print_flags
    assert any("prev_state=S" in ln for ln in switches), switches
    assert any("sched:sched_wakeup:" in ln and "comm=" in ln for ln in got_out.splitlines())


def test_ftrace_event_and_missing(tmp_path, tracefs):
    """An ftrace-system event goes to its own section; a missing one fails with its name."""
    blob_file = tmp_path / "x.blob"
    run([dump_tool(), str(blob_file), "ftrace:print", "sched:sched_switch"])
    blob = blob_file.read_bytes()
    # the ftrace section (u32 1 + u64 size + format) comes right after header_event
    he = blob.index(b"header_event\0") + 13
    he_size = struct.unpack_from("<Q", blob, he)[0]
    at = he + 8 + he_size
    assert struct.unpack_from("<I", blob, at)[0] == 1
    size = struct.unpack_from("<Q", blob, at + 4)[0]
    assert blob[at + 12:at + 12 + size].startswith(b"name: print\n")
    assert struct.unpack_from("<I", blob, at + 12 + size)[0] == 1  # one system
    assert blob[at + 16 + size:].startswith(b"sched\0")

    p = run([dump_tool(), str(blob_file), "sched:no_such_event"], check=False)
    assert p.returncode == 1
    assert "sched:no_such_event" in p.stderr
