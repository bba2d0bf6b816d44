"""Member stores and their wrappers."""
