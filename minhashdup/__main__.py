"""``python -m minhashdup``: the same CLI as the ``minhashdup`` command."""

from minhashdup.cli import main

if __name__ == "__main__":
    main()
