"""Provider knowledge lives in its API module (``testing/wire/apis/``) and nowhere else.

Adding a model API is one new module there plus one registry line, so no other module
may hold what only a provider means: its name, its paths, the keys of its bodies, its
credential headers and environment variables, its ids. The check walks the AST of every
module and looks at string constants (docstrings and comments explain, they may name a
provider). The few places outside ``apis/`` allowed to speak a provider's language are
listed below, each with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import pytest

PACKAGE: Final = Path(__file__).resolve().parents[2] / "src" / "headerlock"

PROVIDER_WORDS: Final = (
    # providers, their clouds and their models
    "anthropic", "openai", "gemini", "google", "bedrock", "converse", "aws", "amazon",
    "azure", "vertex", "claude",
    # where a request keeps its tools and what a tool looks like
    "toolconfig", "toolspec", "tooluse", "tool_use", "functiondeclaration",
    "function_declaration", "inputschema", "input_schema", "googlesearch",
    "systeminstruction",
    # paths
    "chat/completions", "/v1/messages", "generatecontent",
    # cache breakpoints and usage fields
    "cachepoint", "cache_control", "cacheread", "cache_read", "cachewrite", "cache_creation",
    "cached_tokens", "cachedcontent", "cached_content", "usagemetadata",
    # credentials: headers, signatures, key shapes
    "x-api-key", "x-goog-", "anthropic-", "openai-beta", "x-amz", "amz-sdk", "sigv4", "akia",
    "asia", "sk-ant", "aiza",
    # volatile fields and ids of answers
    "latencyms", "system_fingerprint", "obfuscation", "chatcmpl", "toolu_",
    # framings
    "eventstream",
    # a provider's own SDK transport
    "botocore", "boto3",
)  # fmt: skip
"""Lower case; a string constant holding one of them (case-insensitively) names a provider."""

HOME: Final = "testing/wire/apis/"
"""Where provider knowledge lives: one module per model API, and the registry."""

ALLOWED_FOLDERS: Final = {
    "runtime/adapters/": "the runtime's own LLM clients: the live OpenAI-compatible adapter"
    " is a client of that protocol (its key, its path), not wire-capture knowledge",
    "demo/": "demo agents: they call a provider's SDK as a user's agent does",
}
ALLOWED_FILES: Final = {
    "formats/aws_eventstream.py": "the shared binary event-stream framing (generic over"
    " events; its media type is the one provider word): a framing helper any API may use",
}
ALLOWED_CONSTANTS: Final = {
    ("__init__.py", "OpenAICompatAdapter"): "the deprecated top-level name of the runtime's"
    " live adapter (runtime/adapters/openai_compat.py)",
    ("agent.py", "OpenAICompatAdapter"): "the runtime facade exports the runtime's adapter",
    ("agent.py", "headerlock.runtime.adapters.openai_compat"): "the runtime facade's module"
    " of that adapter",
    (
        "_cli_parser.py",
        "use the live endpoint (HEADERLOCK_BASE_URL; key HEADERLOCK_API_KEY, else OPENAI_API_KEY)",
    ): "--live says which key the runtime's live adapter reads",
    (
        "testing/plugin/options.py",
        "take model output from the live OpenAI-compatible endpoint (HEADERLOCK_BASE_URL);"
        " with --snapshot-update, re-record against it",
    ): "--headerlock-live says which protocol the runtime's live adapter speaks",
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (of a module, class or
    function, or of an attribute: a bare string statement)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def provider_constants(source: str) -> list[tuple[int, str, str]]:
    """``(line, constant, word)`` for each string constant of ``source`` naming a
    provider, in source order."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found: list[tuple[int, str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            lowered = node.value.lower()
            word = next((w for w in PROVIDER_WORDS if w in lowered), None)
            if word is not None:
                found.append((node.lineno, node.value, word))
    return sorted(found)


def _modules() -> list[str]:
    return sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py"))


def _allowed(module: str) -> bool:
    return (
        module.startswith(HOME)
        or module in ALLOWED_FILES
        or any(module.startswith(folder) for folder in ALLOWED_FOLDERS)
    )


def _found(module: str) -> list[tuple[int, str, str]]:
    source = (PACKAGE / module).read_text(encoding="utf-8")
    return [hit for hit in provider_constants(source) if (module, hit[1]) not in ALLOWED_CONSTANTS]


@pytest.mark.parametrize("module", [m for m in _modules() if not _allowed(m)])
def test_no_module_outside_apis_names_a_provider(module: str) -> None:
    found = _found(module)
    shown = [f"{module}:{line}: {text!r} names {word!r}" for line, text, word in found]
    assert shown == [], "provider knowledge belongs in its module in " + HOME


def test_every_allowance_is_still_needed() -> None:
    for folder in ALLOWED_FOLDERS:
        held = [m for m in _modules() if m.startswith(folder)]
        assert any(list(provider_constants((PACKAGE / m).read_text())) for m in held), folder
    for module in ALLOWED_FILES:
        assert list(provider_constants((PACKAGE / module).read_text())), module
    for module, text in ALLOWED_CONSTANTS:
        hits = [hit[1] for hit in provider_constants((PACKAGE / module).read_text())]
        assert text in hits, (module, text)


def test_the_check_sees_a_constant_and_skips_a_docstring() -> None:
    source = (
        '"""Talks to Anthropic."""\n'
        "def f():\n"
        '    """Reads toolConfig."""\n'
        '    return {"x-api-key": 1}\n'
        'KEYS = ("id", "toolUseId")\n'
        '"""An attribute docstring may name Bedrock."""\n'
    )
    found = [(line, word) for line, _, word in provider_constants(source)]
    assert found == [(4, "x-api-key"), (5, "tooluse")]
