import sys

from pth_top.tui.cli import main

sys.exit(main())
