"""Lab ``double-failure`` (issue 32 item 5): the answers agree with the geometry and with Anvin's
cases, the reads are what the engine did with two members failed, and the worked byte is the
byte that was lost."""

from __future__ import annotations

import re

import pytest

from vraid.core import gf256

from vraid.labs import get, runner
from vraid.labs.double_failure import CASES, case, roles

LAB = get("double-failure")


def by_key(seed):
    return {q.key: q for q in LAB.questions(seed)}


@pytest.mark.parametrize("seed", range(8))
def test_the_reads_of_a_lost_strip_follow_anvins_cases(seed):
    g, failed = LAB.geometry(seed)
    s, d, two = LAB.stripes(seed)
    qs = by_key(seed)
    assert d in failed and g.strip_of_disk(s, d) is not None
    assert qs["q2"].answer == frozenset(roles(g, s, failed))
    other = next(f for f in failed if f != d)
    p, q = g.parity_disks(s)
    survivors_data = {x for x in g.data_disks_of(s) if x not in failed}
    want = {"two data": survivors_data | {p, q}, "data+P": survivors_data | {q},
            "data+Q": survivors_data | {p}}[case(g, s, failed)]
    assert qs["q3"].answer == frozenset(want)
    assert other not in qs["q3"].answer and d not in qs["q3"].answer
    assert qs["q4"].answer == {"two data": "p and q", "data+P": "q", "data+Q": "p"}[case(g, s, failed)]
    counts = qs["q1"].answer
    assert sum(counts) == g.ndisks and counts[CASES.index("two data")] >= 1


@pytest.mark.parametrize("seed", range(8))
def test_p_alone_leaves_256_pairs_p_and_q_one_and_it_is_the_lost_byte(seed):
    qs = by_key(seed)
    assert qs["q7"].answer == 256 and qs["q8"].answer == 1
    assert qs["q6"].answer != 0
    # q9: the byte rebuilt from P and Q satisfies both equations given in the prompts
    pxy = int(re.search(r"is (\d+)\. How many", qs["q7"].prompt).group(1))
    dx = qs["q9"].answer
    dy = int(re.search(r"= P_xy \+ D\d+ = (\d+)", qs["q9"].explanation).group(1))
    assert dx ^ dy == pxy
    m = re.search(r"Q_xy = g\^(\d+) D\d+ \+ g\^(\d+) D\d+\) is (\d+)", qs["q8"].prompt)
    sx, sy, qxy = map(int, m.groups())
    assert gf256.mul(gf256.gexp(sx), dx) ^ gf256.mul(gf256.gexp(sy), dy) == qxy
    assert qs["q6"].answer == gf256.gexp(sx) ^ gf256.gexp(sy)


def test_asymmetric_layouts_give_slots_that_are_not_the_strip_numbers():
    seen = set()
    for seed in range(40):
        g, _ = LAB.geometry(seed)
        s, d, _ = LAB.stripes(seed)
        seen.add(by_key(seed)["q5"].answer != g.strip_of_disk(s, d))
    assert seen == {True, False}


@pytest.mark.parametrize("seed", [2, 5])
def test_batch_grades_its_own_answers_right(seed):
    lines = []
    assert runner.batch(LAB, seed, lines.append) == 0
    assert f"{len(LAB.questions(seed))} of {len(LAB.questions(seed))} right" in "\n".join(lines)
