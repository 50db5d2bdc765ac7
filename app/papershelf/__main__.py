"""`python -m papershelf`: the same start as the installed `papershelf` (window or terminal)."""

import sys

from .launcher import main

sys.exit(main())
