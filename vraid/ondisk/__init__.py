"""What lives on the member files and beside them: superblocks, the write-intent bitmap,
assembly, failure records and ``vraid.toml``."""
