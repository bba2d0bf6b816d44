"""The members: a member request and its :class:`Priority` class, host/prefetch/destage/rebuild
(``request``); one member's queues, the queue-order policy inside a class, and its worker
(``member``: :class:`Member`); all members driven together, batches and flushes, with inline
no-await execution on idle synchronous stores (``queues``: :class:`Members`); and the rule for
syncing on the trio thread (``inline_sync``)."""
