"""Docstring paragraphs that many primitives share, written once.

A primitive's docstring names a shared paragraph on a line of its own, in braces::

    Barriers
    --------
    {block_barriers}

and ``expand`` (applied by the ``primitive`` decorator, so ``help()`` shows the result)
replaces that line with the paragraph, indented as the placeholder was. Only whole lines
holding a known name are replaced: other braces in a docstring are left alone.
"""

import re

__all__ = ["PARAGRAPHS", "expand"]

#: name -> paragraph (plain text, unindented; may span several lines).
PARAGRAPHS = {}

_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)\{(?P<name>[a-z_]+)\}[ \t]*$", re.MULTILINE)


def expand(doc):
    """``doc`` with every placeholder line of a known paragraph replaced by it."""
    if not doc:
        return doc

    def paragraph(match):
        text = PARAGRAPHS.get(match["name"])
        if text is None:
            return match[0]
        indent = match["indent"]
        return "\n".join(indent + line if line else "" for line in text.strip("\n").splitlines())

    return _PLACEHOLDER.sub(paragraph, doc)
