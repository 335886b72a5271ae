"""s3:// log directories (issue 43) against a real S3-compatible server on
loopback: s3rver from the npm registry (installed by `make deps` into
build/npm), behind a small proxy of this test that checks every request's
SigV4 signature itself (s3rver checks only the access key), logs what was
asked, and can cut answers short or stop answering.

Checked: the mount's and the CLI's files are byte for byte those of the
same local LOGDIR; nothing is copied before a run is read (`ls -l` of a
run lists the store only); a big profile comes in parallel 8 MiB ranges,
at most 8 in flight; the store is listed at most every 5 s and new runs
appear on the next listing; a store that hangs holds a lookup at most ~3 s
(store_timeout bounds each request); virtual-host-style requests; the
signing region; nothing is ever written to the store (no PUT, POST or
DELETE across the module, UI proxy included); a wrong key id, a wrong secret and a
missing bucket fail with the store's own error; a transfer cut short is
retried, and one that keeps failing (or a store that stopped) is EIO with
the store's error in errors.txt while copied runs keep answering; a
replaced object is copied again within the 5 s re-check. gs:// without
HMAC keys: a service account's JWT, checked by the test's token server with
the account's public key (openssl), exchanged for the bearer token the
proxy wants; and the metadata server's token.
"""
import hashlib
import json
import hmac
import http.client
import http.server
import os
import pathlib
import shutil
import socket
import stat
import subprocess
import threading
import time
import urllib.parse

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
S3RVER = REPO / "build" / "npm" / "node_modules" / ".bin" / "s3rver"
KEY_ID, SECRET = "S3RVER", "S3RVER"  # s3rver's default account
RUN = "2025_01_01_00_00_00"
# s3rver makes continuation tokens with a cipher OpenSSL 3 keeps in its
# legacy provider: without it, every second page of a listing is a 500.
S3RVER_ENV = dict(os.environ, NODE_OPTIONS="--openssl-legacy-provider")
BEARER = "ya29.test-token-4a3"  # what the test's token server hands out (gs://)
WRITES = []  # every PUT, POST, DELETE or PATCH any proxy of this module saw


@pytest.fixture(scope="module", autouse=True)
def nothing_written():
    """Nothing the mount, the CLI or the UI proxy does writes to the store."""
    yield
    assert WRITES == [], WRITES


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


def sigv4_ok(method, raw_path, headers):
    """Recompute the request's SigV4 signature from scratch (the AWS
    algorithm, independent of the C code) and compare."""
    auth = headers.get("Authorization", "")
    if auth.startswith("Bearer "):
        return auth[len("Bearer "):] == BEARER
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return False
    fields = dict(p.strip().split("=", 1) for p in auth[len("AWS4-HMAC-SHA256 "):].split(","))
    key_id, date, region, service, _ = fields["Credential"].split("/")
    signed = fields["SignedHeaders"].split(";")
    path, _, query = raw_path.partition("?")
    pairs = sorted(tuple(p.split("=", 1)) if "=" in p else (p, "")
                   for p in query.split("&") if p)
    canon_query = "&".join(f"{k}={v}" for k, v in pairs)
    canon_headers = "".join(f"{h}:{' '.join(headers.get(h, '').split())}\n" for h in signed)
    creq = "\n".join([method, path, canon_query, canon_headers, ";".join(signed),
                      headers.get("x-amz-content-sha256", "")])
    sts = "\n".join(["AWS4-HMAC-SHA256", headers.get("x-amz-date", ""),
                     f"{date}/{region}/{service}/aws4_request",
                     hashlib.sha256(creq.encode()).hexdigest()])
    k = ("AWS4" + SECRET).encode()
    for part in (date, region, service, "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    want = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    return key_id != KEY_ID or hmac.compare_digest(want, fields["Signature"])


class Proxy:
    """Checks signatures, logs requests, forwards to s3rver; cut[key] = n
    answers of key to cut after 1 MiB; down = refuse connections."""

    def __init__(self, upstream):
        self.upstream = upstream
        self.log = []  # (method, path, range header)
        self.tokens = []  # x-amz-security-token of each request
        self.cut = {}
        self.slow = {}  # key: seconds each range of it waits
        self.extra_keys = []  # keys every listing also names
        self.page_size = 0  # > 0: listings come in pages of that many keys
        self.fail503 = 0  # the next n requests are answered 503 SlowDown
        self.in_flight = 0
        self.max_in_flight = 0
        self.key_in_flight = {}  # key: ranged GETs of it in flight now
        self.key_max = {}  # key: most ranged GETs of it in flight at once
        self.hosts = set()  # Host headers seen
        self.regions = set()  # SigV4 credential scopes' regions seen
        self.hang = False  # accept, read the request, never answer
        self.stopping = False
        self.lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_HEAD(self):
                self.forward()

            def do_GET(self):
                self.forward()

            def refuse_write(self):
                with proxy.lock:
                    proxy.log.append((self.command, self.path, None))
                    WRITES.append((self.command, self.path))
                self.send_error(405)

            do_PUT = do_POST = do_DELETE = do_PATCH = refuse_write

            def upstream_path(self):
                """Path-style path of the request: a virtual-host-style
                one (Host: bucket.localhost:port) gets its bucket."""
                host = self.headers.get("Host", "")
                if host.startswith("logs.localhost"):
                    return "/logs" + self.path
                return self.path

            def forward(self):
                rng = self.headers.get("Range")
                upath = self.upstream_path()
                key = urllib.parse.unquote(upath.split("?")[0])
                auth = self.headers.get("Authorization", "")
                with proxy.lock:
                    proxy.log.append((self.command, upath, rng))
                    proxy.tokens.append(self.headers.get("x-amz-security-token"))
                    proxy.hosts.add(self.headers.get("Host"))
                    if "Credential=" in auth:
                        proxy.regions.add(auth.split("Credential=")[1].split("/")[2])
                    proxy.in_flight += 1
                    proxy.max_in_flight = max(proxy.max_in_flight, proxy.in_flight)
                    if rng:
                        n = proxy.key_in_flight.get(key, 0) + 1
                        proxy.key_in_flight[key] = n
                        proxy.key_max[key] = max(proxy.key_max.get(key, 0), n)
                try:
                    while proxy.hang and not proxy.stopping:
                        time.sleep(0.05)
                    if proxy.stopping:
                        self.close_connection = True
                        return
                    self.answer(rng, upath)
                finally:
                    with proxy.lock:
                        proxy.in_flight -= 1
                        if rng:
                            proxy.key_in_flight[key] -= 1

            def answer(self, rng, upath):
                if not sigv4_ok(self.command, self.path, self.headers):
                    body = (b"<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code>"
                            b"<Message>signature checked by the test proxy</Message></Error>")
                    self.send_response(403)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                with proxy.lock:
                    busy = proxy.fail503 > 0
                    proxy.fail503 -= busy
                if busy:
                    body = b"<Error><Code>SlowDown</Code><Message>Reduce your rate</Message></Error>"
                    self.send_response(503)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                if rng:
                    key = urllib.parse.unquote(upath.split("?")[0])
                    time.sleep(proxy.slow.get(key, 0.2))  # ranges overlap in time, visibly
                c = http.client.HTTPConnection("127.0.0.1", proxy.upstream, timeout=30)
                hdrs = {h: v for h, v in self.headers.items()
                        if h.lower() in ("range", "if-match", "authorization", "x-amz-date",
                                         "x-amz-content-sha256")}
                if hdrs.get("Authorization", "").startswith("Bearer "):
                    del hdrs["Authorization"]  # checked above; s3rver knows only SigV4
                path = upath
                if "list-type=2" in path and proxy.page_size:
                    path += f"&max-keys={proxy.page_size}"  # signed already checked
                c.request(self.command, path, headers=hdrs)
                r = c.getresponse()
                body = r.read()
                if "list-type=2" in self.path and proxy.extra_keys:
                    from xml.sax.saxutils import escape
                    more = "".join(f"<Contents><Key>{escape(k)}</Key><Size>2</Size>"
                                   "<ETag>&quot;x&quot;</ETag></Contents>"
                                   for k in proxy.extra_keys).encode()
                    body = body.replace(b"</ListBucketResult>", more + b"</ListBucketResult>")
                self.send_response(r.status)
                for h in ("Content-Type", "ETag", "Content-Range", "Last-Modified"):
                    if r.getheader(h):
                        self.send_header(h, r.getheader(h))
                length = r.getheader("Content-Length") if self.command == "HEAD" else len(body)
                self.send_header("Content-Length", str(length))
                self.end_headers()
                key = urllib.parse.unquote(upath.split("?")[0])
                with proxy.lock:
                    cut = proxy.cut.get(key, 0)
                    if cut > 0 and self.command == "GET" and len(body) > 1 << 20:
                        proxy.cut[key] = cut - 1
                    else:
                        cut = 0
                if self.command == "GET":
                    if cut:
                        self.wfile.write(body[:1 << 20])
                        self.wfile.flush()
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.stopping = True
        self.server.shutdown()
        self.server.server_close()

    def lists(self):
        """Listings begun (a first page each)."""
        with self.lock:
            return [e for e in self.log if "list-type=2" in e[1]
                    and "continuation-token=" not in e[1]]

    def object_gets(self):
        """GETs of objects (not listings)."""
        with self.lock:
            return [e for e in self.log if e[0] == "GET" and "list-type=2" not in e[1]]

    def gets(self, key_part):
        with self.lock:
            return [e for e in self.log if e[0] == "GET" and key_part in e[1]]


@pytest.fixture
def store(tmp_path):
    """s3rver with bucket 'logs' on loopback behind the checking proxy."""
    if not S3RVER.exists():
        pytest.skip(f"s3rver not installed at {S3RVER}: run `make deps` (npm install "
                    "--prefix build/npm s3rver); the npm registry may be unreachable")
    port = free_port()
    data = tmp_path / "s3data"
    data.mkdir()
    proc = subprocess.Popen([str(S3RVER), "-d", str(data), "-a", "127.0.0.1", "-p", str(port),
                             "--silent", "--configure-bucket", "logs"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=S3RVER_ENV)
    try:
        wait_port(port)
        proxy = Proxy(port)

        def put(key, data_bytes):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("PUT", "/logs/" + urllib.parse.quote(key), body=data_bytes)
            r = c.getresponse()
            r.read()
            assert r.status == 200, (key, r.status)

        def upload(local_dir, prefix):
            for p in sorted(pathlib.Path(local_dir).rglob("*")):
                if p.is_file():
                    put(prefix + "/" + p.relative_to(local_dir).as_posix(), p.read_bytes())

        proxy.put = put
        proxy.upload = upload
        proxy.endpoint = f"http://127.0.0.1:{proxy.port}"
        yield proxy
        proxy.stop()
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def logs(tmp_path, corpus, synth, store):
    """A local LOGDIR (a corpus run, a PyTorch run and a generated 20 MB
    profile) and the same files in the store under logs/."""
    local = tmp_path / "local"
    shutil.copytree(corpus / "jax_conv_rocm", local / "jax")
    shutil.copytree(corpus / "pytorch" / "h100_bert_small", local / "pt" / "h100_bert_small")
    synth(local / "big", "--size-mb", "20", "--seed", "3")
    store.upload(local, "logs")
    return local


@pytest.fixture
def creds(monkeypatch, tmp_path):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def cli(xprofs_build, store, cache, *args, env=None):
    e = dict(os.environ, XPROFS_ENDPOINT=store.endpoint, XPROFS_CACHE_DIR=str(cache))
    e.update(env or {})
    return subprocess.run([str(xprofs_build / "xprofs"), *args], capture_output=True,
                          timeout=300, env=e)


FILES = ["jax/" + RUN + "/overview_page.json", "jax/" + RUN + "/summary.json",
         "pt/h100_bert_small/summary.json", "big/" + RUN + "/overview_page.json"]


def test_mount_matches_local(xprofs_build, store, logs, creds, mount, xcat, tmp_path):
    cache = tmp_path / "cache"
    mnt = mount("s3://logs/logs", "endpoint=" + store.endpoint, "cache_dir=" + str(cache))
    # Listing finds every run and copies nothing.
    assert sorted(os.listdir(mnt)) == ["README.txt", "big", "jax", "pt"]
    assert sorted(os.listdir(mnt / "jax")) == [RUN]
    assert store.gets(".xplane.pb") == [] and store.gets(".json.gz") == []
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    for f in FILES:
        want = xcat(logs, f)
        assert (mnt / f).read_bytes() == want, f
    # The 20 MB profile came in 8 MiB ranges, several at once.
    big = next((logs / "big" / "plugins" / "profile" / RUN).iterdir())
    size = big.stat().st_size
    ranges = sorted(r for _, _, r in store.gets(big.name))
    want_ranges = sorted(f"bytes={o}-{min(o + (8 << 20), size) - 1}"
                         for o in range(0, size, 8 << 20))
    assert ranges == want_ranges
    assert len(ranges) >= 3 and store.max_in_flight >= 2
    assert (mnt / "big" / RUN / "raw" / big.name).read_bytes() == big.read_bytes()
    # Read again: no new download.
    n = len(store.log)
    assert (mnt / FILES[0]).read_bytes() == xcat(logs, FILES[0])
    assert store.gets(big.name) == [r for r in store.log[:n] if big.name in r[1] and r[0] == "GET"]
    # The same cache_dir is the persistent cache: the produced files are kept
    # beside the copies, and a new mount serves them without a profile.
    assert any((cache / "produced" / "entries").iterdir())
    subprocess.run(["fusermount3", "-u", str(mnt)], check=True)
    mnt = mount("s3://logs/logs", "endpoint=" + store.endpoint, "cache_dir=" + str(cache))
    assert (mnt / FILES[0]).read_bytes() == xcat(logs, FILES[0])
    run = FILES[0].split("/")[0] + "/" + RUN
    stats = json.loads((mnt / run / "cache_stats.json").read_bytes())
    assert stats["profiles_decoded"] == 0 and stats["cache"]["hits"] >= 1, stats


def test_cli_matches_local_and_keeps_its_copy(xprofs_build, store, logs, creds, xcat, tmp_path):
    cache = tmp_path / "cache"
    f = "pt/h100_bert_small/summary.json"
    r = cli(xprofs_build, store, cache, "cat", "s3://logs/logs/", f)
    assert r.returncode == 0, r.stderr
    assert r.stdout == xcat(logs, f)
    r = cli(xprofs_build, store, cache, "ls", "s3://logs/logs")
    assert r.stdout.decode().split() == ["README.txt", "big/", "jax/", "pt/"]
    # A second process finds the copy (cache_dir/index): size and ETag
    # unchanged, so no second GET.
    before = len(store.gets("h100_bert_small.pt.trace.json"))
    r = cli(xprofs_build, store, cache, "cat", "s3://logs/logs", f)
    assert r.returncode == 0 and r.stdout == xcat(logs, f)
    assert len(store.gets("h100_bert_small.pt.trace.json")) == before == 1
    # Another prefix may not share that cache directory.
    r = cli(xprofs_build, store, cache, "ls", "s3://logs/logs/jax")
    assert r.returncode != 0 and b"holds the copy of" in r.stderr


def test_listing_in_pages(xprofs_build, store, logs, creds, xcat, tmp_path):
    store.page_size = 2
    r = cli(xprofs_build, store, tmp_path / "cache", "ls", "s3://logs/logs")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().split() == ["README.txt", "big/", "jax/", "pt/"]
    nfiles = sum(1 for p in logs.rglob("*") if p.is_file())
    lists = [e for e in store.log if "list-type=2" in e[1]]
    assert len(lists) == (nfiles + 1) // 2 and len(lists) > 3
    assert all("continuation-token=" in e[1] for e in lists[1:])
    f = "jax/" + RUN + "/overview_page.json"
    r = cli(xprofs_build, store, tmp_path / "cache", "cat", "s3://logs/logs", f)
    assert r.returncode == 0 and r.stdout == xcat(logs, f)


def test_busy_store_is_retried(xprofs_build, store, logs, creds, xcat, tmp_path):
    # Three 503s in a row: retried with backoff (0.1, 0.4, 1.6 s), then served.
    store.fail503 = 3
    f = "pt/h100_bert_small/summary.json"
    t0 = time.time()
    r = cli(xprofs_build, store, tmp_path / "c1", "cat", "s3://logs/logs", f)
    assert r.returncode == 0, r.stderr
    assert r.stdout == xcat(logs, f) and store.fail503 == 0
    assert time.time() - t0 >= 2.0
    # Past the retries: the store's own error.
    store.fail503 = 100
    r = cli(xprofs_build, store, tmp_path / "c2", "ls", "s3://logs/logs")
    assert r.returncode != 0 and b"HTTP 503 SlowDown: Reduce your rate" in r.stderr, r.stderr
    assert store.fail503 == 96


def test_wrong_credentials_and_missing_bucket(xprofs_build, store, logs, creds, tmp_path):
    r = cli(xprofs_build, store, tmp_path / "c1", "ls", "s3://logs/logs",
            env={"AWS_ACCESS_KEY_ID": "NOBODY"})
    assert r.returncode != 0
    assert b"HTTP 403 InvalidAccessKeyId" in r.stderr, r.stderr
    r = cli(xprofs_build, store, tmp_path / "c2", "ls", "s3://logs/logs",
            env={"AWS_SECRET_ACCESS_KEY": "not-the-secret"})
    assert r.returncode != 0
    assert b"HTTP 403 SignatureDoesNotMatch" in r.stderr, r.stderr
    r = cli(xprofs_build, store, tmp_path / "c3", "ls", "s3://nobucket/logs")
    assert r.returncode != 0
    assert b"HTTP 404 NoSuchBucket" in r.stderr, r.stderr
    # Credentials from ~/.aws/credentials at AWS_PROFILE.
    home = tmp_path / "home" / ".aws"
    home.mkdir(parents=True)
    (home / "credentials").write_text("[default]\naws_access_key_id = NOBODY\n"
                                      "aws_secret_access_key = x\n\n[test]\n"
                                      f"aws_access_key_id = {KEY_ID}\n"
                                      f"aws_secret_access_key = {SECRET}\n")
    env = {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_PROFILE": "test"}
    r = cli(xprofs_build, store, tmp_path / "c4", "ls", "s3://logs/logs", env=env)
    assert r.returncode == 0, r.stderr
    env["AWS_PROFILE"] = "default"
    r = cli(xprofs_build, store, tmp_path / "c5", "ls", "s3://logs/logs", env=env)
    assert b"InvalidAccessKeyId" in r.stderr
    # A session token is sent, and signed (the proxy checks the signature
    # over x-amz-security-token too).
    n = len(store.tokens)
    r = cli(xprofs_build, store, tmp_path / "c6", "ls", "s3://logs/logs",
            env={"AWS_SESSION_TOKEN": "FwoGZXIvYXdzEXAMPLE"})
    assert r.returncode == 0, r.stderr
    assert store.tokens[n:] and set(store.tokens[n:]) == {"FwoGZXIvYXdzEXAMPLE"}


def test_cut_transfers_and_a_stopped_store(xprofs_build, store, logs, creds, mount, xcat,
                                           tmp_path):
    big = next((logs / "big" / "plugins" / "profile" / RUN).iterdir())
    key = f"/logs/logs/big/plugins/profile/{RUN}/{big.name}"
    mnt = mount("s3://logs/logs", "endpoint=" + store.endpoint,
                "cache_dir=" + str(tmp_path / "cache"))
    # Two answers cut short: retried, and the bytes are whole.
    store.cut[key] = 2
    assert (mnt / "big" / RUN / "raw" / big.name).read_bytes() == big.read_bytes()
    assert store.cut[key] == 0
    f = "jax/" + RUN + "/overview_page.json"
    assert (mnt / f).read_bytes() == xcat(logs, f)
    # The store stops answering: a run not copied yet is EIO, errors.txt
    # says why, and the copied runs keep answering.
    store.stop()
    with pytest.raises(OSError) as e:
        (mnt / "pt" / "h100_bert_small" / "summary.json").read_bytes()
    assert e.value.errno == 5
    errors = (mnt / "pt" / "h100_bert_small" / "errors.txt").read_text()
    assert "s3://logs/logs/pt/h100_bert_small/h100_bert_small.pt.trace.json.gz" in errors
    assert "Couldn't connect to server" in errors, errors
    time.sleep(5.5)  # past the re-check: the store is asked again, and fails
    assert (mnt / f).read_bytes() == xcat(logs, f)
    assert "Couldn't connect" in (mnt / "jax" / RUN / "errors.txt").read_text()


def test_other_runs_answer_during_a_copy(xprofs_build, store, logs, creds, mount, xcat,
                                         tmp_path):
    big = next((logs / "big" / "plugins" / "profile" / RUN).iterdir())
    store.slow[f"/logs/logs/big/plugins/profile/{RUN}/{big.name}"] = 4
    mnt = mount("s3://logs/logs", "endpoint=" + store.endpoint,
                "cache_dir=" + str(tmp_path / "cache"))
    f = "jax/" + RUN + "/summary.json"
    assert (mnt / f).read_bytes() == xcat(logs, f)
    got = {}
    t = threading.Thread(target=lambda: got.update(
        big=(mnt / "big" / RUN / "raw" / big.name).read_bytes()))
    t0 = time.time()
    t.start()
    time.sleep(0.5)
    # The big copy is under way; a copied run's new file does not wait for it.
    g = "jax/" + RUN + "/hosts.json"
    assert (mnt / g).read_bytes() == xcat(logs, g)
    assert t.is_alive() and time.time() - t0 < 3
    t.join(60)
    assert got["big"] == big.read_bytes() and time.time() - t0 >= 4


def test_cut_every_time_is_eio(xprofs_build, store, logs, creds, mount, tmp_path):
    big = next((logs / "big" / "plugins" / "profile" / RUN).iterdir())
    key = f"/logs/logs/big/plugins/profile/{RUN}/{big.name}"
    store.cut[key] = 1000
    mnt = mount("s3://logs/logs", "endpoint=" + store.endpoint,
                "cache_dir=" + str(tmp_path / "cache"))
    with pytest.raises(OSError) as e:
        (mnt / "big" / RUN / "overview_page.json").read_bytes()
    assert e.value.errno == 5
    assert "after 4 tries" in (mnt / "big" / RUN / "errors.txt").read_text()
    # No partial copy was left under the name.
    tree = tmp_path / "cache" / "tree" / "big" / "plugins" / "profile" / RUN
    assert os.path.islink(tree / big.name)
    assert [p.name for p in tree.iterdir()] == [big.name]


def test_replaced_object_is_copied_again(xprofs_build, store, logs, creds, mount, xcat, synth,
                                         tmp_path):
    mnt = mount("s3://logs/logs", "endpoint=" + store.endpoint,
                "cache_dir=" + str(tmp_path / "cache"))
    f = "jax/" + RUN + "/summary.json"
    first = (mnt / f).read_bytes()
    assert first == xcat(logs, f)
    # Replace the run's profile with a generated one.
    other = synth(tmp_path / "other", "--steps", "3")
    new = next((other / "plugins" / "profile" / RUN).iterdir()).read_bytes()
    old = next((logs / "jax" / "plugins" / "profile" / RUN).glob("*.xplane.pb"))
    old.write_bytes(new)
    store.put(f"logs/jax/plugins/profile/{RUN}/{old.name}", new)
    want = xcat(logs, f)
    assert want != first
    deadline = time.time() + 15
    while time.time() < deadline and (mnt / f).read_bytes() != want:
        time.sleep(0.5)
    assert (mnt / f).read_bytes() == want


def b64url_decode(s):
    import base64
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


class TokenServer:
    """OAuth token endpoint (checks the RS256 JWT with the public key) and
    GCE metadata server, on loopback."""

    def __init__(self, pub_pem, email):
        self.exchanges = []  # (claims, verified)
        self.metadata_asks = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, code, obj):
                import json
                body = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                import json
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                form = urllib.parse.parse_qs(body)
                if form.get("grant_type") != ["urn:ietf:params:oauth:grant-type:jwt-bearer"]:
                    return self.reply(400, {"error": "unsupported_grant_type"})
                h64, c64, s64 = form["assertion"][0].split(".")
                header = json.loads(b64url_decode(h64))
                claims = json.loads(b64url_decode(c64))
                d = pathlib.Path(outer.dir)
                (d / "input").write_bytes(f"{h64}.{c64}".encode())
                (d / "sig").write_bytes(b64url_decode(s64))
                r = subprocess.run(["openssl", "dgst", "-sha256", "-verify", str(pub_pem),
                                    "-signature", str(d / "sig"), str(d / "input")],
                                   capture_output=True)
                now = time.time()
                ok = (r.returncode == 0 and header == {"alg": "RS256", "typ": "JWT"}
                      and claims["iss"] == email and claims["aud"] == outer.uri
                      and claims["scope"].endswith("devstorage.read_only")
                      and claims["iat"] <= now + 5 and claims["exp"] > now)
                outer.exchanges.append((claims, ok))
                if not ok:
                    return self.reply(400, {"error": "invalid_grant"})
                self.reply(200, {"access_token": BEARER, "expires_in": 3599,
                                 "token_type": "Bearer"})

            def do_GET(self):
                if (self.path == "/computeMetadata/v1/instance/service-accounts/default/token"
                        and self.headers.get("Metadata-Flavor") == "Google"):
                    outer.metadata_asks += 1
                    return self.reply(200, {"access_token": BEARER, "expires_in": 3599})
                self.reply(404, {})

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.uri = f"http://127.0.0.1:{self.server.server_address[1]}/token"
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def gcs_account(tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("openssl (the command) missing: it makes and checks the test's RSA key")
    key, pub = tmp_path / "sa.pem", tmp_path / "sa.pub"
    subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                    "rsa_keygen_bits:2048", "-out", str(key)], check=True, capture_output=True)
    subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout", "-out", str(pub)],
                   check=True, capture_output=True)
    email = "profiles@test-project.iam.gserviceaccount.com"
    ts = TokenServer(pub, email)
    ts.dir = tmp_path
    import json
    (tmp_path / "sa.json").write_text(json.dumps({
        "type": "service_account", "client_email": email, "private_key": key.read_text(),
        "token_uri": ts.uri}))
    yield ts, tmp_path / "sa.json"
    ts.server.shutdown()
    ts.server.server_close()


def test_gs_service_account_and_metadata_server(xprofs_build, store, logs, gcs_account,
                                                monkeypatch, mount, xcat, tmp_path):
    ts, sa = gcs_account
    for v in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(sa))
    mnt = mount("gs://logs/logs", "endpoint=" + store.endpoint,
                "cache_dir=" + str(tmp_path / "cache"))
    for f in FILES[:3]:
        assert (mnt / f).read_bytes() == xcat(logs, f), f
    # One exchange, its JWT checked with the account's public key; the
    # token served every request since.
    assert [ok for _, ok in ts.exchanges] == [True]
    assert all(e[0] == "GET" for e in store.log) and len(store.log) > 3
    # No service account: the metadata server's token.
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS")
    monkeypatch.setenv("GCE_METADATA_HOST", ts.host)
    r = cli(xprofs_build, store, tmp_path / "cache2", "cat", "gs://logs/logs", FILES[2])
    assert r.returncode == 0, r.stderr
    assert r.stdout == xcat(logs, FILES[2])
    assert ts.metadata_asks == 1
    # A key the token server does not know: the store's answer is refused.
    other = tmp_path / "other.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-out", str(other)],
                   check=True, capture_output=True)
    import json
    doc = json.loads(sa.read_text())
    doc["private_key"] = other.read_text()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    r = cli(xprofs_build, store, tmp_path / "cache3", "ls", "gs://logs/logs",
            env={"GOOGLE_APPLICATION_CREDENTIALS": str(bad)})
    assert r.returncode != 0
    assert b"no access token" in r.stderr and b"invalid_grant" in r.stderr, r.stderr
    assert [ok for _, ok in ts.exchanges] == [True, False]


def test_cache_bytes_bounds_the_copies(xprofs_build, store, logs, creds, mount, xcat, tmp_path):
    cache = tmp_path / "cache"
    mnt = mount("s3://logs/logs", "endpoint=" + store.endpoint, "cache_dir=" + str(cache),
                "cache_bytes=300000")
    jax_xplane = next((logs / "jax" / "plugins" / "profile" / RUN).glob("*.xplane.pb"))
    local_copy = cache / "tree" / "jax" / "plugins" / "profile" / RUN / jax_xplane.name
    f = "jax/" + RUN + "/summary.json"
    assert (mnt / f).read_bytes() == xcat(logs, f)
    assert local_copy.is_file() and not local_copy.is_symlink()
    # Past the bound, once the jax run is idle, its copies go for the next run's.
    time.sleep(5.5)
    g = "pt/h100_bert_small/summary.json"
    assert (mnt / g).read_bytes() == xcat(logs, g)
    assert local_copy.is_symlink()
    kept = sum(p.stat().st_size for p in (cache / "tree").rglob("*") if p.is_file()
               and not p.is_symlink())
    assert kept <= 300000
    # Asked for again: copied again, the same bytes.
    n = len(store.gets(jax_xplane.name))
    h = "jax/" + RUN + "/hosts.json"
    assert (mnt / h).read_bytes() == xcat(logs, h)
    assert len(store.gets(jax_xplane.name)) == n + 1
    assert local_copy.is_file() and not local_copy.is_symlink()


def test_hostile_keys_stay_out(xprofs_build, store, logs, creds, xcat, tmp_path):
    # Listed keys that would climb out of the copy, or take the copy's own
    # names (the proxy adds them to every listing).
    store.extra_keys = ["logs/evil/../../../escaped/a.pt.trace.json",
                        "logs/dot/./x.pt.trace.json", "logs/w/.xprofs-not-copied-yet",
                        "logs/tab\tname/x.pt.trace.json", "logs/emptypart//x.pt.trace.json",
                        "logs/../../up.pt.trace.json", "logs//root.pt.trace.json"]
    cache = tmp_path / "c" / "cache"
    r = cli(xprofs_build, store, cache, "ls", "s3://logs/logs")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().split() == ["README.txt", "big/", "jax/", "pt/"]
    # Nothing was made outside the copy's tree, nor in it for those keys.
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == ["cache"]
    assert sorted(p.name for p in cache.iterdir()) == ["index", "source", "tree"]
    assert sorted(p.name for p in (cache / "tree").iterdir()) == ["big", "jax", "pt"]
    f = "pt/h100_bert_small/summary.json"
    r = cli(xprofs_build, store, cache, "cat", "s3://logs/logs", f)
    assert r.returncode == 0 and r.stdout == xcat(logs, f)


def test_tls_certificate_is_checked(xprofs_build, creds, tmp_path):
    """s3rver over TLS with a self-signed certificate: refused, as a store
    whose certificate cannot be verified must be."""
    if not S3RVER.exists():
        pytest.skip(f"s3rver not installed at {S3RVER}: run `make deps`")
    if shutil.which("openssl") is None:
        pytest.skip("openssl (the command) missing: it makes the test's certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    port = free_port()
    (tmp_path / "d").mkdir()
    proc = subprocess.Popen([str(S3RVER), "-d", str(tmp_path / "d"), "-a", "127.0.0.1", "-p",
                             str(port), "--silent", "--key", str(key), "--cert", str(cert),
                             "--configure-bucket", "logs"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        r = subprocess.run([str(xprofs_build / "xprofs"), "ls", "s3://logs/x"],
                           capture_output=True, timeout=120,
                           env=dict(os.environ, XPROFS_ENDPOINT=f"https://127.0.0.1:{port}",
                                    XPROFS_CACHE_DIR=str(tmp_path / "cache")))
        assert r.returncode != 0
        assert b"certificate" in r.stderr.lower() or b"ssl" in r.stderr.lower(), r.stderr
    finally:
        proc.kill()
        proc.wait()


def test_agent_commands_read_a_store(xprofs_build, store, logs, creds, tmp_path):
    """XProf's agent commands take a store URL as their session (or as
    --logdir): the answer is the local LOGDIR's, and only the run read is
    copied."""
    cache = tmp_path / "cache"
    local = str(logs / "jax")

    def agent(*args, where):
        r = subprocess.run([str(xprofs_build / "xprofs"), *args, where], capture_output=True,
                           timeout=300, env=dict(os.environ, XPROFS_ENDPOINT=store.endpoint,
                                                 XPROFS_CACHE_DIR=str(cache)))
        return r.returncode, r.stdout

    for args in (("get_overview",), ("get_top_hlo_ops", "--limit=3"), ("list_hlo_modules",)):
        want = agent(*args, where=local)
        assert want[0] == 0 and len(want[1]) > 50, args
        assert agent(*args, where="s3://logs/logs/jax") == want, args
    # --logdir=URL with the run's name as the session
    want = agent("get_overview", RUN, where="--logdir=" + local)
    assert want[0] == 0
    assert agent("get_overview", RUN, where="--logdir=s3://logs/logs/jax") == want
    big = next((logs / "big" / "plugins" / "profile" / RUN).iterdir())
    assert store.gets(big.name) == []
    # A bucket that is not there: XProf's path error, and the store's reason on stderr.
    r = subprocess.run([str(xprofs_build / "xprofs"), "get_overview", "s3://nosuch/logs"],
                       capture_output=True, timeout=300,
                       env=dict(os.environ, XPROFS_ENDPOINT=store.endpoint,
                                XPROFS_CACHE_DIR=str(tmp_path / "cache2")))
    assert r.returncode == 3 and b'"reason": "PATH_ERROR"' in r.stdout, r
    assert b"NoSuchBucket" in r.stderr


def test_gs_with_hmac_keys_is_signed(xprofs_build, store, logs, creds, monkeypatch, xcat,
                                     tmp_path):
    """gs:// with HMAC keys (Cloud Storage's XML API) signs each request
    with SigV4, which the proxy checks; no token is asked for."""
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")  # nothing listens there
    r = cli(xprofs_build, store, tmp_path / "cache", "cat", "gs://logs/logs", FILES[2])
    assert r.returncode == 0, r.stderr
    assert r.stdout == xcat(logs, FILES[2])
    assert store.log and all(e[0] == "GET" for e in store.log)
    # A wrong secret is the store's refusal, not a token error.
    r = cli(xprofs_build, store, tmp_path / "cache2", "ls", "gs://logs/logs",
            env={"AWS_SECRET_ACCESS_KEY": "wrong"})
    assert r.returncode != 0 and b"SignatureDoesNotMatch" in r.stderr, r.stderr


def test_ls_of_a_run_lists_the_store_only(xprofs_build, store, logs, creds, mount, tmp_path):
    """`ls -l` of a run, its raw/ and hosts/ list the store: no object is
    downloaded until a file that needs it is read, and raw/ shows the
    listed sizes before any copy."""
    mnt = mount("s3://logs/logs", "endpoint=" + store.endpoint,
                "cache_dir=" + str(tmp_path / "cache"))
    run = mnt / "big" / RUN
    names = os.listdir(run)
    assert "overview_page.json" in names and "raw" in names and "hosts" in names
    for n in names:
        os.stat(run / n)
    big = next((logs / "big" / "plugins" / "profile" / RUN).iterdir())
    assert os.listdir(run / "raw") == [big.name]
    assert os.stat(run / "raw" / big.name).st_size == big.stat().st_size
    for h in os.listdir(run / "hosts"):
        for n in os.listdir(run / "hosts" / h):
            os.stat(run / "hosts" / h / n)
    for r in ("jax", "pt"):
        for d, _, files in os.walk(mnt / r):
            for f in files:
                os.stat(os.path.join(d, f))
    assert store.object_gets() == [], store.object_gets()
    # The first read of a file that needs the profile copies it, in ranges.
    assert len((run / "overview_page.json").read_bytes()) > 100
    ranges = [r for _, _, r in store.gets(big.name)]
    assert len(ranges) >= 3 and all(r and r.startswith("bytes=") for r in ranges)
    # Only that run was copied.
    assert {e[1].split("/")[3] for e in store.object_gets()} == {"big"}


def test_listed_at_most_every_5s_and_new_runs_appear(xprofs_build, store, logs, creds, mount,
                                                     corpus, tmp_path):
    mnt = mount("s3://logs/logs", "endpoint=" + store.endpoint,
                "cache_dir=" + str(tmp_path / "cache"))
    assert sorted(os.listdir(mnt)) == ["README.txt", "big", "jax", "pt"]
    # Lookups for 4 s: the store is listed once at most.
    n0 = len(store.lists())
    t0 = time.time()
    while time.time() - t0 < 4:
        os.listdir(mnt)
        os.listdir(mnt / "jax" / RUN)
        assert not (mnt / "nosuchrun").exists()
        time.sleep(0.1)
    assert len(store.lists()) - n0 <= 1, store.lists()[n0:]
    # A new run: on the next listing, at most 5 s (and a bit) later.
    store.upload(corpus / "jax_conv_rocm", "logs/new")
    t0 = time.time()
    while "new" not in os.listdir(mnt) and time.time() - t0 < 10:
        time.sleep(0.2)
    took = time.time() - t0
    assert "new" in os.listdir(mnt)
    assert took <= 7, took
    assert os.listdir(mnt / "new") == [RUN]
    # Over the whole mount: one listing per 5 s at most (the first one at
    # the mount, one on the way).
    t_all = time.time() - t0 + 4
    assert len(store.lists()) - n0 <= 1 + t_all / 5 + 1


def test_a_hanging_store_holds_lookups_briefly(xprofs_build, store, logs, creds, mount, xcat,
                                               tmp_path):
    """A store that takes connections and never answers: lookups wait for
    its listing ~3 s at most, then answer from the last listing; runs
    already copied and the mount's own files keep answering; a run not
    copied is EIO once store_timeout has bounded each try, with the reason
    in errors.txt; and all comes back with the store."""
    mnt = mount("s3://logs/logs", "endpoint=" + store.endpoint,
                "cache_dir=" + str(tmp_path / "cache"), "store_timeout=2")
    f = "jax/" + RUN + "/overview_page.json"
    want = xcat(logs, f)
    assert (mnt / f).read_bytes() == want
    store.hang = True
    time.sleep(5.5)  # the listing is old: the next lookup asks for one
    t0 = time.time()
    assert sorted(os.listdir(mnt)) == ["README.txt", "big", "jax", "pt"]
    assert time.time() - t0 < 4.5, time.time() - t0
    t0 = time.time()
    assert "summary.json" in os.listdir(mnt / "pt" / "h100_bert_small")
    assert (mnt / "README.txt").read_bytes()
    assert (mnt / f).read_bytes() == want  # copied: served
    assert time.time() - t0 < 4.5, time.time() - t0
    # A run not copied: each try bounded by store_timeout, then EIO.
    got = {}

    def read_pt():
        t = time.time()
        try:
            (mnt / "pt" / "h100_bert_small" / "summary.json").read_bytes()
            got["rc"] = 0
        except OSError as e:
            got["rc"] = e.errno
        got["took"] = time.time() - t

    th = threading.Thread(target=read_pt)
    th.start()
    time.sleep(1)
    # Meanwhile, the rest answers.
    t0 = time.time()
    assert (mnt / f).read_bytes() == want
    assert sorted(os.listdir(mnt / "jax")) == [RUN]
    assert time.time() - t0 < 4.5
    th.join(60)
    assert got["rc"] == 5 and got["took"] < 25, got
    errors = (mnt / "pt" / "h100_bert_small" / "errors.txt").read_text()
    assert "Timeout was reached" in errors, errors
    # The CLI: XPROFS_STORE_TIMEOUT bounds its requests too.
    t0 = time.time()
    r = cli(xprofs_build, store, tmp_path / "c2", "ls", "s3://logs/logs",
            env={"XPROFS_STORE_TIMEOUT": "1"})
    assert r.returncode != 0 and b"Timeout was reached" in r.stderr, r.stderr
    assert time.time() - t0 < 15
    # The store answers again: so does the run.
    store.hang = False
    deadline = time.time() + 30
    g = "pt/h100_bert_small/summary.json"
    while time.time() < deadline:
        try:
            if (mnt / g).read_bytes() == xcat(logs, g):
                break
        except OSError:
            pass
        time.sleep(0.5)
    assert (mnt / g).read_bytes() == xcat(logs, g)


def test_virtual_host_style(xprofs_build, store, logs, creds, mount, xcat, tmp_path):
    """s3_style=virtual: the bucket in the host name (logs.localhost, which
    libcurl resolves to loopback), the key alone in the path; the proxy
    puts the bucket back into the path for s3rver. A custom endpoint is
    path-style unless told."""
    port = store.port
    f = "pt/h100_bert_small/summary.json"
    r = cli(xprofs_build, store, tmp_path / "c1", "cat", "s3://logs/logs", f,
            env={"XPROFS_ENDPOINT": f"http://localhost:{port}", "XPROFS_S3_STYLE": "virtual"})
    assert r.returncode == 0, r.stderr
    assert r.stdout == xcat(logs, f)
    assert store.hosts == {f"logs.localhost:{port}"}, store.hosts
    mnt = mount("s3://logs/logs", f"endpoint=http://localhost:{port}", "s3_style=virtual",
                "cache_dir=" + str(tmp_path / "c2"))
    g = "jax/" + RUN + "/summary.json"
    assert (mnt / g).read_bytes() == xcat(logs, g)
    assert store.hosts == {f"logs.localhost:{port}"}, store.hosts
    # The default for a custom endpoint: path-style.
    store.hosts.clear()
    r = cli(xprofs_build, store, tmp_path / "c3", "ls", "s3://logs/logs")
    assert r.returncode == 0, r.stderr
    assert store.hosts == {f"127.0.0.1:{port}"}, store.hosts
    r = cli(xprofs_build, store, tmp_path / "c4", "ls", "s3://logs/logs",
            env={"XPROFS_S3_STYLE": "sideways"})
    assert r.returncode != 0 and b"s3_style=sideways" in r.stderr


def test_requests_are_signed_for_the_region(xprofs_build, store, logs, creds, tmp_path):
    """The credential scope names AWS_REGION, else the profile's region
    (~/.aws/config), else us-east-1; the proxy recomputes each signature
    with that scope, so a request signed for another region is refused."""
    r = cli(xprofs_build, store, tmp_path / "c1", "ls", "s3://logs/logs",
            env={"AWS_REGION": "eu-west-3"})
    assert r.returncode == 0, r.stderr
    assert store.regions == {"eu-west-3"}
    store.regions.clear()
    aws = tmp_path / "home" / ".aws"
    aws.mkdir(parents=True)
    (aws / "config").write_text("[default]\nregion = ap-south-1\n\n"
                                "[profile team]\nregion = sa-east-1\n")
    (aws / "credentials").write_text(f"[team]\naws_access_key_id = {KEY_ID}\n"
                                     f"aws_secret_access_key = {SECRET}\n")
    r = cli(xprofs_build, store, tmp_path / "c2", "ls", "s3://logs/logs",
            env={"AWS_PROFILE": "team", "AWS_REGION": "", "AWS_DEFAULT_REGION": ""})
    assert r.returncode == 0, r.stderr
    assert store.regions == {"sa-east-1"}
    store.regions.clear()
    r = cli(xprofs_build, store, tmp_path / "c3", "ls", "s3://logs/logs",
            env={"AWS_REGION": "", "AWS_DEFAULT_REGION": "", "HOME": str(tmp_path / "nohome")})
    assert r.returncode == 0, r.stderr
    assert store.regions == {"us-east-1"}


def test_at_most_8_ranges_in_flight(xprofs_build, store, creds, mount, tmp_path):
    """An 80 MiB object comes in ten 8 MiB ranges, 8 at a time at most
    (and several at once)."""
    data = os.urandom(1 << 20) * 80
    key = f"logs/wide/plugins/profile/{RUN}/h.xplane.pb"
    store.put(key, data)
    store.slow["/logs/" + key] = 1.0  # each range waits: they pile up
    mnt = mount("s3://logs/logs", "endpoint=" + store.endpoint,
                "cache_dir=" + str(tmp_path / "cache"))
    got = (mnt / "wide" / RUN / "raw" / "h.xplane.pb").read_bytes()
    assert hashlib.sha256(got).digest() == hashlib.sha256(data).digest()
    ranges = sorted(r for _, _, r in store.gets("h.xplane.pb"))
    assert len(ranges) == 10
    assert 2 <= store.key_max["/logs/" + key] <= 8, store.key_max
    assert store.key_max["/logs/" + key] == 8


def test_ui_proxy_over_a_store_mount_writes_nothing(xprofs_build, store, logs, creds, mount,
                                                    tmp_path):
    """xprofs-ui over a mount of the store: its pages read, nothing is
    written to the store (the module's nothing_written checks every test)."""
    exe = xprofs_build / "xprofs-ui"
    if not exe.exists():
        pytest.skip(f"{exe} missing")
    mnt = mount("s3://logs/logs", "endpoint=" + store.endpoint,
                "cache_dir=" + str(tmp_path / "cache"))
    log = tmp_path / "ui.log"
    with open(log, "wb") as lf:
        proc = subprocess.Popen([str(exe), str(mnt), "--port", "0"], stdout=subprocess.DEVNULL,
                                stderr=lf)
    try:
        import re
        port = None
        deadline = time.time() + 20
        while port is None and time.time() < deadline:
            m = re.search(r"http://127\.0\.0\.1:(\d+)/", log.read_text(errors="replace"))
            port = int(m.group(1)) if m else None
            time.sleep(0.05)
        assert port, log.read_text()
        run = urllib.parse.quote("jax/" + RUN, safe="")
        for path in ("/runs", f"/run_tools?run={run}",
                     f"/data?run={run}&tag=overview_page", f"/data?run={run}&tag=kernel_stats"):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            c.request("GET", path)
            r = c.getresponse()
            r.read()
            assert r.status in (200, 404), (path, r.status)
            c.close()
        assert store.object_gets(), "the UI read nothing from the store"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert not [e for e in store.log if e[0] not in ("GET", "HEAD")]
