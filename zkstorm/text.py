"""Text from ZooKeeper as any writer shows it: data, never terminal control.

``visible`` is what every writer of a value uses (the renderer's cells, stderr warnings, log lines, CSV
cells, Prometheus label values): ZooKeeper's text may hold the escape sequences that write a terminal's
clipboard, retitle its window or reorder what it shows, and a file written from it (a textfile collector's
``.prom``, a CSV) is read in a terminal too. Stdlib only, at the bottom of the house, so every layer may
use it.
"""

from __future__ import annotations

import re

# What a terminal would act on instead of showing: C0 controls (ESC starts the sequences that write the
# clipboard, retitle the window or clear the screen; BEL, backspace and CR rewrite what is shown), DEL,
# C1 controls (0x9b is a one-byte CSI on some terminals), Unicode's Bidi_Control characters (they reorder
# the text around them: "Trojan Source") and the line and paragraph separators that Python splits lines
# on. Each is shown as the escape Python would write for it: \x1b, \x07, \r, \u202e.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# The same, where a value is legitimately shown on several lines (a Storm error's trace, a znode's text):
# newlines and tabs stay.
_UNSAFE_IN_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SHORT_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _SHORT_ESCAPES.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def visible(text: str, *, multiline: bool = False) -> str:
    """``text`` with every control character shown as its escape (``\\x1b``, ``\\r``, ``\\u202e``) instead of
    acting on the terminal; ``multiline`` keeps newlines (a CRLF as one) and tabs."""
    if multiline:
        return _UNSAFE_IN_LINES.sub(_escape, text.replace("\r\n", "\n"))
    return _UNSAFE.sub(_escape, text)


def clip(value: object, most: int = 60) -> str:
    """``value`` quoted in a one-line message: its ``repr``, cut to ``most`` characters. A value read from a
    damaged file (a path a lying length made a megabyte long) or a hand-edited manifest must not make the
    line that names it a megabyte long."""
    text = repr(value)
    return text if len(text) <= most else f"{text[: most - 1]}…"
