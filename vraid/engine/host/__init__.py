"""The host API (``array``: :class:`Array`): validates a host request, counts it, and hands
it to the top of the layer chain that ``vraid.engine.build`` assembled."""
