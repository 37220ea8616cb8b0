"""The documentation site builds strictly, offline, and its references are generated from the code.

* ``mkdocs build --strict``: a broken link, an API reference that does not resolve or a page
  missing from the nav fails the build.
* The command-line reference (docs/hooks/cli_reference.py) lists every option of every command's
  parser, sub-commands included.
* The HTTP reference lists every route of the app with its method.
* The built ``nlgscore`` reference page reads: no Sphinx role shows as text, every doctest is a code
  block, ``load`` comes first with its parameter table, specs and options, and every name of
  ``nlgscore.__all__`` has its heading.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

import pytest
from cli_reference import cli_markdown, subcommands
from markdown_blocks import ROOT

ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|attr|data|exc|obj|const):")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site, built once for the tests that read it (``mkdocs build --strict``, offline)."""
    folder = tmp_path_factory.mktemp("docs") / "site"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return folder


def test_site_builds_strictly_offline(site):
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "nlgscore serve" in cli and "--max-wait-ms" in cli  # the hook ran
    mbr = (site / "reference" / "python" / "mbr" / "index.html").read_text(encoding="utf-8")
    assert "decode_to_file" in mbr and "MBRItem" in mbr  # mkdocstrings rendered the face
    theme = (site / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis.com" not in theme  # theme.font: false, nothing fetched by a reader either


def test_the_package_reference_page_reads(site):
    import nlgscore

    page = (site / "reference" / "python" / "nlgscore" / "index.html").read_text(encoding="utf-8")
    article = page[page.index("<article") : page.index("</article>")]
    assert not ROLE.search(article), ROLE.search(article)
    prose = re.sub(r"<pre.*?</pre>|<code.*?</code>", "", article, flags=re.S)
    assert "&gt;&gt;&gt;" not in prose  # every doctest line is inside a code block
    assert "\\|" not in article  # a table's escaped pipe would show its backslash in code
    headings = re.findall(r'id="nlgscore\.(\w+)" class="doc doc-heading"', article)
    assert headings[0] == "load" and set(headings) == set(nlgscore.__all__)
    starts = [m.start() for m in re.finditer(r'class="doc doc-heading"', article)]
    load = article[starts[0] : starts[1]]  # up to the next name's heading: load's text, specs, options
    assert 'doc-section-title">Parameters:' in load and "<code>**options</code>" in load
    assert re.search(r"<pre>.*?&gt;&gt;&gt; </span>.*?load", load, re.S)  # its example, as code
    assert 'id="specs"' in load and 'id="options"' in load and "<code>http://HOST:PORT</code>" in load


def parsers(parser: argparse.ArgumentParser, path: str):
    yield path, parser
    for name, sub in subcommands(parser).items():
        yield from parsers(sub, f"{path} {name}")


def test_the_cli_reference_lists_every_option_of_every_command():
    from nlgscore.cli import COMMANDS, build_parser

    page = cli_markdown()
    for command in COMMANDS:
        top = subcommands(build_parser([command])).get(command)
        if top is None:
            continue  # a command not built into this installation
        for path, parser in parsers(top, f"nlgscore {command}"):
            assert f"`{path}`" in page
            for action in parser._actions:
                if action.help == argparse.SUPPRESS:
                    continue  # hidden spellings (bert-score's --batch_size ...) stay out of the reference
                for flag in action.option_strings:
                    if flag not in ("-h", "--help"):
                        assert f"`{flag}`" in page, f"{path} {flag} missing from the CLI reference"


def test_the_http_reference_lists_every_route():
    from nlgscore.serve.http.app import create_app

    app = create_app(lambda: None)  # routes only: the loader runs when the app starts, which it never does here
    page = (ROOT / "docs" / "reference" / "http.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `(GET|POST) (/[\w/]+)`", page, re.M))
    served = {(method, route.path) for route in app.routes for method in route.methods if method != "HEAD"}
    assert listed == served


def test_every_page_is_in_the_nav():
    """mkdocs --strict reports pages left out of the nav only as info; this makes it an error."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    docs = ROOT / "docs"
    for page in docs.rglob("*.md"):
        relative = page.relative_to(docs).as_posix()
        if relative.split("/")[0] in ("hooks", "gpu"):
            continue
        assert re.search(rf":\s+{re.escape(relative)}\s*$", nav, re.M), f"{relative} is not in mkdocs.yml's nav"
