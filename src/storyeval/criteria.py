"""HANNA's six human criteria (5-point Likert)."""

CRITERIA = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]
CODES = dict(zip(["RE", "CH", "EM", "SU", "EG", "CX"], CRITERIA))
ABBREVIATION = {name: code for code, name in CODES.items()}
# Tab. 4's mean over the criteria: plain where every criterion has one scale, else over criteria scaled to [0, 1].
AVERAGE = "Average"
SCALED_AVERAGE = "Average (criteria scaled to [0, 1])"
AVERAGES = (AVERAGE, SCALED_AVERAGE)


def ordered_criteria(names) -> list[str]:
    """HANNA's six in their order, then any other criterion (e.g. StoryER's "Overall") sorted."""
    present = set(names)
    return [name for name in CRITERIA if name in present] + sorted(present - set(CRITERIA))
