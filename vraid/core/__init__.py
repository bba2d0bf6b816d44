"""Pure, synchronous logic: geometry and mapping, the rxw-matrix planner, redundancy, units.

Nothing here awaits, reads a clock or touches a store: the engine, the policies, the
simulator and the labs all build on it.
"""
