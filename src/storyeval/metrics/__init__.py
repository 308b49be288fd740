"""Metrics computed from texts, one module per metric or family; see catalog.py and base.py."""
