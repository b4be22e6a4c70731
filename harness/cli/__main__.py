"""`python -m harness.cli …` is `ahp-fuzz …`."""

import sys

from harness.cli import main

sys.exit(main())
