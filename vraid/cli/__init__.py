"""The command line: ``vraid COMMAND`` (entry point :func:`vraid.cli.main.main`)."""
