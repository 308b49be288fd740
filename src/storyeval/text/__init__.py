"""Text datasets (loaders, cleaning, tokenisation) for the metrics computed from texts."""
