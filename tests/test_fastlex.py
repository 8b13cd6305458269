"""The fast engine gives exactly pygments' significant tokens: differential tests."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name

from minhashdup.source.fastlex import FastLexer, supported
from minhashdup.source.fastlex.blanks import blank_only
from minhashdup.source.fastlex.groups import without_groups
from minhashdup.source.patterns import first_chars, parser
from minhashdup.source.significant import (
    significant_tokens,
    significant_tokens_with_lines,
    significant_tokens_with_types,
)
from minhashdup.source.tokens import token_texts, token_texts_with_lines, token_texts_with_types

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
    "  \t\t",
    "\x0c",
    "\x1c",
    "\xa0",  # whitespace past ASCII
    "\u2028",
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
        'u8R"d(a)" )d"',  # a raw string's end: its delimiter's, not the first ')"'
        'LR"(',  # unterminated
        "return u;",  # L, R, u, U start identifiers too: those positions run rule by rule
        "int f() {",
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
    "php": [
        "<?php ",
        "?>",
        "<html><?= $x ?>",
        "function f($a, &$b = null): ?int {",
        "echo strlen($s);",  # a builtin function: Name.Builtin in pygments' own loop
        "$this->x = [1, 'a' => 2];",
        '"a $b {$c->d}"',
        "<<<EOT\nbody $x\nEOT;\n",
        "<<<'N'\nnow\nN;\n",
        "#[Attr(1)]",
        "class A extends B implements C {",
        "// c\n",
        "/* c */",
        "}",
    ],
    "cuda": [
        "__global__ void k(float4 *a, size_t n) {",  # CUDA's and C's words: retyped by their loops
        "int i = blockIdx.x * blockDim.x + threadIdx.x;",
        "__shared__ float s[256];",
        "k<<<dim3(1), 256>>>(a, n);",
        "__syncthreads();",
        "atomicAdd(&s[0], 1.0f);",
        "#include <cuda.h>\n",
        "/* c */",
        "}",
    ],
    "swift": [
        "import Foundation\n",
        "func f(_ x: Int) -> String {",
        'let s: NSString = "a\\(x)b"',  # a Cocoa name: Name.Builtin.Pseudo in pygments' own loop
        "var a = [1, 2]",
        "class A: NSObject, UITableViewDelegate {",
        '"""\nmulti\n"""',
        "guard let y = x else { return }",
        "@objc",
        "#if DEBUG\n",
        "/* c */",
        "}",
    ],
    "elixir": [
        "defmodule A.B do\n",
        "def f(x) when is_atom(x), do: :ok",
        "x |> Enum.map(&(&1 + 1))",
        '%{a: 1, "b" => 2}',
        '"a #{x} b"',
        "~r/a+/i",
        '@doc """\ndoc\n"""\n',
        "fn x -> x end",
        "alias Foo.Bar",
        "nil and true or __MODULE__",
        "?a",
        "# c\n",
        "end",
    ],
    "objective-c": [
        "@interface A : NSObject <NSCopying>\n",
        "@property (nonatomic) NSString *s;",
        "- (void)f:(int)x {",
        '[self g:@"a" with:@[@1, @2]];',
        "size_t n = sizeof(int);",
        "@end\n",
        "#import <Foundation/Foundation.h>\n",
        "^(int y) { return y; }",
        "/* c */",
        "}",
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
        "x y\n z\n",  # words over lines: the method rule reads across them (.guard)
        "int f (",
    ],
    "csharp": [
        "using System.Linq;",
        "namespace A.B {",
        "public static async Task<int> Run(string[] args) {",
        "  int[] xs = new int[] { 1, 2 };",
        '[Obsolete("x")]',
        '@"verbatim ""q"""',
        '$"i {x + 1} n"',
        "var q = from c in xs where c > 1 select c;",
        "#region r\n",
        "/// <summary>doc</summary>\n",
        "  x\n  y\n",  # words over lines before no '(': the anchored method rule (.guard)
        "  void M (",
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
    assert token_texts_with_types(lexer, text, "fast") == significant_tokens_with_types(lexer, text)
    # The lines the side-by-side views use: from the fast engine's offsets, as pygments counts them
    # (\r\n and lone \r included).
    text = text.replace("\n", data.draw(st.sampled_from(["\n", "\r\n", "\r"]), label="newline"))
    texts, lines = token_texts_with_lines(lexer, text, "fast")
    assert list(zip(texts, lines, strict=True)) == list(significant_tokens_with_lines(lexer, text))


def test_a_lexer_of_other_options_is_lexed_as_its_options_say() -> None:
    # The fast engine of a class is built from lexer_for's instance: a lexer of other options
    # (found by a helper: PHP's startinline lexed a whole line as one Other token) runs pygments.
    from pygments.lexers import CLexer, GoLexer, PhpLexer

    php = PhpLexer(startinline=True, stripnl=False, ensurenl=True)
    text = "$x = strlen($y); // c\n"
    assert token_texts(php, text) == list(significant_tokens(php, text)) == ["$x", "=", "strlen", "(", "$y", ");"]
    c = CLexer(stdlibhighlighting=False, stripnl=False, ensurenl=True)
    assert token_texts_with_types(c, "size_t x;") == significant_tokens_with_types(c, "size_t x;")
    assert token_texts(GoLexer(), " x \n") == list(significant_tokens(GoLexer(), " x \n"))  # stripnl, stripall


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
        ("[^\\S\\n]+", "\t\x0b\x0c\r\x1c\x1d\x1e\x1f ", False),  # a negated set: what it holds
        ("[^\\x00-\\x60b-\\x7f]", "a", False),
        ("(?i)[^ab]", None, False),  # NOT_LITERAL for [^a]: a set it must be
    ],
)
def test_first_characters(pattern: str, starts: str | None, nullable: bool) -> None:
    import re

    parsed = parser.parse(pattern, re.MULTILINE)
    chars, can_be_empty = first_chars(parsed, parsed.state.flags)
    assert (None if chars is None else "".join(sorted(map(chr, chars)))) == (
        None if starts is None else "".join(sorted(starts))
    )
    assert can_be_empty == nullable


@pytest.mark.parametrize(
    ("pattern", "bare"),
    [
        (r"//(.*?)$", r"//(?:.*?)$"),
        (r"\(x\)", r"\(x\)"),  # escaped brackets are text
        (r"[(]a[)]", r"[(]a[)]"),  # so are brackets in a set
        (r"[]()](b)", r"[]()](?:b)"),  # a set may start with "]"
        (r"[^]\](](c)", r"[^]\](](?:c)"),
        (r"(?i:(rb|br)(\"))", r"(?i:(?:rb|br)(?:\"))"),
        (r"(?=(a))(?<!b)(?:c)", r"(?=(?:a))(?<!b)(?:c)"),
        (r"\\(d)", r"\\(?:d)"),  # an escaped backslash, then a group
    ],
)
def test_without_groups_makes_groups_non_capturing(pattern: str, bare: str) -> None:
    assert without_groups(pattern, 0) == bare


@pytest.mark.parametrize("pattern", [r"(?P<n>a)(?P=n)", r"(?#(x)a", "(?x) ( a ) # [", r"(?x:a)"])
def test_without_groups_refuses_what_it_cannot_read_safely(pattern: str) -> None:
    assert without_groups(pattern, 0) is None


def test_without_groups_refuses_verbose_patterns() -> None:
    import re

    assert without_groups("(a) # (", re.VERBOSE) is None


@pytest.mark.parametrize("name", sorted(FRAGMENTS))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_rules_without_groups_match_the_same_text(name: str, data: st.DataObject) -> None:
    """Every rule of the lexer, its groups made non-capturing, matches the same span as the
    rule itself, anywhere in text made of the language's fragments."""
    import re

    pieces = st.sampled_from(FRAGMENTS[name] + JUNK)
    text = "".join(data.draw(st.lists(pieces, max_size=12), label="pieces"))
    lexer = _lexer(name)
    for rules in lexer._tokens.values():
        for rexmatch, _, _ in rules:
            pattern = rexmatch.__self__
            bare = without_groups(pattern.pattern, pattern.flags)
            if bare is None:
                continue
            other = re.compile(bare, pattern.flags)
            for pos in range(0, len(text) + 1, 3):
                want, got = pattern.match(text, pos), other.match(text, pos)
                assert (got and got.span()) == (want and want.span()), (pattern.pattern, text, pos)


@pytest.mark.parametrize(
    ("pattern", "blank"),
    [
        (r"[^\S\n]+", True),
        (r"\s*$", True),
        (r"(?=x)[ \t]+", True),
        (r"\n|\r\n", True),
        (r"\\\n", False),
        (r"\s+x", False),
        (r"[^\s]", False),
        (r".", False),
    ],
)
def test_blank_only(pattern: str, blank: bool) -> None:
    assert blank_only(parser.parse(pattern)) is blank


def test_bygroups_rules_are_applied_by_the_scan_itself() -> None:
    from pygments.lexer import bygroups, using
    from pygments.lexers import GoLexer
    from pygments.token import Keyword, Text

    from minhashdup.source.fastlex.states import _by_groups
    from minhashdup.source.significant import KEEP, KEEP_UNLESS_BLANK

    assert _by_groups(bygroups(Keyword, None, Text)) == ((1, KEEP, Keyword), (3, KEEP_UNLESS_BLANK, Text))
    assert _by_groups(bygroups(Keyword, using(GoLexer))) is None  # a nested lexer: pygments' callback runs
    assert _by_groups(lambda lexer, m: iter(())) is None


def test_states_with_a_default_rule_are_joined() -> None:
    # pygments compiles default('#pop') as '' without the lexer's flags: no flag changes what
    # an empty pattern matches, so the state is still joined into one pattern.
    engine = FastLexer(_lexer("python"))
    assert engine.significant_tokens("def f(): pass\n") == ["def", "f", "(", ")", ":", "pass"]
    assert engine.states["funcname"].joined is not None


def test_at_the_text_end_the_joined_pattern_finds_the_rule() -> None:
    # One call for the first rule that matches at the end, not one per rule: at the end of
    # every text a using(this) callback lexes again (C's function rule has six).
    from pygments.lexer import RegexLexer, default
    from pygments.token import Name, Punctuation, Whitespace

    class EndsInside(RegexLexer):  # type: ignore[misc]  # pygments is untyped
        tokens: ClassVar[dict[str, list[Any]]] = {
            "root": [(r"a", Name, "inner"), (r"\s+", Whitespace), (r".", Punctuation)],
            "inner": [(r"b", Name.Builtin), default("#pop")],  # matches (empty) at the end: pops
        }

    lexer = EndsInside(stripnl=False, ensurenl=False)
    engine = FastLexer(lexer)
    for text in ("ab", "a", "a b.ab", ""):
        assert engine.significant_tokens(text) == list(significant_tokens(lexer, text))
    inner = engine.states["inner"]
    assert inner.joined is not None and inner.pattern_at("ab", 2) is inner.joined


def test_plain_rules_that_change_state_are_taken_by_the_loop() -> None:
    # C's default('statement') (dropped), ';' popping it (kept), a macro's line end popping it
    # (kept unless blank): the loop changes the stack itself, without a _step call.
    from minhashdup.source.fastlex.states import MOVES

    lexer = _lexer("c")
    engine = FastLexer(lexer)
    text = "#define A 1 \nint x;\nvoid f(void) { return; }\n"
    assert engine.significant_tokens(text) == list(significant_tokens(lexer, text))
    joined = engine.states["root"].joined
    assert joined is not None
    moving = [plan for plan, kind in zip(joined.plans, joined.fast, strict=True) if kind == MOVES]
    assert ("statement",) in [plan.new_state for plan in moving if plan is not None]
    assert all(plan is not None and plan.by_groups is None for plan in moving)
