import sys

from vraid.cli.main import main

sys.exit(main())
