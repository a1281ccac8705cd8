import sys

from ._core.cli.main import main

sys.exit(main())
