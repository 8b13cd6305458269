"""The fast engine gives exactly pygments' significant tokens: differential tests."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name

from minhashdup.source.fastlex import FastLexer, supported
from minhashdup.source.patterns import first_chars
from minhashdup.source.significant import significant_tokens, significant_tokens_with_lines
from minhashdup.source.tokens import token_texts, token_texts_with_lines

JUNK = [
    '"',
    "'",
    "`",
    "\\",
    "/*",
    "*/",
    "//",
    "#",
    "\n",
    "\r\n",
    "\t",
    " ",
    "é",
    "\udcff",
    "\x01",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ":",
    ",",
    ".",
    "<",
    ">",
    "=",
    "!",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&",
    "|",
    "^",
    "~",
    "?",
    "@",
    "$",
    "0x",
    "1e9",
    "0b10",
    "'''",
    '"""',
    'r"',
    "f'",
    "b'",
    "${",
    "<<EOF",
    "--",
    "#!",
]

FRAGMENTS = {
    "go": [
        "package main",
        'import (\n\t"fmt"\n)',
        "func f(x int) (int, error) {",
        "if err != nil {",
        "return",
        "x := []int{1, 2}",
        "go func() {}()",
        "`raw\nstring`",
        "'\\n'",
        "type T struct{ a int }",
        "}",
        "defer",
        "select {",
        "case <-ch:",
        "0x1Fp-2",
        "1.5e3i",
        "/* block",
        "// line\n",
        "...",
        "map[string]any{}",
    ],
    "python": [
        "def f(a, *b, **c):",
        "class A(B):",
        "    return x",
        "@decorator",
        "lambda x: x",
        'f"{x!r:>10}"',
        "'''doc",
        '"""',
        "async with a as b:",
        "match x:",
        "    case [1, *rest]:",
        "import os.path as p",
        "from . import x",
        "# comment\n",
        "0o17",
        "1_000j",
        "x[1:2, ...]",
        "print(*a)",
        "rb'\\x00'",
        "yield",
    ],
    "c": [
        "#include <stdio.h>",
        "#define MAX(a, b) ((a) > (b) ? (a) : (b))",
        "int main(void) {",
        "size_t n = 0;",
        'printf("%d\\n", n);',
        "/* multi",
        "line */",
        "// c99\n",
        "struct s { int a; };",
        "char *p = 'x';",
        "#if defined(X)\n",
        "#endif\n",
        "unsigned long long x = 10ULL;",
        "goto end;",
        "end:",
        "return 0;",
        "}",
    ],
    "cpp": [
        "template <typename T>",
        "class A : public B {",
        "std::vector<int> v{1, 2};",
        "auto l = [&](int x) {",
        'R"(raw)"',
        "namespace n {",
        "constexpr int k = 1'000;",
        "operator<<(std::ostream& o)",
        "::x",
        "#pragma once\n",
        "co_await x;",
        "nullptr",
        "public:",
        "virtual ~A() = default;",
        "};",
    ],
    "java": [
        "package a.b;",
        "import java.util.*;",
        "public class A<T> extends B implements C {",
        "@Override",
        "public static void main(String[] args) {",
        'System.out.println("x");',
        "var x = 10L;",
        '"""\ntext block\n"""',
        "record P(int x) {}",
        "switch (x) { case 1 -> y; }",
        "/** doc */",
        "}",
    ],
    "javascript": [
        "const f = async (a, ...b) => {",
        "let x = `t ${a + `n${b}`} e`;",
        "class A extends B {",
        "/re[g]ex/gi.test(s)",
        "import x from 'y';",
        "export default {",
        "a?.b ?? c",
        "0n",
        "#priv",
        "function* g() { yield 1; }",
        "// line\n",
        "/* block */",
        "}",
        "x = a / b / c;",
    ],
    "typescript": [
        "interface I<T> { a?: T; }",
        "type U = A | B;",
        "let x: number = 1;",
        "enum E { A = 1 }",
        "function f<T extends object>(a: T): asserts a {",
        "declare module 'm' {",
        "as const",
        "@dec()",
        "abstract class A {}",
        "x!",
        "readonly a: string;",
        "`${x}`",
        "}",
    ],
    "rust": [
        "fn main() -> Result<(), Box<dyn Error>> {",
        "let mut x: Vec<u8> = vec![1, 2];",
        "impl<T> A for B<T> {",
        'r#"raw"#',
        "b'x'",
        "'a'",
        "'lifetime",
        "#[derive(Debug)]",
        "match x { Some(y) => y, _ => 0 }",
        "/* nested /* c */ */",
        "//! doc\n",
        "macro_rules! m { () => {} }",
        "0xff_u8",
        "1e-3f64",
        "}",
    ],
}


def _lexer(name: str) -> Lexer:
    return get_lexer_by_name(name, stripnl=False, ensurenl=True)


@pytest.mark.parametrize("name", sorted(FRAGMENTS))
def test_the_fast_engine_covers_the_main_languages(name: str) -> None:
    assert supported(type(_lexer(name)))


@pytest.mark.parametrize("name", sorted(FRAGMENTS))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fast_engine_tokens_equal_pygments(name: str, data: st.DataObject) -> None:
    pieces = st.sampled_from(FRAGMENTS[name] + JUNK)
    text = "".join(data.draw(st.lists(pieces, max_size=40), label="pieces"))
    text += data.draw(st.text(max_size=20), label="tail")  # anything at all: unterminated, stray
    lexer = _lexer(name)
    assert token_texts(lexer, text, "fast") == list(significant_tokens(lexer, text))
    # The lines the side-by-side views use: from the fast engine's offsets, as pygments counts them
    # (\r\n and lone \r included).
    text = text.replace("\n", data.draw(st.sampled_from(["\n", "\r\n", "\r"]), label="newline"))
    texts, lines = token_texts_with_lines(lexer, text, "fast")
    assert list(zip(texts, lines, strict=True)) == list(significant_tokens_with_lines(lexer, text))


def test_fallback_engine_is_pygments() -> None:
    lexer = _lexer("go")
    assert token_texts(lexer, "x := 1 // c", "pygments") == ["x", ":=", "1"]
    with pytest.raises(TypeError):
        FastLexer(get_lexer_by_name("html+php"))  # not a plain RegexLexer


@pytest.mark.parametrize(
    ("pattern", "starts", "nullable"),
    [
        ("//[^\\n]*", "/", False),
        ("(?i)ab", "Aa", False),
        ("[x-z]?q", "qxyz", False),
        ("(?=a)b", "b", False),
        ("a*", "a", True),
        (".", None, False),
        ("\\s", "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f ", False),
    ],
)
def test_first_characters(pattern: str, starts: str | None, nullable: bool) -> None:
    import re

    from minhashdup.source.patterns import parser  # re._parser on 3.11+, sre_parse on 3.10

    parsed = parser.parse(pattern, re.MULTILINE)
    chars, can_be_empty = first_chars(parsed, parsed.state.flags)
    assert (None if chars is None else "".join(sorted(map(chr, chars)))) == (
        None if starts is None else "".join(sorted(starts))
    )
    assert can_be_empty == nullable
