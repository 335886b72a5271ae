"""Independent reading of .xplane.pb files for tests: our proto/xplane.proto
compiled with protoc --python_out and parsed by python3-protobuf (Debian's), so
expected values do not come from the C reader under test."""
import gzip
import importlib
import pathlib
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]
_mod = None


def pb2():
    global _mod
    if _mod is None:
        out = tempfile.mkdtemp(prefix="xprofs-pb2-")
        subprocess.run(["protoc", f"--proto_path={REPO / 'proto'}", f"--python_out={out}",
                        "xplane.proto"], check=True)
        sys.path.insert(0, out)
        _mod = importlib.import_module("xplane_pb2")
    return _mod


def load(path):
    data = pathlib.Path(path).read_bytes()
    if str(path).endswith(".gz"):
        data = gzip.decompress(data)
    space = pb2().XSpace()
    space.ParseFromString(data)
    return space


def add_line(plane, lid, name, timestamp_ns=1000):
    """A new line of plane (for profiles built by tests)."""
    ln = plane.lines.add()
    ln.id = lid
    ln.name = name
    ln.timestamp_ns = timestamp_ns
    return ln
