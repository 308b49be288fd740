"""storyeval: which automatic story-evaluation metrics agree with human judgment."""

__version__ = "0.1.0"
