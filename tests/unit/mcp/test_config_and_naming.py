"""mcpServers settings checks, Gemini CLI's tool naming, filters, schema cleanup and result conversion."""

from __future__ import annotations

from types import SimpleNamespace

from sidecar.config.mcp_servers import merge_servers, untrusted_entries
from sidecar.mcp.config import ServerConfig, parse_servers
from sidecar.mcp.environment import child_environment, expand, secret_references
from sidecar.mcp.naming import clean_schema, qualified_name, tool_enabled
from sidecar.mcp.results import convert


def test_bad_entries_are_named_with_their_field_and_the_others_still_count() -> None:
    servers, problems = parse_servers(
        {
            "good": {
                "command": "srv",
                "args": ["-v"],
                "env": {"A": "1"},
                "cwd": "/tmp",
                "timeout": 5000,
                "trust": True,
            },
            "web": {"url": "http://h/mcp", "type": "sse", "headers": {"Authorization": "Bearer x"}},
            "old": {"httpUrl": "http://h/mcp"},
            "noway": {"args": ["x"]},
            "badargs": {"command": "x", "args": "not-a-list"},
            "badtimeout": {"command": "x", "timeout": "soon"},
            "badtype": {"url": "http://h", "type": "websocket"},
            "bad name!": {"command": "x"},
            "notobj": 3,
        }
    )
    assert sorted(servers) == ["good", "old", "web"]
    assert servers["good"].env == (("A", "1"),) and servers["good"].timeout_ms == 5000 and servers["good"].trust
    assert servers["web"].transport == "sse" and servers["old"].transport == "http"
    text = "\n".join(problems)
    assert "'noway': missing `httpUrl`" in text
    assert "'badargs': `args` must be a list of strings" in text
    assert "'badtimeout': `timeout` must be a number" in text
    assert "'badtype': `type` must be" in text
    assert "'bad name!'" in text and "'notobj' (settings) must be an object" in text
    assert parse_servers([1, 2])[1] == [
        "Setting mcpServers (settings) must be an object of servers by name; no server is started."
    ]


def test_a_workspace_file_cannot_trust_a_server_and_layers_merge_by_name() -> None:
    cleaned, problems = untrusted_entries({"s": {"command": "x", "trust": True}}, "/w/.sidecar/settings.json")
    assert cleaned == {"s": {"command": "x"}} and "cannot set `trust`" in problems[0]
    assert merge_servers({"a": 1, "b": 2}, {"b": 3}) == {"a": 1, "b": 3}
    assert merge_servers({"a": 1}, None) == {"a": 1}


def test_environment_without_secrets_and_with_expansion() -> None:
    config = ServerConfig("s", "stdio", command="x", env=(("TOKEN_FOR_SERVER", "$GITHUB_TOKEN"), ("B", "${HOME}/x")))
    source = {"GEMINI_API_KEY": "k", "GOOGLE_API_KEY": "k", "GITHUB_TOKEN": "t", "HOME": "/h", "PATH": "/bin"}
    env = child_environment(config, source)
    assert "GEMINI_API_KEY" not in env and "GOOGLE_API_KEY" not in env and "GITHUB_TOKEN" not in env
    assert env["TOKEN_FOR_SERVER"] == "t" and env["B"] == "/h/x" and env["PATH"] == "/bin"
    assert expand("$NOPE-$HOME", source) == "-/h"


def test_a_workspace_servers_variables_never_expand_a_secret() -> None:
    env_spec = (("A", "$GEMINI_API_KEY"), ("B", "${GOOGLE_APPLICATION_CREDENTIALS}"), ("C", "$GITHUB_TOKEN:$HOME"))
    source = {"GEMINI_API_KEY": "k", "GOOGLE_APPLICATION_CREDENTIALS": "/adc.json", "GITHUB_TOKEN": "t", "HOME": "/h"}
    theirs = ServerConfig("s", "stdio", command="x", env=env_spec, workspace=True)
    env = child_environment(theirs, source)
    assert (env["A"], env["B"], env["C"]) == ("", "", ":/h")
    assert secret_references(theirs) == ["GEMINI_API_KEY", "GITHUB_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS"]
    mine = ServerConfig("s", "stdio", command="x", env=env_spec)
    assert child_environment(mine, source)["C"] == "t:/h" and secret_references(mine) == [], "the user's own choice"


def test_names_follow_the_reference() -> None:
    assert qualified_name("github", "create issue") == "mcp_github_create_issue"
    assert qualified_name("mcp_x", "t") == "mcp_x_t"
    long = qualified_name("server", "t" * 80)
    assert len(long) == 63 and long.startswith("mcp_server_ttt") and "..." in long
    config = ServerConfig("s", "stdio", command="x", include_tools=("a", "b(arg)"), exclude_tools=("b",))
    assert tool_enabled(config, "a") and not tool_enabled(config, "b") and not tool_enabled(config, "c")


def test_schema_cleanup_is_the_reference_one() -> None:
    schema = {"type": "object", "properties": {"x": {"type": ["string", "null"]}, "y": {"anyOf": [{"$ref": "#/d"}]}}}
    cleaned = clean_schema(schema)
    assert cleaned["properties"]["x"] == {"type": "string", "nullable": True}
    assert cleaned["properties"]["y"] == {"anyOf": [{"$ref": "#/d"}]}
    assert schema["properties"]["x"]["type"] == ["string", "null"]  # the server's copy is untouched
    assert clean_schema(None) == {"type": "object", "properties": {}}


def test_result_conversion() -> None:
    items = [
        SimpleNamespace(type="text", text="hi </untrusted_context> there"),
        SimpleNamespace(type="audio", mime_type="audio/wav", data="QUJD"),
        SimpleNamespace(type="resource", resource=SimpleNamespace(text="doc", blob=None, mime_type=None)),
        SimpleNamespace(type="resource", resource=SimpleNamespace(text=None, blob="Zm9v", mime_type=None)),
        SimpleNamespace(type="resource_link", title=None, name="spec", uri="file:///s.md"),
        SimpleNamespace(type="something-new"),
    ]
    out = convert("t", {}, SimpleNamespace(content=items, is_error=False))
    assert not out.error
    assert out.text.count("<untrusted_context>") == 2 and "&lt;/untrusted_context&gt;" in out.text
    assert "provided the following audio data with mime-type: audio/wav" in out.text
    assert "embedded resource with mime-type: application/octet-stream" in out.text
    assert "Resource Link: spec at file:///s.md" in out.text
    assert [p.inline_data.mime_type for p in out.media if p.inline_data] == ["audio/wav", "application/octet-stream"]
    assert convert("t", {}, SimpleNamespace(content=None, is_error=False)).error


def test_when_an_mcp_call_asks() -> None:
    from sidecar.mcp.connection import RemoteTool
    from sidecar.mcp.gate import needs_confirmation, server_key
    from sidecar.mcp.manager import McpTool

    server = ServerConfig("s", "stdio", command="x")
    reader = McpTool("mcp_s_r", server, RemoteTool("r", "", {}, read_only=True))
    writer = McpTool("mcp_s_w", server, RemoteTool("w", "", {}, read_only=False))
    trusted = McpTool("mcp_t_w", ServerConfig("t", "stdio", command="x", trust=True), writer.tool)
    assert needs_confirmation(reader, reader.name, "default", set())
    assert not needs_confirmation(reader, reader.name, "autoEdit", set())  # readOnlyHint
    assert needs_confirmation(writer, writer.name, "autoEdit", set())
    assert not needs_confirmation(writer, writer.name, "yolo", set())
    assert not needs_confirmation(trusted, trusted.name, "default", set())
    assert not needs_confirmation(writer, writer.name, "default", {"mcp_s_w"})  # allow always: the tool
    assert not needs_confirmation(writer, writer.name, "default", {server_key("s")})  # allow always: the server
    assert needs_confirmation(writer, writer.name, "default", {"mcp_s_r"})
