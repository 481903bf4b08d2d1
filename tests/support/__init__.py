"""Helpers shared by tests: synthetic training logs in real formats."""
