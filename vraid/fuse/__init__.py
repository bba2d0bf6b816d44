"""The mount frontend: the pyfuse3 image, the daemon, its control socket, mount and loop helpers."""
