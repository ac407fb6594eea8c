"""Seeded random histories (REST-JSON dicts) reaching every branch of the split point and token estimate."""

from __future__ import annotations

import random
from typing import Any

ASCII = "abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789 .,;:!?-_/(){}[]<>=+*'`~@#$%^&|"
SPECIAL = '"\\\n\t\r\b\f\x00\x01\x1f\x7f\u2028\u2029'
LATIN = "éüßçñøåÆ€£¥°±µ"
CJK = "".join(chr(c) for c in range(0x4E00, 0x4E00 + 400))
EMOJI = "😀🎉🚀👍🏽🧪𝔘𝕏𠀀"  # astral: two UTF-16 units each
LONE = "\ud800\udbff\udc00\udfff"  # lone surrogates (JSON carries them as \\udxxx escapes)
MIMES = ["image/png", "image/jpeg", "application/pdf", "application/pdfx", "text/plain", "", "video/mp4"]
NAMES = ["read_file", "Grep", "run_shell_command", "web-fetch", "mcp/tool.x", "Tool😀", "", "1", "ÜBER tool"]


class Gen:
    """A random generator of histories; `raw_only` features are ones the Content structs cannot carry."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.ascii_pool = ["".join(self.r.choices(ASCII, k=self.r.randint(1, 400))) for _ in range(200)]
        self.mixed_pool = [
            "".join(self._segment([40, 5, 8, 30, 12, 2]) for _ in range(self.r.randint(1, 12))) for _ in range(400)
        ]

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def length(self) -> int:
        r = self.r.random()
        if r < 0.6:
            return self.r.randint(0, 40)
        if r < 0.95:
            return self.r.randint(40, 2000)
        if r < 0.994:
            return self.r.randint(2000, 30_000)
        return self.r.choice([99_999, 100_000, 100_001, self.r.randint(100_002, 160_000)])

    def _segment(self, weights: list[int]) -> str:
        alphabet = self.r.choices([ASCII, SPECIAL, LATIN, CJK, EMOJI, LONE], weights)[0]
        return "".join(self.r.choices(alphabet, k=self.r.randint(1, 50)))

    def text(self, n: int | None = None, *, ascii_only: bool = False) -> str:
        n = self.length() if n is None else n
        kind = 0.0 if ascii_only else self.r.random()
        if kind < 0.4:
            if n <= 64:
                return "".join(self.r.choices(ASCII, k=n))
            pool = self.ascii_pool
        else:
            weights = [60, 4, 6, 20, 6, 1] if kind < 0.8 else [10, 10, 10, 40, 20, 10]
            if n <= 64:
                return "".join(self._segment(weights) for _ in range(n // 8 + 1))[:n]
            pool = self.mixed_pool
        chunks: list[str] = []
        size = 0
        while size < n:
            chunk = self.r.choice(pool)
            chunks.append(chunk)
            size += len(chunk)
        return "".join(chunks)[:n]

    def number(self) -> Any:
        return self.r.choice(
            [
                self.r.randint(-1000, 1000),
                self.r.random() * 10 ** self.r.randint(-10, 25),
                -self.r.random(),
                float(self.r.randint(0, 10**6)),
                1e21,
                1e-7,
                123e-9,
                2**53 + self.r.randint(1, 10**6),
                -(2**70) - self.r.randint(0, 99),
                10**25 + 7,
                0.1 + 0.2,
                -0.0,
                5e-324,
                1.7976931348623157e308,
            ]
        )

    def key(self) -> str:
        return self.r.choice(["path", "query", "n", "0", "10", "2", "01", "4294967295", "a b", "ключ", "😀"])

    def json_value(self, depth: int = 0) -> Any:
        r = self.r.random()
        if depth > 3 or r < 0.35:
            return self.r.choice([self.text(self.r.randint(0, 30)), self.number(), True, False, None])
        if r < 0.7:
            return {self.key(): self.json_value(depth + 1) for _ in range(self.r.randint(0, 4))}
        return [self.json_value(depth + 1) for _ in range(self.r.randint(0, 4))]

    def media(self, raw: bool) -> dict[str, Any]:
        part: dict[str, Any] = {}
        if self.chance(0.6):
            part["inlineData"] = {"mimeType": self.r.choice(MIMES), "data": "QUJD" * self.r.randint(0, 20)}
        if not part or self.chance(0.3):
            part["fileData"] = {"mimeType": self.r.choice(MIMES), "fileUri": "gs://b/" + self.text(8)}
        if raw and self.chance(0.1):
            part[self.r.choice(["inlineData", "fileData"])] = self.r.choice([None, "str", [], {}])
        return part

    def response(self, raw: bool) -> Any:
        r = self.r.random()
        if r < 0.2:
            return self.text()
        if r < 0.5:
            return {"output": self.text()}
        if r < 0.6:
            return {"content": self.text(), "exitCode": self.number()}
        if r < 0.7:
            return {"output": self.number(), "content": self.text()}
        if r < 0.9:
            return self.json_value()
        return self.r.choice([[self.text(10)], 0, 3.5, True, ""] + ([None] if raw else []))

    def function_response(self, raw: bool, depth: int) -> dict[str, Any]:
        fr: dict[str, Any] = {}
        if self.chance(0.9):
            fr["name"] = self.r.choice(NAMES)
        if self.chance(0.92):
            fr["response"] = self.response(raw)
        if self.chance(0.3):
            fr["id"] = f"call_{self.r.randint(0, 999)}"
        if self.chance(0.25 if depth < 6 else 0):
            fr["parts"] = [self.part(raw, depth + 1) for _ in range(self.r.randint(0, 3))]
        return fr

    def part(self, raw: bool, depth: int = 0) -> dict[str, Any]:
        r = self.r.random()
        if depth and r < 0.35:
            r = 0.75 + self.r.random() * 0.1  # nested parts: mostly function responses and media
        if r < 0.45:
            part: dict[str, Any] = {"text": self.text()}
            if self.chance(0.1):
                part["thought"] = self.chance(0.5)
            if self.chance(0.1):
                part["thoughtSignature"] = "c2ln" * self.r.randint(1, 8)
            return part
        if r < 0.6:
            call: dict[str, Any] = {"name": self.r.choice(NAMES)}
            if self.chance(0.9):
                call["args"] = {self.key(): self.json_value(1) for _ in range(self.r.randint(0, 5))}
            if self.chance(0.3):
                call["id"] = f"call_{self.r.randint(0, 999)}"
            return {"functionCall": call}
        if r < 0.8:
            return {"functionResponse": self.function_response(raw, depth)}
        if r < 0.9:
            return self.media(raw)
        if r < 0.95:
            return self.r.choice(
                [
                    {"executableCode": {"language": "PYTHON", "code": self.text(40)}},
                    {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": self.text(40)}},
                    {"text": self.text(5), "functionResponse": {"name": "x", "response": {"output": "y"}}},
                    {"functionCall": {"name": "f", "args": {"x": self.number()}}, "thoughtSignature": "cw=="},
                ]
            )
        if not raw:
            return {"text": ""}
        return self.r.choice(
            [
                {},
                {"text": None},
                {"functionResponse": None},
                {"functionResponse": {}},
                {"functionCall": {}},
                {"functionCall": None, "text": 5},
                {"functionResponse": {"name": "n", "response": None, "parts": []}},
                {"unknownField": self.json_value()},
            ]
        )

    def content(self, raw: bool) -> dict[str, Any]:
        roles = ["user", "model"] + (["system", None] if raw else [])
        role = self.r.choice(roles) if self.chance(0.15) else None
        n = self.r.choice([1, 1, 1, 2, 3]) if not raw or self.chance(0.95) else 0
        parts = [self.part(raw) for _ in range(n)]
        content: dict[str, Any] = {"role": role or "user", "parts": parts}
        if role is None and parts:
            has_call = any("functionCall" in p for p in parts)
            content["role"] = "model" if has_call or self.chance(0.45) else "user"
        if raw and self.chance(0.03):
            del content[self.r.choice(["role", "parts"])]
        return content

    def history(self, raw: bool) -> list[dict[str, Any]]:
        n = self.r.choice([0, 1, 2, self.r.randint(3, 12), self.r.randint(10, 40)])
        return [self.content(raw) for _ in range(n)]

    def fraction(self) -> float:
        return self.r.choice([0.7, 0.5, 0.3, self.r.random() or 0.5, 1e-9, 0.999999, 0.9, 0.1])

    def big_history(self) -> list[dict[str, Any]]:
        """A history with large tool outputs, so that the function-response budget truncates some."""
        history: list[dict[str, Any]] = []
        for _ in range(self.r.randint(1, 10)):
            name = self.r.choice([*NAMES, None])
            history.append({"role": "user", "parts": [{"text": self.text(self.r.randint(5, 200))}]})
            history.append({"role": "model", "parts": [{"functionCall": {"name": name or "x", "args": {}}}]})
            size = self.r.choice([10, 1000, 30_000, 90_000, 170_000, 250_000])
            body: Any = self.text(size, ascii_only=self.chance(0.5))
            response = self.r.choice(
                [
                    body,
                    {"output": body},
                    {"content": body},
                    {"output": 1, "content": body},
                    {"lines": body.split("\n")[:50], "2": 1.5, "1": [1e21, -0.0], "n": 2**60},
                    {"output": {"nested": body[:1000]}},
                ]
            )
            fr: dict[str, Any] = {"response": response, "id": f"c{len(history)}"}
            if name is not None:
                fr["name"] = name
            extra = [{"text": "note"}] if self.chance(0.2) else []
            history.append({"role": "user", "parts": [*extra, {"functionResponse": fr}]})
        return history
