"""One exception type for every input problem, so scripts and rules report one line."""


class InputError(ValueError):
    """Bad input: the message names the file, the column or key, and the fix."""


QUOTE_MOST = 80  # characters of a value a message quotes: a story pasted as an id stays readable


def quoted(value: object, most: int = QUOTE_MOST) -> str:
    """`value` as a message quotes it: repr, cut to `most` characters (a story, an id, a cell)."""
    text = repr(value)
    return text if len(text) <= most else text[: most - 4] + "...'"
