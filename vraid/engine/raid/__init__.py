"""The RAID layer: the last layer of the data path, the only one that talks to the members.

``layer`` (:class:`RaidLayer`: the plan driver, state matrix -> rxw plan -> CT hook ->
executor, write-through writes, reads and reconstruction), ``locks`` (stripe locks),
``plans`` (the rxw plans a stripe write makes), ``shapes`` (the small write and the
full-stripe write as plan shapes the executor runs without a stripe buffer), ``stripe``
(the executor and stripe buffers), ``degraded`` (plans and reads without missing members),
``failures`` (member failure, spares, the rebuild hand-off), ``health``, ``rebuild``,
``scrub``. Rebuild, scrub, resync, recovery and the placement use the layer's public
methods only.
"""
