"""Boots Debian's kernel in QEMU (TCG) with a busybox initramfs and runs one
command in it as root.  Used by tests/vm/run (command line) and by the
pytest fixture `vm` in tests/integration/conftest.py.

The guest is the Debian bookworm kernel that tests/vm/setup caches: it has
loadable modules, kprobes and the function/function_graph tracers that the
host kernel lacks.  VM(arch="arm64") boots the arm64 one instead under
qemu-system-aarch64 (-machine virt -cpu max, TCG), with Debian's arm64
busybox-static (extracted by setup into KDIR/root, the root to give
--symfs on the host).  The initramfs is two gzip'd cpio archives concatenated
(the kernel unpacks both):

  base   busybox-static and its applet links, /init, the chosen modules
         with a filtered modules.dep; cached, keyed by a hash of its content
  run    the requested files (with the shared libraries ELF files need,
         found with ldd), /run/cmd and /run/vm.env; built for each boot

/init mounts proc, sysfs, devtmpfs, tracefs and debugfs, brings up
eth0 (virtio-net, 10.0.2.15/24) when networking is asked for, prints a
begin marker, runs `sh -c CMD` with stdout and stderr on the serial console,
prints an end marker with the exit status and powers off.  The host reads
the serial console, takes the text between the markers and the status, and
kills QEMU on a timeout.
"""
import gzip
import hashlib
import io
import os
import secrets
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SETUP = os.path.join(HERE, "setup")
SKIP_STATUS = 77            # tests/vm/setup: cannot be set up from here
BUSYBOX = "/bin/busybox"
# Always in the base image: networking (virtio-net) and one small module
# for module tests.  Extra ones come from modules=.
DEFAULT_MODULES = ("virtio_pci", "virtio_net", "dummy")
BASE_FORMAT = "4"           # bump when the base image's layout changes

INIT = r"""#!/bin/sh
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb SONDE_VM=1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# /tmp stays on the initramfs (already RAM): a tmpfs there would hide the
# files copied in under /tmp paths (a checkout in /tmp).
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
# Kernel messages would land in the middle of the command's output.
echo 1 > /proc/sys/kernel/printk
ip link set lo up
. /run/vm.env
if [ "$SONDE_VM_NET" = 1 ]; then
	modprobe virtio_pci
	modprobe virtio_net
	i=0
	while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
	ip addr add 10.0.2.15/24 dev eth0
	ip link set eth0 up
	ip route add default via 10.0.2.2
fi
read up _ < /proc/uptime
cd /
echo "@@SONDE-VM-BEGIN $SONDE_VM_NONCE uptime=$up@@"
sh -c "$(cat /run/cmd)" </dev/null 2>&1
rc=$?
echo "@@SONDE-VM-END $SONDE_VM_NONCE rc=$rc@@"
sync
poweroff -f
"""


class VMError(Exception):
    """The VM did not run the command to its end; .log holds the console."""

    def __init__(self, msg, log=""):
        super().__init__(msg)
        self.log = log

    def __str__(self):
        tail = self.log[-3000:]
        return "%s; serial console%s:\n%s" % (
            self.args[0], " (last 3000 characters)" if len(self.log) > 3000 else "", tail)


class VMTimeout(VMError):
    pass


class VMUnavailable(Exception):
    """tests/vm/setup says the VM cannot be set up here (tests skip)."""


# --- cpio (newc) ---------------------------------------------------------

class Cpio:
    """A newc cpio archive built in memory; parents are added as needed."""

    def __init__(self):
        self.buf = io.BytesIO()
        self.dirs = set()
        self.ino = 1

    def _entry(self, name, mode, data=b""):
        name = name.lstrip("/")
        nb = name.encode() + b"\0"
        hdr = "070701" + "".join("%08X" % v for v in (
            self.ino, mode, 0, 0, 2 if stat.S_ISDIR(mode) else 1, 0,
            len(data), 0, 0, 0, 0, len(nb), 0))
        self.ino += 1
        self.buf.write(hdr.encode() + nb)
        self.buf.write(b"\0" * (-(110 + len(nb)) % 4))
        self.buf.write(data)
        self.buf.write(b"\0" * (-len(data) % 4))

    def dir(self, path):
        path = "/" + path.strip("/")
        if path == "/" or path in self.dirs:
            return
        self.dir(os.path.dirname(path))
        self.dirs.add(path)
        self._entry(path, stat.S_IFDIR | 0o755)

    def file(self, path, data, mode=0o644):
        self.dir(os.path.dirname(path))
        self._entry(path, stat.S_IFREG | mode, data)

    def symlink(self, path, target):
        self.dir(os.path.dirname(path))
        self._entry(path, stat.S_IFLNK | 0o777, target.encode())

    def gzip(self, level=6):
        self._entry("TRAILER!!!", 0)
        return gzip.compress(self.buf.getvalue(), compresslevel=level, mtime=0)


# --- files and their libraries -------------------------------------------

def _is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def shared_libs(path):
    """Absolute paths of the shared libraries (and loader) an ELF file needs."""
    p = subprocess.run(["ldd", path], capture_output=True, text=True)
    if p.returncode != 0:
        return []           # static, or not an executable/library
    libs = []
    for line in p.stdout.splitlines():
        parts = line.split()
        if "=>" in parts:
            i = parts.index("=>")
            if i + 1 < len(parts) and parts[i + 1].startswith("/"):
                libs.append(parts[i + 1])
        elif parts and parts[0].startswith("/"):
            libs.append(parts[0])
    return libs


def parse_file_spec(spec):
    """'HOST[:GUEST]' or (host, guest) -> (abs host, guest); GUEST defaults
    to the host's absolute path, so tests can use the same paths inside."""
    if isinstance(spec, (tuple, list)):
        host, guest = spec
    elif os.path.exists(spec) or ":" not in spec:
        host, guest = spec, None
    else:
        host, guest = spec.rsplit(":", 1)
    host = os.path.abspath(host)
    return host, guest or host


def add_files(arc, specs):
    """Adds files/directories (recursively) and their shared libraries."""
    libs = set()
    added = set()
    for spec in specs:
        host, guest = parse_file_spec(spec)
        if not os.path.exists(host):
            raise FileNotFoundError(host)
        if os.path.isdir(host):
            walk = []
            for root, _dirs, names in os.walk(host):
                arc.dir(os.path.join(guest, os.path.relpath(root, host)))
                for n in sorted(names):
                    h = os.path.join(root, n)
                    walk.append((h, os.path.join(guest, os.path.relpath(h, host))))
        else:
            walk = [(host, guest)]
        for h, g in walk:
            if os.path.islink(h) and not os.path.exists(h):
                continue
            st = os.stat(h)
            if not stat.S_ISREG(st.st_mode):
                continue
            with open(h, "rb") as f:
                arc.file(g, f.read(), st.st_mode & 0o7777)
            added.add(os.path.normpath(g))
            if _is_elf(h):
                libs.update(shared_libs(h))
    for lib in sorted(libs):
        if os.path.normpath(lib) in added:
            continue
        with open(os.path.realpath(lib), "rb") as f:
            arc.file(lib, f.read(), 0o755)
        added.add(lib)


# --- the kernel and the base image ---------------------------------------

def setup(refresh=False, arch="amd64"):
    """Runs tests/vm/setup; returns the kernel's cache directory.
    Raises VMUnavailable (skip) or VMError (fail) with setup's reason."""
    argv = [SETUP, "--print-dir", "--arch", arch] + (["--refresh"] if refresh else [])
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode == 0:
        return p.stdout.strip().splitlines()[-1]
    said = [l for l in p.stderr.splitlines() if l.startswith("vm-setup: ")]
    reason = (said[-1][len("vm-setup: "):] if said else
              p.stderr.strip() or "exit %d" % p.returncode)
    if p.returncode == SKIP_STATUS:
        raise VMUnavailable(reason)
    raise VMError("tests/vm/setup failed: " + reason)


def _module_closure(kdir, names):
    deps = {}
    with open(os.path.join(kdir, "modules", "modules.dep")) as f:
        for line in f:
            path, _, rest = line.partition(":")
            name = os.path.basename(path).split(".ko")[0].replace("-", "_")
            deps[name] = (path, rest.split())
    byp = {p: n for n, (p, _) in deps.items()}
    want, todo = set(), [n.replace("-", "_") for n in names]
    while todo:
        n = todo.pop()
        if n in want:
            continue
        if n not in deps:
            raise VMError("no module %s in %s" % (n, kdir))
        want.add(n)
        todo.extend(byp[p] for p in deps[n][1])
    return sorted(deps[n][0] for n in want), deps


def guest_busybox(kdir):
    """The guest's busybox: the kernel directory's own (arm64: setup
    extracts busybox-static:arm64 into KDIR/root), else the host's."""
    own = os.path.join(kdir, "root", "bin", "busybox")
    return own if os.path.exists(own) else BUSYBOX


def base_image(kdir, modules=()):
    """Path of the cached base initramfs for this kernel and module set."""
    rel = open(os.path.join(kdir, "release")).read().strip()
    paths, deps = _module_closure(kdir, list(DEFAULT_MODULES) + list(modules))
    mdir = os.path.join(kdir, "modules")
    h = hashlib.sha256()
    h.update(BASE_FORMAT.encode() + rel.encode() + INIT.encode())
    with open(guest_busybox(kdir), "rb") as f:
        bb = f.read()
    h.update(bb)
    blobs = {}
    for p in paths:
        with open(os.path.join(mdir, p), "rb") as f:
            blobs[p] = f.read()
        h.update(p.encode() + hashlib.sha256(blobs[p]).digest())
    out = os.path.join(kdir, "initramfs", h.hexdigest()[:16] + ".cpio.gz")
    if os.path.exists(out):
        return out

    arc = Cpio()
    for d in ("proc", "sys", "dev", "tmp", "run", "root", "etc", "mnt"):
        arc.dir(d)
    arc.file("/bin/busybox", bb, 0o755)
    # The applet list from the host's busybox (the same Debian release as
    # an arm64 guest's, which the host may not be able to run).
    lst = subprocess.run([BUSYBOX, "--list-full"], capture_output=True,
                         text=True, check=True).stdout.split()
    for app in lst:
        if app != "bin/busybox":
            arc.symlink("/" + app, "/bin/busybox")
    arc.file("/init", INIT.encode(), 0o755)
    arc.file("/etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n")
    arc.file("/etc/group", b"root:x:0:\n")
    guest_m = "/lib/modules/" + rel
    byp = {p: n for n, (p, _) in deps.items()}
    dep_lines = []
    for p in paths:
        arc.file(os.path.join(guest_m, p), blobs[p])
        dep_lines.append("%s: %s\n" % (p, " ".join(deps[byp[p]][1])))
    arc.file(guest_m + "/modules.dep", "".join(dep_lines).encode())
    # The kernel's config where tools look for it (sonde doctor does).
    with open(os.path.join(kdir, "config"), "rb") as f:
        arc.file("/boot/config-" + rel, f.read())
    for extra in ("modules.builtin", "modules.order"):
        src = os.path.join(mdir, extra)
        if os.path.exists(src):
            with open(src, "rb") as f:
                arc.file(os.path.join(guest_m, extra), f.read())
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = out + ".%d.tmp" % os.getpid()
    with open(tmp, "wb") as f:
        f.write(arc.gzip())
    os.replace(tmp, out)
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- a running guest -----------------------------------------------------

class Guest:
    """One QEMU process running one command; see VM.start()."""

    def __init__(self, argv, nonce, tmpdir, timeout, host_ports):
        self.nonce = nonce
        self.timeout = timeout
        self.host_ports = host_ports   # {guest port: host port on 127.0.0.1}
        self.t0 = time.monotonic()
        self.boot_seconds = None       # host time from QEMU start to the command
        self.guest_uptime = None       # guest's /proc/uptime when it started
        self._tmpdir = tmpdir
        self._raw = bytearray()
        self._cv = threading.Condition()
        self._eof = False
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        while True:
            chunk = self.proc.stdout.read1(65536)
            with self._cv:
                if not chunk:
                    self._eof = True
                    self._cv.notify_all()
                    return
                self._raw += chunk
                if self.boot_seconds is None and self._begin() is not None:
                    self.boot_seconds = time.monotonic() - self.t0
                self._cv.notify_all()

    def log(self):
        """The whole serial console so far (text, \\r\\n made \\n)."""
        return self._raw.decode("utf-8", "replace").replace("\r\n", "\n")

    def _begin(self):
        tag = ("@@SONDE-VM-BEGIN %s uptime=" % self.nonce).encode()
        i = self._raw.find(tag)
        if i < 0:
            return None
        j = self._raw.find(b"\n", i)
        if j < 0:
            return None
        if self.guest_uptime is None:
            try:
                self.guest_uptime = float(self._raw[i + len(tag):j].split(b"@@")[0])
            except ValueError:
                pass
        return j + 1

    def _end(self):
        tag = ("@@SONDE-VM-END %s rc=" % self.nonce).encode()
        i = self._raw.find(tag)
        if i < 0:
            return None
        j = self._raw.find(b"@@", i + len(tag))
        if j < 0:
            return None
        return i, int(self._raw[i + len(tag):j])

    def output(self):
        """The command's output so far (between the markers)."""
        with self._cv:
            b = self._begin()
            if b is None:
                return ""
            e = self._end()
            raw = self._raw[b:e[0] if e else len(self._raw)]
        return raw.decode("utf-8", "replace").replace("\r\n", "\n")

    def _deadline(self, timeout):
        if timeout is None:            # the whole run's budget, from boot
            return self.t0 + self.timeout
        return time.monotonic() + timeout

    def wait_booted(self, timeout):
        """Waits until the command has started; False on timeout or death."""
        end = time.monotonic() + timeout
        with self._cv:
            while self.boot_seconds is None and not self._eof:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._cv.wait(min(left, 1.0))
            return self.boot_seconds is not None

    def wait_for(self, text, timeout=None):
        """Waits until the command's output holds text; returns the output."""
        end = self._deadline(timeout)
        while True:
            out = self.output()
            if text in out:
                return out
            with self._cv:
                if self._eof or self._end():
                    raise VMError("command ended without printing %r" % text, self.log())
                left = end - time.monotonic()
                if left <= 0:
                    raise VMTimeout("no %r within the timeout" % text, self.log())
                self._cv.wait(min(left, 1.0))

    def wait(self, timeout=None):
        """Waits for the command's end; returns (rc, output).  Kills QEMU and
        raises VMTimeout on the timeout, VMError if the guest died first."""
        end = self._deadline(timeout)
        try:
            with self._cv:
                while not self._end() and not self._eof:
                    left = end - time.monotonic()
                    if left <= 0:
                        break
                    self._cv.wait(min(left, 1.0))
                done = self._end()
                eof = self._eof
            if not done:
                self.kill()
                why = ("guest stopped before the command ended" if eof else
                       "timed out after %.0f s" % (time.monotonic() - self.t0))
                raise (VMError if eof else VMTimeout)(why, self.log())
            rc = done[1]
            out = self.output()
            try:                        # /init powers off right away
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
            return rc, out
        finally:
            self.kill()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=5)
        if self._tmpdir:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()


class VM:
    """Boots the cached Debian kernel; one command per boot.  arch: "amd64"
    (qemu-system-x86_64, q35) or "arm64" (qemu-system-aarch64, virt)."""

    def __init__(self, kdir=None, mem=512, smp=2, arch="amd64"):
        self.arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(arch, arch)
        if self.arch not in ("amd64", "arm64"):
            raise ValueError("unsupported arch %r" % arch)
        self.kdir = kdir or setup(arch=self.arch)
        self.release = open(os.path.join(self.kdir, "release")).read().strip()
        self.mem = mem
        if self.arch == "arm64":
            self.kernel = os.path.join(self.kdir, "Image")
        else:
            # The ELF vmlinux boots through PVH, ~3 s sooner than vmlinuz.
            self.kernel = os.path.join(self.kdir, "vmlinux")
            if not os.path.exists(self.kernel):
                self.kernel = os.path.join(self.kdir, "vmlinuz")
        # The guest's root on the host for --symfs (arm64: busybox's).
        self.root = os.path.join(self.kdir, "root")
        self.busybox = guest_busybox(self.kdir)
        self.smp = smp
        self.last_boot_seconds = None

    def start(self, cmd, files=(), timeout=300, net=False, fwd=(), modules=(),
              append="", boot_timeout=180, boot_tries=2):
        """Boots and starts cmd (a shell string, or an argv list) in the
        guest; returns the Guest once cmd has started.  fwd: (host port,
        guest port) pairs (host port 0 picks a free one) forwarded from
        127.0.0.1; implies net.  A guest that does not reach the command in
        boot_timeout seconds is killed and booted again (boot_tries in all):
        booting has no side effects, and a rare stuck boot must not fail a
        test.  timeout counts from the last boot's start."""
        for attempt in range(1, boot_tries + 1):
            g = self._start_once(cmd, files, timeout, net, fwd, modules, append)
            if g.wait_booted(min(boot_timeout, timeout)):
                return g
            log = g.log()
            g.kill()
            if attempt == boot_tries:
                raise VMTimeout("guest did not reach the command in %d s (%d tries)"
                                % (boot_timeout, boot_tries), log)
            print("sondevm: guest did not reach the command in %d s; booting again; "
                  "its console ended:\n%s" % (boot_timeout, log[-1500:]), file=sys.stderr)

    def _start_once(self, cmd, files, timeout, net, fwd, modules, append):
        if not isinstance(cmd, str):
            cmd = shlex.join(cmd)
        base = base_image(self.kdir, modules)
        tmpdir = tempfile.mkdtemp(prefix="sonde-vm-")
        try:
            nonce = secrets.token_hex(8)
            arc = Cpio()
            add_files(arc, files)
            fwd = [(hp or free_port(), gp) for hp, gp in fwd]
            net = bool(net or fwd)
            arc.file("/run/cmd", cmd.encode())
            arc.file("/run/vm.env", ("SONDE_VM_NONCE=%s\nSONDE_VM_NET=%d\n"
                                     % (nonce, net)).encode())
            initrd = os.path.join(tmpdir, "initrd")
            with open(initrd, "wb") as f, open(base, "rb") as b:
                shutil.copyfileobj(b, f)
                f.write(arc.gzip(level=1))
            if self.arch == "arm64":
                # -cpu max emulates the PMU (armv8_pmuv3); pauth-impdef: a
                # cheap pointer-authentication hash instead of QARMA,
                # which costs TCG a lot on every function return.
                argv = [
                    "qemu-system-aarch64", "-machine", "virt", "-accel", "tcg",
                    "-cpu", "max,pauth-impdef=on", "-m", str(self.mem),
                    "-smp", str(self.smp), "-nographic", "-no-reboot",
                    "-kernel", self.kernel,
                    "-initrd", initrd,
                    "-append", ("console=ttyAMA0 quiet panic=-1 oops=panic "
                                "mitigations=off " + append).strip(),
                ]
            else:
                argv = [
                    "qemu-system-x86_64", "-machine", "q35", "-accel", "tcg",
                    "-cpu", "max", "-m", str(self.mem), "-smp", str(self.smp),
                    "-nographic", "-no-reboot",
                    "-kernel", self.kernel,
                    "-initrd", initrd,
                    "-append", ("console=ttyS0 quiet panic=-1 oops=panic "
                                "mitigations=off tsc=reliable " + append).strip(),
                ]
            if net:
                # restrict=on: the guest reaches nothing but the forwards.
                nd = "user,id=n0,restrict=on" + "".join(
                    ",hostfwd=tcp:127.0.0.1:%d-:%d" % p for p in fwd)
                argv += ["-netdev", nd, "-device", "virtio-net-pci,netdev=n0"]
            else:
                argv += ["-nic", "none"]
            return Guest(argv, nonce, tmpdir, timeout, dict((g, h) for h, g in fwd))
        except BaseException:
            shutil.rmtree(tmpdir, ignore_errors=True)
            raise

    def run(self, cmd, files=(), timeout=300, **kw):
        """Boots, runs cmd, powers off; returns (rc, output)."""
        g = self.start(cmd, files=files, timeout=timeout, **kw)
        try:
            return g.wait()
        finally:
            self.last_boot_seconds = g.boot_seconds
            self.last_guest_uptime = g.guest_uptime
