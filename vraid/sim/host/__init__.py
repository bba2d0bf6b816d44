"""The simulated host above the array (``vraid sim --host-readahead``).

Seed 001's SEQP and SASEQP act on the host, per file, in the kernel's read-ahead; the
simulator models that host here: :mod:`.readahead` is the read-ahead state machine (pure),
:mod:`.model` the per-stream page cache that turns file reads into array reads,
:mod:`.anticipatory` the host's anticipatory I/O scheduler (an ablation, off by default). On a real
mount this layer is Linux itself (docs/prefetch.md).
"""

from .anticipatory import DEFAULT_ANTIC_EXPIRE, AnticipatoryQueue
from .model import HostModel
from .readahead import (DEFAULT_MAX, FileReadahead, ReadaheadEvent, ReadaheadSpec, Window, file_windows,
                        init_ra_size, next_ra_size, parse_readahead)

__all__ = ["AnticipatoryQueue", "DEFAULT_ANTIC_EXPIRE", "DEFAULT_MAX", "FileReadahead", "HostModel", "ReadaheadEvent", "ReadaheadSpec", "Window", "file_windows",
           "init_ra_size", "next_ra_size", "parse_readahead"]
