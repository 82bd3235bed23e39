"""The one error kernel mode raises for the user's situation (not root, no /dev/fuse, apt
unreachable, a bad job file, a scheduler the guest lacks, a guest that failed): the CLI prints
its message as `error: ...` and exits 2, no traceback."""


class KernelError(Exception):
    """A problem kernel mode reports in one line (the message names the file, option or value)."""
