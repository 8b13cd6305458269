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


def _names_from_patterns() -> list[str]:
    """File names that reach every kind of pygments pattern: each pattern with its wildcards
    filled in a few ways, with prefixes and suffixes, upper-cased, and names no pattern matches."""
    from pygments.lexers._mapping import LEXERS

    fills = [("x", "1", "a"), ("Config.in", "9", "b")]
    names = {"", "README", "LICENSE", "a.GO", "main.go.orig", "x.", ".", "..", "noext"}
    for _, _, _, globs, _ in LEXERS.values():
        for glob in globs:
            for star, mark, bracket in fills:
                name = glob.replace("*", star).replace("?", mark)
                while "[" in name and "]" in name:  # a class: its first member, or the sample
                    left, right = name.index("["), name.index("]")
                    inside = name[left + 1 : right].lstrip("!^")
                    name = name[:left] + (inside[:1] or bracket) + name[right + 1 :]
                names |= {name, "pre" + name, name + ".bak", name.upper()}
    return sorted(names)


def test_the_memoised_lexer_choice_is_pygments_choice_for_every_name() -> None:
    from pygments.lexers import find_lexer_class_for_filename

    from minhashdup.source.tokens import lexer_class_for_filename

    names = _names_from_patterns()
    assert len(names) > 2500
    texts = ["", "#include <stdio.h>\n@interface A\n@end\n<?php echo 1; ?>\n"]
    for text in texts:
        for name in names:  # twice: the first call fills the memo, the second reads it
            want = find_lexer_class_for_filename(name, text)
            assert lexer_class_for_filename(name, text) is want, (name, text[:10])
            assert lexer_class_for_filename(name, text) is want, (name, text[:10])


def test_a_name_several_lexers_claim_is_decided_by_the_text() -> None:
    c = "#include <stdio.h>\nint main(void) { return 0; }\n"
    objc = "#import <Foundation/Foundation.h>\n@interface A : NSObject\n@end\n"
    assert {lexer_for("x.h", c).name, lexer_for("x.h", objc).name} == {"C", "Objective-C"}
