"""What a tree says of its own files, read as git reads it: ``.gitignore`` and
``.git/info/exclude`` (:mod:`.ignore`), the linguist attributes of ``.gitattributes``
(:mod:`.attributes`), and git's glob dialect where pathspec reads it otherwise (:mod:`.globs`)."""
