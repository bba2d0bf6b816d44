"""Shared fixtures and options.

``--run-slow`` runs tests marked ``slow`` (soaks, many crash points); the
README's test command runs everything else, mount tests included.
"""

from __future__ import annotations

import pytest

from mountutil import Session


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", help="also run tests marked slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def session():
    """Mounts, loop devices and daemons of one test, always torn down."""
    s = Session()
    try:
        yield s
    finally:
        s.cleanup()


# -- hypothesis profiles ---------------------------------------------------------
# Chosen with HYPOTHESIS_PROFILE=default|ci|thorough (default: "default").
# "ci" replays the same examples on every run (derandomize); "thorough" is for
# a long run by hand. deadline=None everywhere: the stateful array tests start
# a trio loop per example and fsync member files, so single steps vary a lot.
import os as _os

from hypothesis import settings as _hyp_settings

_hyp_settings.register_profile("default", max_examples=25, stateful_step_count=30, deadline=None)
_hyp_settings.register_profile("ci", max_examples=25, stateful_step_count=30, deadline=None, derandomize=True)
_hyp_settings.register_profile("thorough", max_examples=300, stateful_step_count=50, deadline=None)
_hyp_settings.load_profile(_os.environ.get("HYPOTHESIS_PROFILE", "default"))
