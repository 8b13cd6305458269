"""From disk to token streams: walking, reading, lexers, one file to its shingles.

Where to look:

- ``walk``: which files are scanned, and every skip with its reason; ``ignore``: the globs,
  ``.gitignore`` files and version-control folders that leave files out; ``kinds``: generated,
  vendored, data and prose files; ``attributes``: ``linguist-generated`` and
  ``linguist-vendored`` in ``.gitattributes`` files.
- ``tokens``: decode the bytes, choose the lexer by file name, lex with an engine
  (``token_texts``); ``significant``: which tokens count (comments and whitespace dropped),
  one rule for both engines; ``fastlex``: the fast engine, pygments' own rules run as joined
  patterns; ``patterns``: what those rules' regular expressions allow.
- ``extract``: one file to its shingles (read, reject binaries, lex, shingle);
  ``extracted``: what that gives back.
- ``safeio``: reading a file of an untrusted tree (regular files only, never blocking, never
  more than ``max_size`` bytes), a rules file (``.gitignore``, ``.gitattributes``) too.
- ``paths``: the path arguments the library takes.

Imports go one way: ``tokens`` -> ``fastlex`` -> ``patterns``, ``significant``; ``walk`` ->
``attributes``, ``kinds`` -> ``ignore`` -> ``safeio`` -> ``witnesses``. Nothing here may import
``engine`` or a layer above it (tests/test_shape.py checks).
"""
