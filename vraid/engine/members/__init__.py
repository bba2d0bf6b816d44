"""The members: one queue and worker per member store (``queues``: :class:`Members`,
:class:`Priority` classes host/prefetch/destage/rebuild, the queue-order policy inside a
class, inline no-await execution on an idle synchronous store) and the rule for syncing on
the trio thread (``inline_sync``)."""
