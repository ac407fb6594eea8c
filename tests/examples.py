"""How many examples a Hypothesis test tries: the number it asks for under `make test`, scaled down with the `fast`
profile (`make test-fast`, tests/conftest.py) as the profile scales the tests that ask for no number."""

from __future__ import annotations

from hypothesis import settings

#: Hypothesis's own default number of examples, against which a profile's number is a scale.
DEFAULT_EXAMPLES = 100


def examples(wanted: int) -> int:
    """`wanted` under the default profile; under one with fewer examples per test, as many fewer in proportion."""
    return max(1, wanted * settings.default.max_examples // DEFAULT_EXAMPLES)
