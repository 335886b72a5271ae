# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the packaging: the man pages (man/), the systemd units
(contrib/systemd/), the fstab example (contrib/fstab.example) and
`make install` / `make uninstall`.

The man pages are rendered with man-db's `man -l` (and checked with groff's
warnings) and must name every option and environment variable the programs'
own --help lists; the units pass `systemd-analyze verify` with their program
paths pointed at $XPROFS_BUILD; the fstab line is parsed, and mounted for real
through mount(8) and mount.fuse3 where this runs as root with FUSE; `make
install` into a temporary DESTDIR installs exactly the user programs of
$XPROFS_BUILD, the man pages and the units, and `make uninstall` removes them.
A tool that is missing (man, groff, systemd-analyze) skips its test with the
reason.
"""
import configparser
import filecmp
import json
import os
import pathlib
import re
import shutil
import stat
import subprocess
import time

import pytest

from conftest import REPO, unmount

PROGRAMS = ["xprofs", "xprofs-mount", "xprofs-ui"]
NOT_INSTALLED = ["xprofs-synth", "xprofs-barewalk", "xprofs-timeit", "xprofs-freshmem",
                 "xprofs-model"]
SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "FILES",
            "EXAMPLES", "SEE ALSO"]
# What each page must say beyond what --help lists.
MUST_MENTION = {
    "xprofs": ["cat", "ls", "check"],
    "xprofs-mount": ["cache_mb", "max_runs", "trace_complete", "allow_other",
                     "user_allow_other", "/etc/fuse.conf", "fusermount3 -u", "summary.json",
                     "trace_viewer.json", "raw/"],
    "xprofs-ui": ["--port", "--host", "--static", "--request-timeout", "--quiet", "8791"],
}
# The exit codes each program has (src/cli/main.c, src/fs/main.c, ui-proxy/main.c).
EXIT_CODES = {"xprofs": {0, 1, 2, 3, 4}, "xprofs-mount": {0, 1}, "xprofs-ui": {0, 1, 2}}
# Settings that give a service a mount namespace of its own: a FUSE mount made
# inside one is invisible to the rest of the system.
NAMESPACING = {"ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices",
               "PrivateNetwork", "PrivateMounts", "PrivateIPC", "ProtectKernelTunables",
               "ProtectKernelModules", "ProtectKernelLogs", "ProtectControlGroups",
               "ProtectProc", "ProcSubset", "ReadOnlyPaths", "ReadWritePaths",
               "InaccessiblePaths", "ExecPaths", "NoExecPaths", "BindPaths",
               "BindReadOnlyPaths", "TemporaryFileSystem", "DynamicUser", "RootDirectory",
               "RootImage", "MountImages", "ExtensionImages", "ExtensionDirectories",
               "LogNamespace", "NetworkNamespacePath", "IPCNamespacePath"}
FALSE = {"no", "false", "off", "0", ""}


def build_programs(build):
    """The user programs the build has (xprofs-ui only where ui-proxy/ is)."""
    progs = [p for p in PROGRAMS if p != "xprofs-ui" or (REPO / "ui-proxy" / "main.c").exists()]
    for p in progs:
        if not (build / p).exists():
            pytest.fail(f"{build / p} missing: run make first")
    return progs


def plain(text):
    """Rendered man text with groff's Unicode hyphens and minus signs as '-'."""
    return text.replace("\u2010", "-").replace("\u2212", "-").replace("\u00ad", "")


def render(page, *extra):
    env = dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="")
    env.pop("MANPAGER", None)
    env.pop("PAGER", None)
    return subprocess.run(["man", *extra, "-l", str(page)], capture_output=True, text=True,
                          env=env, timeout=60)


def help_words(build, prog):
    """Options (-x, --long, -o name=) and XPROFS_* variables that `prog --help` lists;
    for xprofs-mount only its own part, before libfuse's."""
    out = subprocess.run([str(build / prog), "--help"], capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    if prog == "xprofs-mount":
        text = text.split("Unmount with:")[0]
    words = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", text))
    words |= set(re.findall(r"-o (\w+)=", text))
    words |= set(re.findall(r"\b(XPROFS_[A-Z_]+)", text))
    return words


def section(text, name):
    """Body of a top-level section of rendered man text."""
    m = re.search(r"^" + name + r"\n(.*?)(?=^\S|\Z)", text, re.M | re.S)
    assert m, f"no {name} section"
    return m.group(1)


@pytest.mark.parametrize("prog", PROGRAMS)
def test_man_page_renders_and_documents_options(prog, xprofs_build):
    if shutil.which("man") is None:
        pytest.skip("man (man-db) is not installed: apt-get install -y man-db groff-base")
    if prog not in build_programs(xprofs_build):
        pytest.skip(f"{prog} is not built here")
    page = REPO / "man" / f"{prog}.1"
    assert page.exists(), f"{page} missing"
    r = render(page, "--warnings")
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr.lower(), r.stderr
    text = plain(r.stdout)
    for name in SECTIONS:
        assert re.search(r"^" + name + r"$", text, re.M), f"{prog}.1: no {name} section"
    assert re.search(r"^\s+" + re.escape(prog) + r" - \S", section(text, "NAME"), re.M), \
        f"{prog}.1: NAME must read '{prog} - ...'"
    missing = sorted(w for w in help_words(xprofs_build, prog) | set(MUST_MENTION[prog])
                     if w not in text)
    assert not missing, f"{prog}.1 does not mention {missing}"
    codes = {int(c) for c in re.findall(r"^ {7}(\d+)\s", section(text, "EXIT STATUS"), re.M)}
    assert codes == EXIT_CODES[prog], f"{prog}.1 documents exit codes {sorted(codes)}"
    # The code of a usage error (no arguments) is documented as such.
    rc = subprocess.run([str(xprofs_build / prog)], capture_output=True, timeout=30).returncode
    usage = re.search(r"^ {7}" + str(rc) + r"\s+(.*?)(?=^ {7}\d|\Z)",
                      section(text, "EXIT STATUS"), re.M | re.S)
    assert usage and re.search(r"[Uu]sage", usage.group(1)), \
        f"{prog} exits {rc} without arguments: not documented as a usage error"
    if shutil.which("groff"):
        g = subprocess.run(["groff", "-man", "-ww", "-z", str(page)], capture_output=True,
                           text=True, timeout=60)
        assert g.returncode == 0 and g.stderr == "", g.stderr
    if shutil.which("lexgrog"):
        g = subprocess.run(["lexgrog", str(page)], capture_output=True, text=True, timeout=60)
        assert g.returncode == 0 and f'"{prog} - ' in g.stdout, g.stdout + g.stderr


def unit_files():
    units = sorted((REPO / "contrib" / "systemd").glob("*.service"))
    assert any(u.name == "xprofs@.service" for u in units), "contrib/systemd/xprofs@.service"
    return units


def parse_unit(path):
    cp = configparser.ConfigParser(strict=False, interpolation=None, delimiters=("=",),
                                   comment_prefixes=("#", ";"))
    cp.optionxform = str
    cp.read_string(path.read_text())
    return cp


def test_mount_unit_keeps_the_mount_visible():
    """The mount's unit runs xprofs-mount in the foreground, unmounts with
    fusermount3, restarts on failure, lets /dev/fuse through, and sets nothing
    that would hide its mount in a namespace of its own."""
    unit = parse_unit(REPO / "contrib" / "systemd" / "xprofs@.service")
    svc = unit["Service"]
    start = svc["ExecStart"].split()
    assert start[0].endswith("/xprofs-mount") and "-f" in start, svc["ExecStart"]
    assert re.search(r"fusermount3 -u\b", svc["ExecStop"]), svc["ExecStop"]
    assert svc.get("Restart") == "on-failure"
    assert svc.get("Type", "simple") in ("simple", "exec")
    hiding = sorted(k for k in svc if k in NAMESPACING and svc[k].strip().lower() not in FALSE)
    assert not hiding, f"these give the mount a namespace of its own: {hiding}"
    assert svc.get("MountFlags", "shared") == "shared"
    if svc.get("DevicePolicy", "auto") != "auto" or "DeviceAllow" in svc:
        assert "/dev/fuse" in svc.get("DeviceAllow", ""), "DeviceAllow=/dev/fuse rw needed"
    caps = svc.get("CapabilityBoundingSet")
    if caps is not None:
        assert "CAP_SYS_ADMIN" in caps.split(), "mount(2) needs CAP_SYS_ADMIN"
    families = svc.get("RestrictAddressFamilies")
    if families is not None:
        assert "AF_UNIX" in families.split()


def test_units_verify(xprofs_build, tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed (Debian package systemd)")
    progs = build_programs(xprofs_build)
    man1 = tmp_path / "man" / "man1"
    man1.mkdir(parents=True)
    for page in (REPO / "man").glob("*.1"):
        shutil.copy(page, man1)
    copies = []
    for unit in unit_files():
        text = unit.read_text()
        used = re.findall(r"/usr/local/bin/([\w-]+)", text)
        assert used, f"{unit.name}: no /usr/local/bin program (make install rewrites those)"
        if any(p not in progs for p in used):
            continue
        copy = tmp_path / unit.name
        copy.write_text(text.replace("/usr/local/bin/", f"{xprofs_build}/"))
        copies.append(copy)
    env = dict(os.environ, MANPATH=str(tmp_path / "man"))
    r = subprocess.run(["systemd-analyze", "verify", *map(str, copies)], capture_output=True,
                       text=True, env=env, timeout=120)
    ours = [line for line in r.stderr.splitlines()
            if "xprofs" in line or str(tmp_path) in line]
    assert r.returncode == 0 and not ours, r.stderr
    # Verification does report our mistakes (a misspelt key, a bad device right).
    bad = tmp_path / "bad"
    bad.mkdir()
    broken = bad / copies[0].name
    broken.write_text(copies[0].read_text().replace("Restart=", "Restrat=", 1))
    r = subprocess.run(["systemd-analyze", "verify", str(broken)], capture_output=True,
                       text=True, env=env, timeout=120)
    assert "Restrat" in r.stderr, r.stderr


def fstab_entries(text):
    """(fields) of the active lines, and of the commented example lines."""
    active, examples = [], []
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith("#"):
            active.append(s.split())
        elif re.match(r"#\s+/\S+\s+/\S+\s+fuse", s):
            examples.append(s.lstrip("#").split())
    return active, examples


def test_fstab_example_parses():
    active, examples = fstab_entries((REPO / "contrib" / "fstab.example").read_text())
    assert len(active) == 1, active
    assert examples, "the commented alternative lines are gone"
    for fields in active + examples:
        assert len(fields) == 6, fields
        spec, target, vfstype, opts, dump, passno = fields
        assert target.startswith("/")
        assert (dump, passno) == ("0", "0"), fields
        if vfstype == "fuse":
            prog, _, logdir = spec.partition("#")
            assert prog.endswith("xprofs-mount") and logdir.startswith("/"), spec
        else:
            assert vfstype == "fuse.xprofs-mount" and spec.startswith("/"), fields
        for opt in opts.split(","):
            name, _, value = opt.partition("=")
            if name in ("cache_mb", "max_runs"):
                assert value.isdigit(), opt
            elif name == "trace_complete":
                assert value in ("0", "1"), opt
    assert active[0][2] == "fuse.xprofs-mount"
    assert "allow_other" in active[0][3].split(",")


def test_fstab_line_mounts(xprofs_build, synth, tmp_path):
    """The example's options go through mount(8) and mount.fuse3 to
    xprofs-mount and mount the log directory (the type becomes the '#' form
    naming this build's program, as mount(8) gives helpers no PATH)."""
    if os.geteuid() != 0:
        pytest.skip("mounting from an fstab needs root")
    if not os.path.exists("/dev/fuse") or not shutil.which("fusermount3"):
        pytest.skip("FUSE not available here (/dev/fuse or fusermount3 missing)")
    if not any(os.path.exists(p) for p in ("/sbin/mount.fuse3", "/usr/sbin/mount.fuse3")):
        pytest.skip("mount.fuse3 is not installed (Debian package fuse3)")
    logdir = synth(tmp_path / "logs", "--run", "r1", "--scenario", "steps4")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    (active,), _ = fstab_entries((REPO / "contrib" / "fstab.example").read_text())
    line = f"{xprofs_build}/xprofs-mount#{logdir}  {mnt}  fuse  {active[3]}  0  0\n"
    fstab = tmp_path / "fstab"
    fstab.write_text(line)
    r = subprocess.run(["mount", "-T", str(fstab), str(mnt)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    try:
        for _ in range(100):
            if os.path.ismount(mnt):
                break
            time.sleep(0.05)
        assert os.path.ismount(mnt)
        info = [ln.split() for ln in open("/proc/self/mountinfo") if f" {mnt} " in ln]
        assert info and info[-1][info[-1].index("-") + 1] == "fuse.xprofs", info
        assert "ro" in info[-1][5].split(","), info
        assert "allow_other" in info[-1][-1].split(","), info
        assert {"README.txt", "r1"} <= set(os.listdir(mnt))
        summary = json.loads((mnt / "r1" / "summary.json").read_bytes())
        assert summary
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True, timeout=60)
        if os.path.ismount(mnt):
            unmount(mnt)
    assert not os.path.ismount(mnt)


def make_env():
    """The environment without an enclosing make's flags and jobserver."""
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "DESTDIR", "PREFIX",
              "bindir", "man1dir", "unitdir"):
        env.pop(k, None)
    return env


def tree_state(root):
    """(name, mtime) of the files at the top of the build: programs, library."""
    return {p.name: p.stat().st_mtime_ns for p in root.iterdir() if p.is_file()}


def files_under(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() or p.is_symlink())


def test_make_install_and_uninstall(xprofs_build, tmp_path):
    progs = build_programs(xprofs_build)
    dest = tmp_path / "dest"
    args = ["make", "-C", str(REPO), "--no-print-directory", f"BUILD={xprofs_build}",
            f"DESTDIR={dest}", "PREFIX=/usr"]
    before = tree_state(xprofs_build)
    r = subprocess.run(args + ["install"], capture_output=True, text=True, env=make_env(),
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert tree_state(xprofs_build) == before, "make install changed the build"
    assert not re.search(r"^(cc|gcc|clang|ar|protoc-c) ", r.stdout, re.M), r.stdout
    units = [u.name for u in unit_files()
             if all(p in progs for p in re.findall(r"/usr/local/bin/([\w-]+)", u.read_text()))]
    expected = sorted([f"usr/bin/{p}" for p in progs]
                      + [f"usr/share/man/man1/{p}.1" for p in progs]
                      + [f"usr/lib/systemd/system/{u}" for u in units])
    got = files_under(dest)
    assert not [f for f in got if os.path.basename(f) in NOT_INSTALLED], got
    assert got == expected
    for p in progs:
        f = dest / "usr" / "bin" / p
        assert stat.S_IMODE(f.stat().st_mode) == 0o755
        assert filecmp.cmp(f, xprofs_build / p, shallow=False), f"{p} differs from the build's"
        page = dest / "usr" / "share" / "man" / "man1" / f"{p}.1"
        assert stat.S_IMODE(page.stat().st_mode) == 0o644
        assert page.read_bytes() == (REPO / "man" / f"{p}.1").read_bytes()
    for u in units:
        text = (dest / "usr" / "lib" / "systemd" / "system" / u).read_text()
        assert "/usr/local/bin/" not in text and "/usr/bin/xprofs" in text, u
    r = subprocess.run(args + ["uninstall"], capture_output=True, text=True, env=make_env(),
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert files_under(dest) == [], "make uninstall left files"
