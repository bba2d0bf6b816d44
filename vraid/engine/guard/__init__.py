"""The policy guard: a student's policy may fail, the mount may not (hardening issue, item 1).

:class:`PolicyGuard` (:mod:`~vraid.engine.guard.policy_guard`, whose docstring says what each
family's wrapper checks) puts every policy the engine runs behind a wrapper of its family
(:mod:`~vraid.engine.guard.guarded`; the cache organisation's, and what replaces a failed
one, in :mod:`~vraid.engine.guard.guarded_cache`). The wrappers import nothing of the guard:
they know it as the :class:`~vraid.engine.guard.guarded.Guard` protocol.
"""

from .guarded import (Fault, Guard, Guarded, GuardedOrder, GuardedPrefetch, GuardedQueue, GuardedQueueFactory,
                      GuardedScheduler, GuardedTransform, Invalid, PolicyFault)
from .guarded_cache import GuardedOrganisation, PinnedOrganisation
from .policy_guard import MODES, STALL_LIMIT, PolicyGuard

__all__ = ["Fault", "Guard", "Guarded", "GuardedOrder", "GuardedOrganisation", "GuardedPrefetch", "GuardedQueue",
           "GuardedQueueFactory", "GuardedScheduler", "GuardedTransform", "Invalid", "MODES", "PinnedOrganisation",
           "PolicyFault", "PolicyGuard", "STALL_LIMIT"]
