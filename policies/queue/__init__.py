"""Queue orders: in which order a member serves the requests waiting in one priority class.

Seed 003, section 3.1: each disk has a host request queue and a destage request queue, the
host queue served first, each in C-LOOK order. In vraid the priority classes are the
engine's (:class:`vraid.engine.members.request.Priority`: host, prefetch, destage, rebuild, served
in that order); the order inside a class is a policy of this family:

* ``fifo`` (:class:`FifoOrder`): arrival order, the default (vraid's behaviour before);
* ``clook`` (:class:`ClookOrder`): C-LOOK, ascending offset from the head, wrapping.

A new order is a :class:`QueueOrder` subclass (``add``, ``pop(head_position)``, ``len``)
and one entry in :data:`QUEUE_ORDERS`. Each member gets one instance per priority class
(:func:`queue_order` turns a name into the factory the engine calls).
"""

from __future__ import annotations

from typing import Callable

from vraid.errors import VraidError
from .base import QueueOrder
from .clook import ClookOrder
from .fifo import FifoOrder

#: built-in queue orders, name -> class
QUEUE_ORDERS: dict[str, type[QueueOrder]] = {"fifo": FifoOrder, "clook": ClookOrder}
DEFAULT = "fifo"

QueueOrderFactory = Callable[[], QueueOrder]


def queue_order(spec: "str | QueueOrderFactory | None") -> QueueOrderFactory:
    """The factory of the queue order ``spec`` names (None: the default, FIFO); a callable
    (a class or a function returning a fresh :class:`QueueOrder`) is returned as it is.

    Raises:
        VraidError: for an unknown name.
    """
    if spec is None:
        return QUEUE_ORDERS[DEFAULT]
    if callable(spec):
        return spec
    name = str(spec).strip()
    try:
        return QUEUE_ORDERS[name]
    except KeyError:
        raise VraidError(f"unknown queue order {name!r}", f"use {' | '.join(QUEUE_ORDERS)}") from None


class OrderFactory:
    """Makes one fresh :class:`QueueOrder` per member and priority class (what the registry
    builds for ``--queue-order NAME[:k=v,...]``; the engine calls it)."""

    def __init__(self, cls: type[QueueOrder], **params) -> None:
        self.cls, self.params = cls, params
        self.name = getattr(cls, "name", cls.__name__)

    def __call__(self) -> QueueOrder:
        return self.cls(**self.params)


__all__ = ["OrderFactory", "ClookOrder", "DEFAULT", "FifoOrder", "QUEUE_ORDERS", "QueueOrder", "queue_order"]
