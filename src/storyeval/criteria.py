"""HANNA's six human criteria (5-point Likert)."""

CRITERIA = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]
CODES = dict(zip(["RE", "CH", "EM", "SU", "EG", "CX"], CRITERIA))
ABBREVIATION = {name: code for code, name in CODES.items()}
