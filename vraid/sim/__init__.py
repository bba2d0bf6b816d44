"""Virtual time: the simulator, workloads, traces, the stride benchmark and the experiments."""
