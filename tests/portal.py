"""The tests' name for :mod:`vraid.testing.portal` (the model machines moved into the package)."""

from vraid.testing.portal import ArrayPortal, PortalError

__all__ = ["ArrayPortal", "PortalError"]
