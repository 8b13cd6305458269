from __future__ import annotations

import pytest
from pygments.lexers import CLexer, GoLexer, PythonLexer

from minhashdup.source.significant import significant_tokens
from minhashdup.source.tokens import ENGINES, NoLexerError, decode, lexer_for, token_texts


def test_comments_and_whitespace_are_dropped_and_token_text_kept() -> None:
    src = '// head\nfunc  f() {\n\t/* block */ return   "a  b" // tail\n}\n'
    assert list(significant_tokens(GoLexer(), src)) == ["func", "f", "(", ")", "{", "return", '"a  b"', "}"]


def test_preprocessor_directives_are_code_not_comments() -> None:
    tokens = list(significant_tokens(CLexer(), "#include <stdio.h>\n#define N 3 /* n */\nint x;\n"))
    assert tokens[:3] == ["#", "include", "<stdio.h>"]
    assert any(t.startswith("define N 3") for t in tokens)
    assert "/* n */" not in tokens
    assert all(t.strip() for t in tokens)  # the directives' line ends are whitespace


@pytest.mark.parametrize("engine", ENGINES)
def test_python_docstring_is_kept_but_comment_dropped(engine: str) -> None:
    src = 'def f():\n    """doc\n    more"""\n    # note\n    return 1\n'
    want = ["def", "f", "(", ")", ":", '"""doc\n    more"""', "return", "1"]
    assert list(significant_tokens(PythonLexer(), src)) == want
    assert token_texts(PythonLexer(), src, engine) == want


def test_decode_utf8_and_lossless_fallback() -> None:
    assert decode("héllo".encode()) == ("héllo", False)
    assert decode(b"\xef\xbb\xbfx") == ("x", False)
    text, fallback = decode(b"ok \xff\xfe end")
    assert fallback
    assert text.encode("utf-8", "surrogateescape") == b"ok \xff\xfe end"


def test_lexer_by_name_then_by_content() -> None:
    assert lexer_for("main.go", "").name == "Go"
    assert lexer_for("tool", "#!/usr/bin/env python3\nimport os\n").name == "Python"


def test_plain_text_counts_as_no_lexer() -> None:
    with pytest.raises(NoLexerError):
        lexer_for("notes.txt", "some words")
    with pytest.raises(NoLexerError):
        lexer_for("NOTES", "just some words without any code in them")
