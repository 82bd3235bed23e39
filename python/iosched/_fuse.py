"""The `iosched-fuse` entry point: real mode's command line (mount, umount, calibrate), run
inside the native extension, so that an installed package needs no separate binary.

    python -m iosched._fuse mount BACKING MNT --scheduler anticipatory ...
"""

import sys


def self_command() -> list:
    """How to start real mode again (the mount's daemon re-executes itself)."""
    return [sys.executable, "-m", "iosched._fuse"]


def main() -> None:
    from . import _native

    sys.exit(_native.fuse_main(sys.argv[1:], self_command()))


if __name__ == "__main__":
    main()
