"""Media parts in a request's budget: an image counted as the API counts it (258 tokens a 768×768 tile), never as
its base64 / 4; media that does not fit (the context window, the request size limit) replaced with a note."""

from __future__ import annotations

import base64
import os
import struct
from pathlib import Path

from sidecar.core.content_json import encode_content
from sidecar.core.history import Blob, Content, FunctionResponse, Part
from sidecar.core.media_tokens import IMAGE_RESOLUTION_TOKENS, IMAGE_TILE_TOKENS, image_dimensions, image_tokens
from sidecar.core.request_size import content_upper_tokens, fit_responses, parts_upper_tokens, wire_upper_tokens

MB = 1024 * 1024


def png(width: int, height: int, size: int) -> str:
    """A base64 PNG of `width`×`height` pixels (its header) padded with random bytes to `size` bytes."""
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", width, height) + b"\x08\x06"
    return base64.b64encode(header + os.urandom(max(0, size - len(header)))).decode()


def jpeg(width: int, height: int) -> str:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x00" * 9
    sof = b"\xff\xc0" + struct.pack(">HBHH", 17, 8, height, width) + b"\x03" + b"\x00" * 9
    return base64.b64encode(b"\xff\xd8" + app0 + sof + b"\x00" * 64).decode()


def image(data: str) -> Part:
    return Part(inline_data=Blob(mime_type="image/png", data=data))


def response(text: str) -> Part:
    return Part(function_response=FunctionResponse(name="mcp_pics_shot", response={"output": text}))


def save(tmp_path: Path) -> object:
    return lambda text, tool: tmp_path / f"{tool}.txt"


def test_an_image_counts_its_tiles_not_its_base64() -> None:
    """A 3 MB screenshot counted as 1 M tokens (4 MB of base64 / 4): it ended the turn."""
    shot = png(1920, 1080, 3 * MB)
    assert image_dimensions(shot) == (1920, 1080)
    assert image_dimensions(jpeg(800, 600)) == (800, 600)
    assert image_tokens(shot) == 3 * 2 * IMAGE_TILE_TOKENS, "3 × 2 tiles of 768×768"
    assert image_tokens(png(300, 200, 100)) == IMAGE_RESOLUTION_TOKENS, "one tile, at least Gemini 3's count"
    upper = parts_upper_tokens("user", [response("[image]"), image(shot)])
    assert upper < 5_000, upper
    content = Content(role="user", parts=[response("[image]"), image(shot)])
    assert wire_upper_tokens(encode_content(content)) == content_upper_tokens(content), "history measured alike"


def test_an_image_that_does_not_fit_is_replaced_with_a_note(tmp_path: Path) -> None:
    parts = [response("a short answer"), image(png(4000, 4000, 2 * MB))]  # 36 tiles: 9,288 tokens
    fitted, fits = fit_responses(parts, 2_000, save(tmp_path))  # type: ignore[arg-type]
    assert fits
    assert fitted[0] == parts[0], "the text fitted: only the image goes"
    assert fitted[1].inline_data is None and fitted[1].text is not None
    assert "image/png content the tool returned (2,097,152 bytes) was left out: it does not fit" in fitted[1].text


def test_media_past_the_request_size_limit_is_replaced_with_a_note(tmp_path: Path) -> None:
    small, big = image(png(100, 100, 1 * MB)), image(png(100, 100, 12 * MB))
    fitted, fits = fit_responses(
        [response("two pictures"), small, big],
        100_000,
        save(tmp_path),
        room_bytes=8 * MB,  # type: ignore[arg-type]
    )
    assert fits and fitted[1] == small
    assert fitted[2].text is not None and "larger than the API accepts (20 MB in all)" in fitted[2].text
