import sys

from bertjudge.cli.main import main

sys.exit(main())
