# SPDX-License-Identifier: MIT
"""Helpers shared by the bench/ scripts: running a command with its cost,
medians, and counting records in a perf.data file without any tool."""
import os
import re
import resource
import statistics
import struct
import subprocess
import sys
import time


def perfdata_stats(path):
    """Counts in an uncompressed perf.data file: data size, samples, lost
    (LOST records and LOST_SAMPLES records, summed separately)."""
    with open(path, 'rb') as f:
        hdr = f.read(104)
        if hdr[:8] != b'PERFILE2':
            raise ValueError(f'{path}: not a perf.data file')
        data_off, data_size = struct.unpack_from('<QQ', hdr, 40)
        if data_size == 0:
            data_size = os.path.getsize(path) - data_off
        f.seek(data_off)
        buf = f.read(data_size)
    samples = lost = lost_samples = 0
    pos, end = 0, len(buf)
    while pos + 8 <= end:
        rtype, _misc, size = struct.unpack_from('<IHH', buf, pos)
        if size < 8:
            break
        if rtype == 9:  # PERF_RECORD_SAMPLE
            samples += 1
        elif rtype == 2:  # PERF_RECORD_LOST: id, lost
            lost += struct.unpack_from('<Q', buf, pos + 16)[0]
        elif rtype == 13:  # PERF_RECORD_LOST_SAMPLES: lost
            lost_samples += struct.unpack_from('<Q', buf, pos + 8)[0]
        pos += size
    return {'data_size': data_size, 'samples': samples, 'lost': lost,
            'lost_samples': lost_samples, 'file_size': os.path.getsize(path)}


def run(argv):
    """Runs argv after flushing dirty pages (so one run's file writeback
    does not land in the next run); returns (wall seconds, CPU seconds of
    it and its children, stdout, stderr)."""
    os.sync()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if p.returncode != 0:
        sys.stderr.write(f'warning: {" ".join(argv)} exited {p.returncode}\n{p.stderr[-2000:]}')
    return wall, cpu, p.stdout, p.stderr


def last_seconds(stdout):
    """The last number of the form N.NNN a workload printed (its own timing)."""
    lines = [l for l in stdout.split() if re.fullmatch(r'\d+\.\d+', l)]
    return float(lines[-1]) if lines else float('nan')


def med(xs):
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float('nan')


def alternate(items, rep):
    """items in order on even repetitions, reversed on odd ones, so neither
    tool always runs right after the other."""
    return list(items) if rep % 2 == 0 else list(reversed(list(items)))
