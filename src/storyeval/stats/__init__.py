"""Statistics: correlations, rankings, intervals."""
