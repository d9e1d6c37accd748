"""The one exception a user sees: a single line naming the file, node and key at fault."""


class DptoolError(Exception):
    """An error in the user's project or input; the CLI prints it as one line and exits 1."""
