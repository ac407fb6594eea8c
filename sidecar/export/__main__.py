"""`python -m sidecar.export` (what `make protocol` runs): write the generated files, or --check them."""

import sys

from sidecar.export.mirrors import main

sys.exit(main())
