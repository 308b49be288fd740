"""How a printed number is graded against storyeval's: its printed precision and the rounding rules that may
give it (the reproduction audits, storyeval.audit and storyeval.audit_datasets). A module of its own: the
workflow's start-up plans the datasets' audit without importing the HANNA audit's statistics."""

import math


def decimals(values) -> int:
    """Printed precision: the most decimals any printed number of a column shows (repr, trailing zeros dropped)."""
    places = [
        len(repr(float(value)).split(".")[1].rstrip("0")) if isinstance(value, float) else 0
        for value in values
        if isinstance(value, (int, float)) and not isinstance(value, bool)
    ]
    return max(places, default=0)


def half_up(value: float, places: int) -> float:
    return math.floor(value * 10**places + 0.5 + 1e-9) / 10**places


def grade_number(printed: float, ours: float | None, places: int) -> str:
    """exact: ours rounds to the printed value; within: another rounding rule gives it (half up, or half up
    through one more decimal, as a table copied from a 2-decimal one); differs otherwise (or missing)."""
    if ours is None or not math.isfinite(ours):
        return "differs"
    if abs(round(ours, places) - printed) < 1e-9:
        return "exact"
    others = (half_up(ours, places), half_up(half_up(ours, places + 1), places))
    return "within" if any(abs(value - printed) < 1e-9 for value in others) else "differs"
