"""Lab exercises."""
