"""The read path layer: the clean-block read cache (``readcache``) and the prefetch hook in
front of the layers below (``readpath``; seed 001's MSP runs here)."""
