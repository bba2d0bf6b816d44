"""The 1.2 rule of seed 000 sec. III-D (vraid.core.stride_rule): S^max and excluded regions."""

from __future__ import annotations

import pytest

from vraid.core.stride_rule import THRESHOLD, ct_permitted, derive_limits


def test_threshold_is_the_papers():
    assert THRESHOLD == 1.2


def test_step_curve_gives_the_first_fast_stride():
    # slow for S = 2, 3, fast from 4 on: S^max = 4, CT for S = 2, 3
    S = list(range(1, 9))
    assert derive_limits(S, [1.0, 40.0, 25.0, 1.1, 1.0, 1.0, 1.0, 1.0]) == (4, [])


def test_nothing_slow_gives_one():
    """Figs. 9(b), 9(c): S_r^max = 1, no read transform at all."""
    assert derive_limits([1, 2, 3, 4], [1.0, 1.0, 0.9, 1.05]) == (1, [])
    assert derive_limits([1], [1.0]) == (1, [])


def test_exactly_the_threshold_counts_as_slow():
    """'less than 1.2' is fast; 1.2 itself is not."""
    assert derive_limits([1, 2, 3], [1.0, 1.2, 1.0]) == (3, [])
    assert derive_limits([1, 2, 3], [1.0, 1.1999, 1.0]) == (1, [])


def test_a_dip_below_the_threshold_inside_the_slow_range_is_an_excluded_region():
    """Fig. 9(d): fast strides below S^max are excluded from CT."""
    S = list(range(1, 13))
    norm = [1.0, 9.0, 8.0, 1.0, 1.1, 7.0, 6.0, 5.0, 1.0, 3.0, 1.0, 1.0]
    s_max, regions = derive_limits(S, norm)
    assert s_max == 11
    assert regions == [[4, 5], [9, 9]]
    assert [s for s in range(1, 14) if ct_permitted(s, s_max, regions)] == [2, 3, 6, 7, 8, 10]


def test_slow_at_the_largest_stride_gives_a_lower_bound():
    assert derive_limits([1, 2, 4, 8], [1.0, 5.0, 3.0, 2.0]) == (9, [])


def test_sparse_strides_use_measured_points():
    s_max, regions = derive_limits([1, 2, 4, 8, 16, 32], [1.0, 3.0, 1.0, 2.5, 1.0, 1.0])
    assert (s_max, regions) == (16, [[4, 4]])


def test_the_contiguous_point_is_never_slow_and_may_be_missing():
    # a measured S = 1 above the threshold (a noisy reference) does not count
    assert derive_limits([1, 2, 3], [1.5, 1.0, 1.0]) == (1, [])
    assert derive_limits([2, 3, 5], [4.0, 1.0, 1.0]) == (3, [])


def test_custom_threshold():
    S, norm = [1, 2, 3, 4], [1.0, 1.5, 1.3, 1.0]
    assert derive_limits(S, norm) == (4, [])
    assert derive_limits(S, norm, threshold=1.4) == (3, [])


@pytest.mark.parametrize("S, norm, threshold", [
    ([1, 2], [1.0], 1.2),
    ([1, 1], [1.0, 1.0], 1.2),
    ([2, 1], [1.0, 1.0], 1.2),
    ([0, 1], [1.0, 1.0], 1.2),
    ([1, 2], [1.0, float("nan")], 1.2),
    ([1, 2], [1.0, float("inf")], 1.2),
    ([1, 2], [1.0, 2.0], 0.0),
])
def test_rejects_what_is_not_a_curve(S, norm, threshold):
    with pytest.raises(ValueError):
        derive_limits(S, norm, threshold)


def test_ct_permitted_is_eq_9():
    assert ct_permitted(3, 4, [])
    assert not ct_permitted(4, 4, [])
    assert not ct_permitted(5, 4, [])
    assert not ct_permitted(2, 1, [])
    assert not ct_permitted(3, 8, [[3, 5]])
    assert ct_permitted(6, 8, [[3, 5]])
