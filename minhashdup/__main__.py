"""``python -m minhashdup``: the same CLI as the ``minhashdup`` command.

``python -m`` puts the current folder first on ``sys.path``; in a scanned repository that folder
is untrusted, and pygments looks for lexer plugins (``*.dist-info/entry_points.txt``) on
``sys.path``. ``-m`` imports the package before this module: its ``__init__`` drops the folder
before it imports anything else, and so does this module, should it be run otherwise. The
``minhashdup`` command never had it.
"""

import os
import sys

_here = os.getcwd()
sys.path[:] = [entry for entry in sys.path if entry not in ("", ".", _here)]

from minhashdup.cli import main  # noqa: E402  (after sys.path is cleaned, on purpose)

if __name__ == "__main__":
    main()
