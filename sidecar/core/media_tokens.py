"""Media parts as the Gemini API counts them: an image by its 768×768 tiles (258 tokens each), never its base64."""

from __future__ import annotations

import base64
import binascii
import math
import struct

from sidecar.core.history import Part

__all__ = [
    "IMAGE_TILE_TOKENS",
    "REQUEST_MAX_BYTES",
    "image_dimensions",
    "image_tokens",
    "media_bytes",
    "media_note",
    "media_tokens",
]

#: Gemini counts an image no larger than 384×384 pixels as 258 tokens; a larger one is cut and scaled into tiles of
#: 768×768 pixels, 258 tokens each (ai.google.dev, "Understand and count tokens").
IMAGE_TILE_TOKENS = 258
IMAGE_TILE_PIXELS = 768
IMAGE_SMALL_PIXELS = 384
#: Gemini 3 counts an image by its media resolution instead: at most 1,120 tokens at "high", which an image
#: counted by tiles never goes below here (the upper bound holds for both counts).
IMAGE_RESOLUTION_TOKENS = 1_120
#: An image whose size cannot be read from its header: taken as 4×4 tiles.
IMAGE_UNKNOWN_TOKENS = 16 * IMAGE_TILE_TOKENS
#: The API refuses a request larger than 20 MB (inline data included).
REQUEST_MAX_BYTES = 20 * 1000 * 1000
#: How much of an image's base64 is decoded to find its size in its header.
_HEAD_CHARS = 64 * 1024


def _head(data: str) -> bytes:
    text = data[:_HEAD_CHARS]
    text = text[: len(text) - len(text) % 4]
    try:
        return base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError):
        return b""


def _jpeg_dimensions(head: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(head):
        if head[i] != 0xFF:
            return None
        marker = head[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = struct.unpack(">H", head[i + 2 : i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", head[i + 5 : i + 9])
            return width, height
        i += 2 + length
    return None


def image_dimensions(data: str) -> tuple[int, int] | None:
    """(width, height) from the header of a base64 PNG, GIF, JPEG or WebP image; None when not readable."""
    head = _head(data)
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return width, height
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return width, height
    if head.startswith(b"\xff\xd8"):
        return _jpeg_dimensions(head)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP" and len(head) >= 30:
        kind = head[12:16]
        if kind == b"VP8X":
            return 1 + int.from_bytes(head[24:27], "little"), 1 + int.from_bytes(head[27:30], "little")
        if kind == b"VP8L":
            bits = int.from_bytes(head[21:25], "little")
            return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
        if kind == b"VP8 ":
            width, height = struct.unpack("<HH", head[26:30])
            return width & 0x3FFF, height & 0x3FFF
    return None


def image_tokens(data: str) -> int:
    """An image's tokens from above: its tiles × 258 (one tile when it fits in 384×384), at least Gemini 3's
    high-resolution count; IMAGE_UNKNOWN_TOKENS when its header cannot be read."""
    size = image_dimensions(data)
    if size is None or min(size) <= 0:
        return IMAGE_UNKNOWN_TOKENS
    width, height = size
    if width <= IMAGE_SMALL_PIXELS and height <= IMAGE_SMALL_PIXELS:
        tiles = 1
    else:
        tiles = math.ceil(width / IMAGE_TILE_PIXELS) * math.ceil(height / IMAGE_TILE_PIXELS)
    return max(tiles * IMAGE_TILE_TOKENS, IMAGE_RESOLUTION_TOKENS)


def media_tokens(part: Part) -> int | None:
    """The tokens of an inline image part as the API counts it; None for any other part (measured by its JSON)."""
    inline = part.inline_data
    if inline is None or not (inline.mime_type or "").startswith("image/") or not inline.data:
        return None
    return image_tokens(inline.data)


def media_bytes(part: Part) -> int:
    """The base64 characters an inline part carries (0 for other parts)."""
    inline = part.inline_data
    return len(inline.data or "") if inline is not None else 0


def media_note(part: Part, why: str) -> Part:
    """What the model gets instead of a media part that was left out."""
    inline = part.inline_data
    mime = (inline.mime_type if inline is not None else None) or "data"
    data = (inline.data if inline is not None else None) or ""
    size = len(data) * 3 // 4 - (len(data) - len(data.rstrip("=")))
    return Part(text=f"[The {mime} content the tool returned ({size:,} bytes) was left out: {why}.]")
