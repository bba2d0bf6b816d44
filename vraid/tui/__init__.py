"""The terminal frontend (rich): ``vraid top`` and the tables other commands print."""
