"""``python -m minhashdup`` puts the current folder first on ``sys.path`` and imports the package
before its ``__main__``: in a scanned repository, a ``dataclasses.py`` or a lexer plugin
(``*.dist-info``) there would be imported by the package's own imports. The package imports this
module first, which drops the folder (``os`` and ``sys`` are loaded at every start). While ``-m``
imports the package, and only then, ``sys.argv[0]`` is ``"-m"``: a program that imports the
library keeps its ``sys.path``. A ``minhashdup`` folder in the current folder is still what ``-m``
runs: that is what ``-m`` means.
"""

import os
import sys

if sys.argv[:1] == ["-m"]:
    sys.path[:] = [entry for entry in sys.path if entry not in ("", ".", os.getcwd())]
