"""The paper's untar/copy/remove tree, synthesized (paper 002 sec. 4.2.4; vc_raid_tree.py)."""

from __future__ import annotations

import tarfile

import pytest

from vraid.errors import VraidError
from vraid.sim.experiment import vc_raid as vc
from vraid.sim.experiment import vc_raid_tree as vt
from vraid.sim.experiment.sizes import size_options
from vraid.sim.experiment.vc_raid_bench import check_tree, make_tree_tar, tree_file_count


def test_layout_has_the_papers_counts_and_size():
    dirs, files = vt.layout()
    assert len(dirs) == 952 and len(files) == 12322  # "952 directories, 12322 files"
    assert sum(s for _, s in files) == 122_000_000  # "122 MB", exactly
    assert round(122_000_000 / len(files) / 1e3, 1) == 9.9  # "9.9 KB on average"
    assert len(set(dirs)) == len(dirs) and len({p for p, _ in files}) == len(files)
    parents = set(dirs)
    assert all(d.rsplit("/", 1)[0] in parents for d in dirs[1:])  # every directory hangs under an earlier one
    assert all(p.rsplit("/", 1)[0] in parents for p, _ in files)
    depth = max(d.count("/") for d in dirs)
    assert 3 <= depth <= 30  # a tree of some levels, not a flat directory nor a chain
    sizes = sorted(s for _, s in files)
    assert sizes[0] >= 0 and sizes[len(sizes) // 2] < 9900 < sizes[-1]  # skewed: the median under the mean
    assert vt.layout() == (dirs, files)  # seeded: the same on every machine


def test_tar_is_deterministic_and_holds_the_layout(tmp_path, monkeypatch):
    monkeypatch.setattr(vt, "PAPER_TREE", {"dirs": 12, "files": 40, "bytes": 400_000})
    a, b = tmp_path / "a.tar", tmp_path / "b.tar"
    info = make_tree_tar(a, "paper")
    vt.write_tar(b)
    assert a.read_bytes() == b.read_bytes()
    assert (info["files"], info["dirs"], info["mb"], info["mean_kb"]) == (40, 12, 0.4, 10.0)
    with tarfile.open(a) as t:
        members = t.getmembers()
    assert sum(m.isfile() for m in members) == 40 and sum(m.isdir() for m in members) == 12
    assert sum(m.size for m in members if m.isfile()) == 400_000
    assert all(m.name.startswith("src") and m.mtime == 0 and m.uid == 0 for m in members)
    seen: set[str] = set()
    for m in members:  # a directory comes before everything in it, so tar xf makes it first
        assert m.name == "src" or m.name.rsplit("/", 1)[0] in seen
        if m.isdir():
            seen.add(m.name)


def test_tree_names_and_the_paper_size():
    assert check_tree("paper") == "paper" and tree_file_count("paper") == 12322 + 952
    with pytest.raises(VraidError, match="unknown tree 'huge'"):
        check_tree("huge")
    with pytest.raises(VraidError, match="unknown tree"):
        vc.runs(True, tree="huge")
    assert size_options("vc-raid", "paper")["tree"] == "paper"  # the paper's 122 MB tree at the paper's size
    trees = {s["tree"] for s in vc.runs(False, **size_options("vc-raid", "paper")) if "tree" in s}
    assert trees == {"paper"} and {s["tree"] for s in vc.runs(False) if "tree" in s} == {"full"}
