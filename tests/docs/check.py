#!/usr/bin/env python3
"""Checks the guide (docs/src), the READMEs and the crate README offline.

Snippets: every fenced block names its language (rustdoc and mdBook take a
bare fence for Rust); every `rust` block is compiled somewhere:
- in a file that a crate includes as documentation (`#[doc =
  include_str!(...)]` or `#![doc = include_str!(...)]`), so that it is a
  doctest; such a block is never `ignore`d;
- or, marked `ignore`, right after `<!-- excerpt: PATH -->` and found
  verbatim in PATH, a source file the workspace compiles;
- or, marked `ignore`, right after `<!-- new-user: PATH -->`: a file of the
  crate tests/new-user/run.sh writes, builds and tests.

Links: a relative link names a file that exists (a chapter links only
inside docs/src, which is all mdBook publishes) and, with `#anchor`, a
heading of that file; a link into this repository on GitHub
(github.com/mcp-rs/mcp-runtime/blob/main/PATH) names a path that exists;
`{{#include PATH:ANCHOR}}` names a file with that anchor; SUMMARY.md lists
every chapter. Links to other sites are not fetched (no network here).

Exits non-zero, listing every problem.
"""
import os
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
BOOK = ROOT / "docs" / "src"
GITHUB = "https://github.com/mcp-rs/mcp-runtime"
FENCE = re.compile(r"^(\s*)(```+|~~~+)(.*)$")
MARKER = re.compile(r"<!-- (excerpt|new-user): (\S+)")
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
DEFINITION = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)")
INCLUDE = re.compile(r"\{\{#include ([^}:\s]+)(?::(\w+))?\s*\}\}")
problems = []


def problem(path, line, text):
    shown = path.relative_to(ROOT) if ROOT in path.resolve().parents else path
    problems.append(f"{shown}:{line}: {text}")


def markdown_files():
    files = [ROOT / "README.md", ROOT / "mcp-runtime" / "README.md"]
    files += sorted(BOOK.rglob("*.md"))
    files += sorted((ROOT / "examples").glob("*/README.md"))
    return files


def doc_included():
    """The Markdown files some crate compiles as documentation."""
    included = set()
    pattern = re.compile(r"#!?\[doc\s*=\s*include_str!\(\"([^\"]+)\"\)\]")
    for source in ROOT.rglob("*.rs"):
        if "target" in source.parts or "node_modules" in source.parts:
            continue
        for name in pattern.findall(source.read_text(encoding="utf-8", errors="replace")):
            included.add((source.parent / name).resolve())
    return included


def anchor(heading):
    """A heading's anchor, as GitHub and mdBook make it."""
    text = re.sub(r"`|\*|_(?=\W)|(?<=\W)_", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def blocks_and_text(lines):
    """Yields (kind, line number, data): ('fence', n, (info, body, marker))
    for each fenced block, ('text', n, line) for every line outside them."""
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            yield "text", i + 1, lines[i]
            i += 1
            continue
        indent, fence, info = match.groups()
        start = i
        i += 1
        body = []
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        before = start - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        marker = MARKER.search(lines[before]) if before >= 0 and before >= start - 2 else None
        yield "fence", start + 1, (info.strip(), body, marker)


def headings(path, cache={}):
    if path not in cache:
        found = set()
        for kind, _, line in blocks_and_text(path.read_text(encoding="utf-8").split("\n")):
            if kind == "text":
                match = re.match(r"#{1,6} (.*)", line)
                if match:
                    found.add(anchor(match.group(1)))
                found.update(re.findall(r"<a (?:id|name)=\"([^\"]+)\"", line))
        cache[path] = found
    return cache[path]


def check_block(path, number, info, body, marker, compiled):
    words = [word.strip() for word in info.split(",")] if info else []
    if not words or not words[0]:
        problem(path, number, "a code block without a language (say ```rust, ```sh, ```text...)")
        return
    if words[0] != "rust":
        return
    if "ignore" not in words:
        if path.resolve() not in compiled:
            problem(path, number, "a Rust block in a file no crate includes as documentation: "
                    "include the file with #[doc = include_str!(...)] (tests/src/lib.rs)")
        return
    if marker is None:
        problem(path, number, "an ignored Rust block: make it a doctest (hidden `# ` lines for "
                "the set-up), or mark it <!-- excerpt: PATH --> with PATH a compiled source file")
    elif marker.group(1) == "excerpt":
        source = ROOT / marker.group(2)
        if not source.is_file():
            problem(path, number, f"the excerpt's source {marker.group(2)} does not exist")
        elif "\n".join(body) not in source.read_text(encoding="utf-8"):
            problem(path, number, f"the excerpt is not verbatim in {marker.group(2)}")


def check_link(path, number, target):
    if target.startswith(("http://", "https://")):
        if target.startswith(GITHUB + "/blob/main/") or target.startswith(GITHUB + "/tree/main/"):
            rest = target[len(GITHUB) + len("/blob/main/"):].split("#")[0]
            if not (ROOT / rest).exists():
                problem(path, number, f"{target}: {rest} is not in this repository")
        elif target.startswith(GITHUB + "#"):
            if target.split("#", 1)[1] not in headings(ROOT / "README.md"):
                problem(path, number, f"{target}: the README has no such heading")
        return
    if target.startswith(("mailto:", "<")):
        return
    file, _, fragment = target.partition("#")
    destination = (path.parent / file).resolve() if file else path.resolve()
    if not destination.exists():
        problem(path, number, f"{target}: no such file")
        return
    # Where the link points, symbolic links not followed: a chapter may
    # link a file of docs/src that is a link to one elsewhere (mdBook
    # copies what it points to).
    written = pathlib.Path(os.path.normpath(path.parent / file)) if file else path
    if BOOK in path.resolve().parents and BOOK not in written.parents and written != BOOK:
        problem(path, number, f"{target}: outside docs/src, which is all the book publishes "
                f"(link to {GITHUB}/blob/main/... instead)")
    if fragment and destination.suffix == ".md" and fragment not in headings(destination):
        problem(path, number, f"{target}: {destination.name} has no heading #{fragment}")


def check_file(path, compiled):
    lines = path.read_text(encoding="utf-8").split("\n")
    for kind, number, data in blocks_and_text(lines):
        if kind == "fence":
            check_block(path, number, *data, compiled)
            continue
        text = re.sub(r"`[^`]*`", "", data)
        for target in LINK.findall(text) + DEFINITION.findall(text):
            check_link(path, number, target)
        for file, name in INCLUDE.findall(data):
            source = (path.parent / file).resolve()
            if not source.is_file():
                problem(path, number, f"{{{{#include {file}}}}}: no such file")
            elif name and f"ANCHOR: {name}" not in source.read_text(encoding="utf-8"):
                problem(path, number, f"{{{{#include {file}:{name}}}}}: no such anchor")


def check_summary():
    summary = (BOOK / "SUMMARY.md").read_text(encoding="utf-8")
    listed = {(BOOK / name).resolve() for name in re.findall(r"\]\(([^)]+\.md)\)", summary)}
    for chapter in sorted(BOOK.rglob("*.md")):
        if chapter.name != "SUMMARY.md" and chapter.resolve() not in listed:
            problem(chapter, 1, "a chapter SUMMARY.md does not list")


def check_html(book):
    """The built book: every internal link names a page that exists and an
    id on it (mdBook makes the ids; this checks them, not a guess)."""
    ids = {}
    for page in book.rglob("*.html"):
        ids[page.resolve()] = set(re.findall(r'\sid="([^"]+)"', page.read_text(encoding="utf-8")))
    for page in sorted(ids):
        text = page.read_text(encoding="utf-8")
        main = text[text.find("<main>"):text.find("</main>")]
        for target in re.findall(r'href="([^"]+)"', main):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, fragment = target.partition("#")
            destination = (page.parent / file).resolve() if file else page
            if destination.is_dir():
                destination = destination / "index.html"
            if destination.suffix != ".html":
                if not destination.exists():
                    problem(page, 1, f"{target}: no such file in the built book")
                continue
            if destination not in ids:
                problem(page, 1, f"{target}: no such page in the built book")
            elif fragment and fragment not in ids[destination]:
                problem(page, 1, f"{target}: {destination.name} has no id {fragment}")


def main():
    if sys.argv[1:2] == ["--html"]:
        check_html(pathlib.Path(sys.argv[2]))
        if problems:
            print("\n".join(problems), file=sys.stderr)
            return 1
        print(f"checked the links of the book built in {sys.argv[2]}")
        return 0
    compiled = doc_included()
    chapters = [path for path in BOOK.rglob("*.md") if path.name != "SUMMARY.md"]
    for chapter in chapters:
        if chapter.resolve() not in compiled:
            problem(chapter, 1, "a chapter tests/src/lib.rs does not include (its snippets would go untested)")
    files = markdown_files()
    for path in files:
        check_file(path, compiled)
    check_summary()
    if problems:
        print("\n".join(problems), file=sys.stderr)
        print(f"\nerror: {len(problems)} problem(s) in the guide and READMEs", file=sys.stderr)
        return 1
    print(f"checked {len(files)} Markdown files: every block has a language, every Rust block "
          "is compiled, every link resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
