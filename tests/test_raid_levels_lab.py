"""Lab ``raid-levels`` (issue 32 item 5): the answers are the engine's member I/Os and agree with
the geometry; the lab takes its levels from the registry, so a level registered there (here a
throwaway RAID-4-like scheme) is dealt, mapped and counted with no change to the lab."""

from __future__ import annotations

import pytest
from levels_fixture import fixed_parity_level, mirror_level  # noqa: F401  (fixtures)

from vraid.cli.main import main
from vraid.core import redundancy
from vraid.labs import get, runner
from vraid.labs.raid_levels import full_stripe_writes, geometry_for, member_counts, positions, small_writes
from vraid.sim.experiment import levels_book

LAB = get("raid-levels")


def by_key(seed):
    return {q.key: q for q in LAB.questions(seed)}


@pytest.mark.parametrize("seed", range(6))
def test_forward_answers_are_where_the_geometry_puts_the_blocks(seed):
    g, qs, dealt = LAB.geometry(seed), by_key(seed), LAB.deal(seed)
    for key in ("q1", "q2"):
        _, first, count = dealt[key]
        want = {f"{a.disk}:{a.member_block}" for a in map(g.locate, range(first, first + count))}
        assert qs[key].answer == want
    _, block, _ = dealt["q3"]
    a = g.locate(block)
    cover = g.redundancy.coverage(g.data_disks)  # a mirror's write writes only the copies of its column
    written = {f"{a.disk}:{a.member_block}"} | {f"{d}:{a.member_block}" for j, d in enumerate(g.parity_disks(a.stripe))
                                                if cover is None or a.strip in cover[j]}
    assert qs["q3"].answer == written
    reads = qs["q4"].answer
    if not g.redundancy.parity_columns or cover is not None:  # RAID-0, or a mirror: a write reads nothing
        assert reads == frozenset()
    else:  # read-modify-write reads what it writes; reconstruct-write the row's other data blocks
        others = {f"{d}:{a.member_block}" for d in g.data_disks_of(a.stripe) if d != a.disk}
        assert reads in (written, others)


@pytest.mark.parametrize("seed", range(6))
def test_reverse_answers_name_the_operation_whose_io_is_listed(seed):
    g, qs, dealt = LAB.geometry(seed), by_key(seed), LAB.deal(seed)
    for key in ("q5", "q6"):
        op, *blocks = qs[key].answer
        assert (op, blocks[0], len(blocks)) == dealt[key]
        listed = qs[key].prompt.split("I/Os? ", 1)[1]
        assert ("write" in listed) == (op == "write")
        for b in blocks:
            a = g.locate(b)
            assert f"disk {a.disk} {'write' if op == 'write' else 'read'}" in listed


def test_every_registered_level_is_dealt_and_the_small_write_counts_follow_the_check_strips():
    dealt = {LAB.dealt(seed)[0] for seed in range(40)}
    assert dealt == set(redundancy.levels())
    for level in redundancy.levels():
        assert member_counts(level) and min(member_counts(level)) >= redundancy.for_level(level).min_disks
    for level, ios in small_writes(5).items():
        copies, depends = levels_book.dependence(level, 5)
        deps, d = len(depends[0]), redundancy.for_level(level).data_columns(5)
        reads, writes = sum(io.op == "r" for io in ios), sum(io.op == "w" for io in ios)
        assert writes == 1 + deps  # the data block and each check strip that depends on it
        if all(copies[j] == 0 for j in depends[0]):
            assert reads == 0  # no checks, or copies: nothing to read
        else:  # read-modify-write when strictly fewer I/Os than reconstruct-write (seed 000 sec. II-A)
            rmw, rcw = 1 + deps, d - 1
            assert reads == (rmw if 2 * rmw < rcw + 1 + deps else rcw)
    for level, ios in full_stripe_writes(5).items():  # every strip of every member written once, nothing read
        depth = geometry_for(level, 5, 1).depth  # strips a member holds of a stripe (RAID-10 on 5 members: 2)
        assert sorted((io.disk, io.op) for io in ios) == [(d, "w") for d in range(5) for _ in range(depth)]
        assert sum(io.length for io in ios) == 5 * depth * 4096


def test_a_level_registered_later_is_dealt_with_no_change_to_the_lab(fixed_parity_level, capsys):
    level = fixed_parity_level
    seed = redundancy.levels().index(level)  # seeds below len(LEVELS) deal the levels in turn
    assert LAB.dealt(seed)[0] == level
    g, qs = LAB.geometry(seed), by_key(seed)
    assert g.title.startswith(f"RAID-{level}")
    last = g.ndisks - 1
    _, block, _ = LAB.deal(seed)["q3"]
    a = g.locate(block)
    assert qs["q3"].answer == {f"{a.disk}:{a.member_block}", f"{last}:{a.member_block}"}  # parity on the last disk
    assert all(not p.startswith(f"{last}:") for key in ("q1", "q2") for p in qs[key].answer)  # never data
    assert level in small_writes(5) and len(small_writes(5)[level]) == 4
    lines: list[str] = []
    assert runner.batch(LAB, seed, lines.append) == 0, "\n".join(lines)
    assert main(["lab", "run", "raid-levels", "--seed", str(seed), "--batch"]) == 0
    assert main(["lab", "run", "raid-levels", "--seed", str(seed), "--answers"]) == 0
    assert f"A RAID-{level} parity-last array" in capsys.readouterr().out


def test_positions_count_every_block_of_a_request():
    g = LAB.geometry(1)
    from vraid.testing.member_log import MemberIO

    ios = [MemberIO(2, "w", g.data_offset + 3 * g.block_size, 2 * g.block_size), MemberIO(1, "r", g.data_offset, g.block_size)]
    assert positions(g, ios, "w") == {"2:3", "2:4"} and positions(g, ios, "r") == {"1:0"}


def test_reverse_names_the_block_a_mirror_copy_holds(mirror_level):
    from vraid.core.geometry import Geometry
    from vraid.labs.raid_levels import owner

    g = Geometry(mirror_level, 2, 8, 4096, 4096, "mirror", 0)
    assert owner(g, 0, 3) == "block 3"
    assert owner(g, 1, 3) == "check strip 0 of stripe 3, a copy of block 3"
