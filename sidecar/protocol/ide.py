"""Wire types of the editor context the client reports (sidecar/ideContext)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from sidecar.protocol.types import shown_as


class Cursor(msgspec.Struct, frozen=True):
    """1-based line and character."""

    line: int
    character: int


class OpenFile(msgspec.Struct, rename="camel", omit_defaults=True, frozen=True):
    """One open file as the editor reports it (absolute path, 1-based cursor, timestamp in ms)."""

    path: str
    timestamp: float
    is_active: bool | None = None
    cursor: Cursor | None = None
    selected_text: str | None = None


class IdeContextParams(msgspec.Struct, rename="camel", omit_defaults=True):
    """Params of the sidecar/ideContext notification; files are checked one by one (bad ones are dropped)."""

    open_files: Annotated[list[Any], shown_as(list[OpenFile])]
    is_trusted: bool | None = None
