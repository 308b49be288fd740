"""Fetching, parsing and normalising datasets."""
