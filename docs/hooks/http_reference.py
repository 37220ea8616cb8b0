"""The tables of bodies in the HTTP reference, made from the wire schema.

``docs/reference/http.md`` holds the marker ``<!-- http-bodies -->``; this hook replaces it with
:func:`nlgscore.remote.wire.reference_markdown`, the fields of every request and response of
nlgscore's own endpoints as the client and the server both take them, so the page cannot drift
from the schema.
"""

from __future__ import annotations

MARKER = "<!-- http-bodies -->"


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER not in markdown:
        return markdown
    from nlgscore.remote.wire import reference_markdown

    return markdown.replace(MARKER, reference_markdown())
