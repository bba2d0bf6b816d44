"""The write-back cache (seed 000, seed 003) and its NVRAM journal.

:class:`WriteBackCache` (:mod:`~vraid.engine.cache.writeback`) is put together from one
module per idea: units and allocation (:mod:`~vraid.engine.cache.units`), absorbing writes
with DDIRTY (:mod:`~vraid.engine.cache.absorb`), serving reads
(:mod:`~vraid.engine.cache.reads`), the destager (:mod:`~vraid.engine.cache.destager`),
durability (:mod:`~vraid.engine.cache.durability`) and metrics
(:mod:`~vraid.engine.cache.metrics`). The journal that keeps its dirty blocks durable is
:mod:`~vraid.engine.cache.journal`.
"""

from .journal import Journal, NvramJournal, as_journal
from .metrics import CacheMetrics
from .units import C, D, E, Unit
from .writeback import WriteBackCache

__all__ = ["C", "CacheMetrics", "D", "E", "Journal", "NvramJournal", "Unit", "WriteBackCache", "as_journal"]
