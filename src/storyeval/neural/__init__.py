"""Shared neural code: run-time device choice and the one token-embedding pass every embedding metric reads."""
