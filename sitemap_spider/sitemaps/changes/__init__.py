"""The set published before, and what a new publish changes from it."""
