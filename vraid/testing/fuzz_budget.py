"""How much a ``vraid fuzz`` run does by default.

Kept apart from :mod:`vraid.testing.fuzz` so that the CLI can show these defaults in
``--help`` without importing hypothesis: every ``vraid`` command, the mount daemon among
them, builds the whole parser at start.
"""

#: random runs (hypothesis examples) per case
DEFAULT_EXAMPLES = 10
#: most steps per example
DEFAULT_STEPS = 25
