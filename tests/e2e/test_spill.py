"""End-to-end tests of produced files bigger than the spill threshold (64 MiB):
in the mount their full chunks go to an unlinked file in XPROFS_SPILL_DIR
(else $TMPDIR or /tmp) and are served at any offset from there, the first
readers follow the file while it is being made, and a spill directory that
cannot be used fails the read with a clear error; `xprofs cat`
needs no spill file: past 4 MiB it writes to its stdout while the file is
being produced, with bounded memory."""
import hashlib
import http.client
import json
import os
import pathlib
import random
import subprocess
import threading
import time

import pytest

from conftest import SANITIZED
from test_ui_proxy import q, start_server, stop_server

SPILL_THRESHOLD = 64 << 20
CHUNK = 2 << 20
FULL = "bench/trace_viewer.json"
SMALL = "bench/trace_viewer.json?resolution=8000"


@pytest.fixture(scope="module")
def big_profile(xprofs_build, tmp_path_factory):
    """A generated profile whose full-resolution trace is well past the
    threshold (~340 MB of JSON; ~100 MB under the sanitizers, which are slow)."""
    out = tmp_path_factory.mktemp("spill_logdir")
    size = 12 if SANITIZED else 40
    subprocess.run([str(xprofs_build / "xprofs-synth"), "--out", str(out), "--run", "bench",
                    "--size-mb", str(size), "--gpus", "4", "--seed", "42"],
                   check=True, capture_output=True, timeout=600)
    return out


@pytest.fixture(scope="module")
def cli_full(big_profile, xprofs_build, tmp_path_factory):
    """The full-resolution trace as `xprofs cat` writes it: (path, md5, size),
    what every read through the mount is compared with."""
    dest = tmp_path_factory.mktemp("cli_full") / "cli.json"
    rc, err, _ = cat_to_file(xprofs_build, big_profile, FULL, dest)
    assert rc == 0, err
    return dest, file_md5(dest), dest.stat().st_size


def cat_to_file(xprofs_build, logdir, path, dest, env=None):
    """`xprofs cat` into dest under /usr/bin/time; returns (returncode,
    stderr, peak RSS in bytes)."""
    rss_file = dest.with_suffix(".rss")
    with open(dest, "wb") as f:
        r = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(rss_file),
                            str(xprofs_build / "xprofs"), "cat", str(logdir), path],
                           stdout=f, stderr=subprocess.PIPE, env=env, timeout=600)
    return r.returncode, r.stderr.decode(errors="replace"), int(rss_file.read_text().split()[-1]) * 1024


def stream_md5(f, h=None):
    """The md5 of what is left to read in f (after what h already holds)."""
    h = h or hashlib.md5()
    for block in iter(lambda: f.read(1 << 22), b""):
        h.update(block)
    return h.hexdigest()


def file_md5(path):
    with open(path, "rb") as f:
        return stream_md5(f)


def mount_pid(mnt):
    """The pid of the xprofs-mount serving mnt."""
    for d in pathlib.Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"xprofs-mount") and str(mnt).encode() in argv:
            return int(d.name)
    raise AssertionError(f"no xprofs-mount process for {mnt}")


def test_cli_streams_with_bounded_memory(big_profile, xprofs_build, tmp_path):
    rc, err, rss_full = cat_to_file(xprofs_build, big_profile, FULL, tmp_path / "full.json")
    assert rc == 0, err
    size = (tmp_path / "full.json").stat().st_size
    assert size > SPILL_THRESHOLD + 4 * CHUNK
    with open(tmp_path / "full.json", "rb") as f:
        assert f.read(1) == b"{"
        f.seek(size - 16)
        assert f.read().rstrip().endswith(b"}")
    rc, err, rss_small = cat_to_file(xprofs_build, big_profile, SMALL, tmp_path / "small.json")
    assert rc == 0, err
    if not SANITIZED:
        # The same inputs are held for both; the full output adds at most the
        # threshold's worth of memory, not its size.
        assert rss_full - rss_small < size / 3, (rss_full, rss_small, size)


def test_cli_streams_past_4_mib(big_profile, xprofs_build, tmp_path):
    """A trace window of tens of MiB (below the mount's 64 MiB) also leaves
    `xprofs cat` while it is made: memory grows by a few output chunks, not
    by its size, and the JSON is whole."""
    rc, err, rss_small = cat_to_file(xprofs_build, big_profile, SMALL, tmp_path / "small.json")
    assert rc == 0, err
    span = json.loads((tmp_path / "small.json").read_bytes())["fullTimespan"]
    a = span[0] + (span[1] - span[0]) * 0.4
    b = a + (span[1] - span[0]) * (0.15 if SANITIZED else 0.1)
    path = f"bench/trace_viewer.json?start_time_ms={a:.6f}&end_time_ms={b:.6f}&resolution=0"
    rc, err, rss_window = cat_to_file(xprofs_build, big_profile, path, tmp_path / "window.json")
    assert rc == 0, err
    size = (tmp_path / "window.json").stat().st_size
    assert 4 * CHUNK < size < SPILL_THRESHOLD, size
    doc = json.loads((tmp_path / "window.json").read_bytes())
    assert sum(1 for e in doc["traceEvents"] if e.get("ph") == "X") > 10000
    if not SANITIZED:
        assert rss_window - rss_small < size / 2, (rss_window, rss_small, size)


def open_files(pid):
    """What the descriptors of process pid point to (those that stay open
    while we look)."""
    links = []
    for n in os.listdir(f"/proc/{pid}/fd"):
        try:
            links.append(os.readlink(f"/proc/{pid}/fd/{n}"))
        except OSError:
            continue  # closed meanwhile
    return links


def spill_files(pid, spill_dir):
    """The spill files (path, size) the mount process pid holds open in
    spill_dir, each once (the live reader holds a descriptor of its own)."""
    found = {}
    for n in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{n}")
            size = os.stat(f"/proc/{pid}/fd/{n}").st_size
        except OSError:
            continue  # closed meanwhile
        if link.startswith(str(spill_dir) + "/"):
            found[link] = size
    return sorted(found.items())


def mount_with_spill_dir(logdir, mount, tmp_path, monkeypatch):
    """Mount logdir spilling into a fresh directory: (mount point, pid of
    the mount, spill directory)."""
    spill_dir = tmp_path / "spill"
    spill_dir.mkdir()
    monkeypatch.setenv("XPROFS_SPILL_DIR", str(spill_dir))
    mnt = mount(logdir)
    return mnt, mount_pid(mnt), spill_dir


def random_reads(fd, want_fd, size, seed):
    """Compare many reads of fd at offsets around chunk boundaries, the
    threshold and the end, and at random, with the same reads of want_fd."""
    rng = random.Random(seed)
    offsets = [0, SPILL_THRESHOLD - 3, SPILL_THRESHOLD, size - 1, size - 100,
               (size // CHUNK) * CHUNK - 1, (size // CHUNK) * CHUNK]
    offsets += [k * CHUNK + rng.randrange(-50, 50) for k in range(1, size // CHUNK, 7)]
    offsets += [rng.randrange(size) for _ in range(100)]
    rng.shuffle(offsets)
    for off in offsets:
        n = rng.choice([1, 17, 4096, 200000, 3 * CHUNK])
        got = os.pread(fd, n, off)
        assert got == os.pread(want_fd, n, off), (off, n)
    assert os.pread(fd, 10, size) == b""


def test_mount_reads_spilled_file(big_profile, cli_full, tmp_path, mount, monkeypatch):
    cli_path, cli_md5, size = cli_full
    want = open(cli_path, "rb")
    mnt, pid, spill_dir = mount_with_spill_dir(big_profile, mount, tmp_path, monkeypatch)
    path = mnt / FULL

    # The first open follows the file while it is being made: reads in any
    # order wait for their bytes, from the spill file or the finished blob.
    fd = os.open(path, os.O_RDONLY)
    try:
        random_reads(fd, want.fileno(), size, 5)
    finally:
        os.close(fd)

    # Made once: later opens see its size and read the blob, whose first
    # part is in the unlinked spill file.
    fd = os.open(path, os.O_RDONLY)
    try:
        assert os.fstat(fd).st_size == size
        spilled = spill_files(pid, spill_dir)
        assert len(spilled) == 1 and spilled[0][0].endswith("(deleted)"), spilled
        assert os.listdir(spill_dir) == []
        random_reads(fd, want.fileno(), size, 6)
    finally:
        os.close(fd)
    want.close()

    r = subprocess.run(f"cat '{path}' > '{tmp_path / 'mount.json'}'", shell=True)
    assert r.returncode == 0
    assert file_md5(tmp_path / "mount.json") == cli_md5


def test_mount_streams_first_read(big_profile, cli_full, tmp_path, mount, monkeypatch):
    """A big file's first reader gets its first bytes while the rest is still
    being made; a second reader meanwhile follows the same production; when
    every reader has gone before the end, the production stops."""
    _, cli_md5, size = cli_full
    mnt, pid, spill_dir = mount_with_spill_dir(big_profile, mount, tmp_path, monkeypatch)

    with open(mnt / FULL, "rb") as f:
        head = f.read(4096)
        spilled = spill_files(pid, spill_dir)
        # Open returned once the first chunk was in the spill file, long
        # before the last one.
        assert len(spilled) == 1 and 0 < spilled[0][1] < size, (spilled, size)
        assert head.startswith(b'{"displayTimeUnit":"ns"')
        with open(mnt / FULL, "rb") as g:
            assert len(spill_files(pid, spill_dir)) == 1  # no second production
            second = stream_md5(g)
        first = stream_md5(f, hashlib.md5(head))
    assert first == cli_md5
    assert second == cli_md5
    assert (mnt / FULL).stat().st_size == size

    # A reader that leaves early: its production stops (a finished one would
    # keep its spill file open in the blob cache) and is no error.
    other = "bench/trace_viewer.json?resolution=0"
    with open(mnt / other, "rb") as f:
        assert f.read(4096) == head
    deadline = time.time() + 60
    while len(spill_files(pid, spill_dir)) > 1 and time.time() < deadline:
        time.sleep(0.05)
    assert len(spill_files(pid, spill_dir)) == 1, spill_files(pid, spill_dir)
    assert (mnt / "bench" / "errors.txt").read_text() == ""
    with open(mnt / other, "rb") as f:
        assert stream_md5(f) == cli_md5


def test_mount_spill_failure_while_streaming(big_profile, tmp_path, mount, monkeypatch):
    """The spill directory fills up after the first reader got its first
    bytes: that reader gets ENOSPC, errors.txt says why, the mount goes on."""
    spill_dir = tmp_path / "small_tmpfs"
    spill_dir.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=80m", "tmpfs", str(spill_dir)],
                       capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {r.stderr.decode().strip()}")
    try:
        monkeypatch.setenv("XPROFS_SPILL_DIR", str(spill_dir))
        mnt = mount(big_profile)
        with open(mnt / FULL, "rb") as f:
            assert f.read(4096).startswith(b'{"displayTimeUnit":"ns"')
            with pytest.raises(OSError) as e:
                while f.read(1 << 20):
                    pass
        assert e.value.errno == 28  # ENOSPC
        errors = (mnt / "bench" / "errors.txt").read_text()
        assert "trace_viewer.json: spill file in" in errors, errors
        assert "No space left on device" in errors, errors
        assert len((mnt / SMALL).read_bytes()) > 1000
    finally:
        unmount_done = False
        for _ in range(100):
            if subprocess.run(["umount", str(spill_dir)], capture_output=True).returncode == 0:
                unmount_done = True
                break
            time.sleep(0.1)
        if not unmount_done:
            subprocess.run(["umount", "-l", str(spill_dir)], capture_output=True)


def test_cli_needs_no_spill_dir(big_profile, xprofs_build, tmp_path):
    env = dict(os.environ, XPROFS_SPILL_DIR=str(tmp_path / "missing"))
    rc, err, _ = cat_to_file(xprofs_build, big_profile, FULL, tmp_path / "out", env)
    assert rc == 0, err
    size = (tmp_path / "out").stat().st_size
    assert size > SPILL_THRESHOLD + 4 * CHUNK
    rc, err, _ = cat_to_file(xprofs_build, big_profile, FULL, tmp_path / "again")
    assert rc == 0, err
    assert file_md5(tmp_path / "out") == file_md5(tmp_path / "again")


def test_cli_streams_while_producing(big_profile, xprofs_build):
    """Past the threshold the bytes go to the pipe as they are made: read a
    little more than the threshold while the process, blocked on the pipe,
    still has most of the file to write, and see that it holds no file of
    its own for the rest."""
    p = subprocess.Popen([str(xprofs_build / "xprofs"), "cat", str(big_profile), FULL],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        head = p.stdout.read(SPILL_THRESHOLD + CHUNK)
        assert head.startswith(b'{"displayTimeUnit":"ns"')
        assert p.poll() is None
        links = open_files(p.pid)
        assert not [ln for ln in links if ln.endswith("(deleted)")], links
    finally:
        p.kill()
        p.wait()


def test_mount_unusable_spill_dir_fails_clearly(big_profile, xprofs_build, tmp_path, mount,
                                                monkeypatch):
    monkeypatch.setenv("XPROFS_SPILL_DIR", str(tmp_path / "missing"))
    mnt = mount(big_profile)
    with pytest.raises(OSError) as e:
        with open(mnt / FULL, "rb") as f:
            f.read()
    assert e.value.errno == 5  # EIO
    errors = (mnt / "bench" / "errors.txt").read_text()
    assert "trace_viewer.json: spill file in" in errors, errors
    assert "No such file or directory" in errors, errors
    # Outputs below the threshold never touch the directory.
    assert len((mnt / SMALL).read_bytes()) > 1000


def test_mount_concurrent_readers(big_profile, cli_full, mount):
    """Readers of two big files at once, some leaving early, in two rounds:
    every full read gets the bytes `xprofs cat` writes, and nothing fails."""
    want = cli_full[1]
    mnt = mount(big_profile)
    names = [FULL, "bench/trace_viewer.json?resolution=0"]
    results, failures = [], []

    def full_read(name):
        try:
            with open(mnt / name, "rb") as f:
                results.append(stream_md5(f))
        except OSError as e:
            failures.append((name, e))

    def early_leave(name):
        try:
            with open(mnt / name, "rb") as f:
                assert f.read(1000).startswith(b'{"displayTimeUnit":"ns"')
        except OSError as e:
            failures.append((name, e))

    for _ in range(2):
        threads = [threading.Thread(target=fn, args=(name,))
                   for name in names for fn in (full_read, full_read, early_leave)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
        assert not any(t.is_alive() for t in threads)
    assert failures == []
    assert results == [want] * 8
    assert (mnt / "bench" / "errors.txt").read_text() == ""


def test_ui_proxy_streams_a_big_file(big_profile, cli_full, mount, tmp_path, monkeypatch):
    """XProf's frontend asking xprofs-ui for the whole trace (tag
    trace_viewer@) gets the mount's file as it is being made, in chunks, byte
    for byte."""
    _, cli_md5, size = cli_full
    mnt, pid, spill_dir = mount_with_spill_dir(big_profile, mount, tmp_path, monkeypatch)
    s = start_server(mnt, quiet=True)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=300)
        conn.request("GET", "/data?" + q(run="bench", tag="trace_viewer@"))
        r = conn.getresponse()
        assert r.status == 200
        assert r.getheader("Transfer-Encoding") == "chunked"
        head = r.read(4096)
        assert head.startswith(b'{"displayTimeUnit":"ns"')
        spilled = spill_files(pid, spill_dir)
        assert len(spilled) == 1 and 0 < spilled[0][1] < size, (spilled, size)
        assert stream_md5(r, hashlib.md5(head)) == cli_md5
        conn.close()
    finally:
        stop_server(s)
