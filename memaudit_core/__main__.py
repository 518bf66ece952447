"""``python -m memaudit_core`` is the ``memaudit`` command."""

import sys

from .cli import main

sys.exit(main())
