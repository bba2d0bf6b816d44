"""The log layer (seed 002, Hu & Yang / VC-RAID: a RAM buffer and a log disk in front of the RAID).

* :mod:`.cache`: :class:`~vraid.engine.log.cache.LogCache`, the layer itself: its state, host
  writes into the RAM buffer, fsync, status; put together from
* :mod:`.reads` (every block from its newest copy), :mod:`.level1` (level-1 destage: buffer ->
  log), :mod:`.level2` (level-2 destage: log -> RAID, and the tail), :mod:`.failure` (a failed
  log store) and :mod:`.replay` (the replay after a crash);
* :mod:`.slots`: the slot table of sec. 3.1 (where each logical block's newest copy is);
* :mod:`.medium`: the log stores (sec. 3.2): appends, the tail, the scan at recovery.

The on-disk format is :mod:`vraid.ondisk.logsegment`; which configuration runs (``scd``,
``mcd:N``, ``mirrored``, ``per-disk``) is the ``log`` family of :mod:`vraid.policies.registry`.
"""
