# SPDX-License-Identifier: MIT
"""What the check_*.py scripts share: how a check ends."""
import sys


def finish(bad, summary):
    """Print each finding, then the summary line; exit 1 if there was a finding."""
    for b in bad:
        print(b)
    print(summary)
    sys.exit(1 if bad else 0)
