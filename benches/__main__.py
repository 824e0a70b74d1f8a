"""`python -m pth_top.benches <run|probe> ...`: the child, run in this interpreter."""

from __future__ import annotations

import sys

from pth_top.benches.child.entry import main

if __name__ == "__main__":
    sys.exit(main())
