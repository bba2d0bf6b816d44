"""The placement layer (seed 004, Hua, Vu & Hu: write buffers over a stripe directory).

* :mod:`.writes`: :class:`~vraid.engine.placement.writes.PlacedWrites`, the layer itself: it
  performs the steps a placement policy (``policies/placement``) returns and keeps the
  buffered bytes;
* :mod:`.directory_store`: the stripe directory's durable copy on the members (checkpoints
  and a journal, group commit).

The default placement (``static``) needs no stripe directory and runs no layer here.
"""
