"""The documentation is kept true to the program: every command that
`sonde --help` lists is in sonde(1), has its own man page, and answers
--help with its usage."""
import os
import re

from conftest import TOP, sonde

DOCS = os.path.join(TOP, "docs")


def commands():
    text = sonde("--help").stdout
    block = text[text.index("Commands:"):text.index("Run 'sonde COMMAND")]
    cmds = re.findall(r"^\s{2,}([a-z][a-z-]*)\s{2,}\S", block, re.M)
    assert len(cmds) >= 9, text  # stat record report script sched annotate trace list doctor
    return cmds


def test_every_command_is_documented():
    with open(os.path.join(DOCS, "sonde.1")) as f:
        page = f.read()
    section = page[page.index(".SH COMMANDS"):page.index(".SH", page.index(".SH COMMANDS") + 1)]
    listed = re.findall(r"^\.TP\n\.B (\S+)$", section, re.M)
    assert listed == commands(), (listed, commands())
    for cmd in listed:
        assert f".BR sonde-{cmd} (1)" in section, cmd
        assert os.path.exists(os.path.join(DOCS, f"sonde-{cmd}.1")), cmd


def test_every_command_has_help():
    for cmd in commands():
        p = sonde(cmd, "--help", check=False)
        assert p.returncode == 0, (cmd, p.returncode, p.stderr)
        assert p.stdout.startswith(f"usage: sonde {cmd}"), (cmd, p.stdout[:200])
