import sys

from bertjudge.cli import main

sys.exit(main())
