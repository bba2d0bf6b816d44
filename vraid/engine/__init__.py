"""The async data path, one module per layer (docs/architecture.md).

array (host API) -> cache (write-back) -> planner/executor (stripe) -> members (queues);
beside them health, degraded, rebuild, scrub, recovery, events, metrics and the clock.
"""
