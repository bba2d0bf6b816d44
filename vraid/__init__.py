"""vraid: a virtual RAID disk for teaching and experimentation.

A cached RAID-5 controller (pyfuse3 + trio) behind one image file, built from
five papers on RAID write caches; see README.md and docs/architecture.md.
"""

__version__ = "0.1.0"
