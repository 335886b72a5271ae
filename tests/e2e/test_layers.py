"""The floor plan of src/ (contrib/layers.sh, make check-layers): a file
includes only its own folder and folders on lower layers.

The tree as committed has no include that runs up; a copy of it with one
planted upward include, a same-layer include, a bare include of another
folder's header and an unknown folder each fails the check, naming the file
and line.
"""
import pathlib
import shutil
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[2]
LAYERS = REPO / "contrib" / "layers.sh"


def run_layers(src, *flags):
    return subprocess.run(["sh", str(LAYERS), *flags, str(src)], capture_output=True, text=True,
                          timeout=120)


def table(out):
    """{folder: (layer, files, lines, upward)} from the printed table."""
    rows = {}
    for line in out.splitlines()[1:]:
        f = line.split()
        if len(f) != 5 or not f[1].isdigit():
            break
        rows[f[0]] = tuple(int(x) for x in f[1:])
    return rows


def test_committed_tree_has_no_upward_include():
    r = run_layers(REPO / "src", "--check")
    assert r.returncode == 0, r.stdout + r.stderr
    rows = table(r.stdout)
    # Every folder of src/ is in the table, each with files and no upward include.
    folders = sorted(p.name for p in (REPO / "src").iterdir() if p.is_dir())
    assert sorted(rows) == folders
    for name, (layer, files, lines, upward) in rows.items():
        assert files > 0 and lines > 0, name
        assert upward == 0, name
    # The layers run the way data flows.
    assert rows["base"][0] < rows["reader"][0] < rows["session"][0] < rows["xplane"][0]
    assert rows["xplane"][0] < rows["op_stats"][0] < rows["tools"][0] < rows["vfs"][0]
    assert rows["vfs"][0] < rows["fs"][0]
    # The file count matches the tree.
    n = sum(1 for p in (REPO / "src").glob("*/*") if p.suffix in (".c", ".h"))
    assert sum(r[1] for r in rows.values()) == n


def plant(tmp_path, folder, name, line):
    src = tmp_path / "src"
    shutil.copytree(REPO / "src", src)
    with open(src / folder / name, "a") as f:
        f.write(line + "\n")
    nlines = sum(1 for _ in open(src / folder / name))
    return src, nlines


def test_planted_upward_include_fails(tmp_path):
    src, n = plant(tmp_path, "base", "arena.h", '#include "tools/tool.h"')
    r = run_layers(src, "--check")
    assert r.returncode == 1
    assert f'base/arena.h:{n}: "tools/tool.h": tools (layer 6) is not below base (layer 0)' in r.stdout
    assert table(r.stdout)["base"][3] == 1
    # Without --check the table is printed and the exit status is 0.
    assert run_layers(src).returncode == 0


def test_same_layer_include_fails(tmp_path):
    src, n = plant(tmp_path, "trace", "trace_vis.h", '#include "op_stats/op_stats.h"')
    r = run_layers(src, "--check")
    assert r.returncode == 1
    assert f'trace/trace_vis.h:{n}: "op_stats/op_stats.h": op_stats (layer 5) is not below trace (layer 5)' in r.stdout


def test_bare_include_of_another_folder_fails(tmp_path):
    src, n = plant(tmp_path, "xplane", "group.c", '#include "session.h"')
    r = run_layers(src, "--check")
    assert r.returncode == 1
    assert f'xplane/group.c:{n}: "session.h": not in xplane/; name its folder' in r.stdout


def test_unknown_folder_fails(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(REPO / "src", src)
    (src / "misc").mkdir()
    (src / "misc" / "x.c").write_text("int x;\n")
    r = run_layers(src, "--check")
    assert r.returncode == 1
    assert "misc: folder not in the layer table of contrib/layers.sh" in r.stdout
