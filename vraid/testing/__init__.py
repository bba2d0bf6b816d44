"""Drive the engine from synchronous code: :mod:`vraid.testing.session` (tests, labs, fuzz, ``vraid top --sim``)."""
