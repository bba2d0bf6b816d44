"""Pluggable controller policies."""
