"""Command-surface fuzzing: an OpenAPI view of a live host's commands, fuzzed by schemathesis.

`openapi` builds an OpenAPI 3.1 document from a spec directory's commands schema; `app` is the
ASGI bridge that forwards `POST /rpc/{method}` over one WebSocket JSON-RPC connection; `fixture`
lays out the temporary file tree (with a canary outside it) and the safety fence; `checks` are
ours beside schemathesis's; `fuzz` runs it all and turns failures into command findings. See
docs/commands.md.
"""
