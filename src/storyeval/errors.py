"""One exception type for every input problem, so scripts and rules report one line."""


class InputError(ValueError):
    """Bad input: the message names the file, the column or key, and the fix."""
