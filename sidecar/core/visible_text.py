"""Text from outside shown as data: terminal escapes, bidi and other invisible controls made visible, never obeyed."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["visible", "visible_name"]

#: The controls that have a short name; any other C0/C1 control is shown as \xNN.
_NAMED = {"\x1b": "\\e", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\x00": "\\0", "\x7f": "^?"}
#: Characters that are not shown as themselves: C0 and C1 controls, DEL, the line and paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
#: Format characters (Unicode category Cf: bidi overrides and isolates, zero-width spaces and joiners, the BOM,
#: the soft hyphen...) reorder or hide text on screen; they are found by category.
_FORMAT = "Cf"
_ZWJ = "\u200d"


def visible(text: str, *, keep: str = "\n\t") -> str:
    r"""`text` with every control character shown visibly: ESC as `\e`, CR as `\r`, another C0/C1 control as `\xNN`,
    DEL as `^?`, and bidi controls and other invisible format characters (U+202E, U+200B, U+FEFF...) as `<U+202E>`.
    Characters in `keep` (by default newline and tab) stay as they are. A backslash is not doubled: a `\e` shown
    may have been typed as such, but an escape sequence can never reach a terminal or reorder a line."""
    if text.isascii() and _CONTROL.search(text) is None:
        return text  # the common case: nothing to do
    out: list[str] = []
    for index, char in enumerate(text):
        if char in keep or (char == _ZWJ and _joins_emoji(text, index)):
            out.append(char)
        elif _CONTROL.match(char):
            out.append(_NAMED.get(char) or (f"<U+{ord(char):04X}>" if ord(char) > 0xFF else f"\\x{ord(char):02x}"))
        elif unicodedata.category(char) == _FORMAT:
            out.append(f"<U+{ord(char):04X}>")
        else:
            out.append(char)
    return "".join(out)


def visible_name(name: str) -> str:
    """A file name as one line of a listing the model reads: every control character visible (a newline too), and
    `<` / `>` as `&lt;` / `&gt;`, so that a name cannot open or close a tag such as `<project_context>`."""
    return visible(name.replace("<", "&lt;").replace(">", "&gt;"), keep="")


def _joins_emoji(text: str, index: int) -> bool:
    """Whether the zero-width joiner at `index` sits between two emoji (a family, a profession: it is drawn)."""
    return 0 < index < len(text) - 1 and _is_emoji(text[index - 1]) and _is_emoji(text[index + 1])


def _is_emoji(char: str) -> bool:
    return ord(char) >= 0x2600 and unicodedata.category(char) in ("So", "Sk")
