"""A real MCP client for tests/mcp.rs: the Python MCP SDK (PyPI `mcp`, pinned by
scripts/mcp-clients) starts `askpane mcp` over stdio and plays one scenario.

    python client.py SCENARIO ARGUMENTS_JSON -- COMMAND [ARG...]

The server gets exactly the environment in $ASKPANE_TEST_SERVER_ENV (a JSON object), as MCP
clients start servers with a reduced one. Every step is one JSON line on stdout:
{"event": ..., ...}. Scenarios:
  call    initialize, list the tools, call ask_user_question with ARGUMENTS_JSON, print the result
  cancel  initialize, call with a progress token; after the first progress notification print
          "progress" and wait for a line "cancel" on stdin, then abandon the call (the SDK sends
          notifications/cancelled), then call `ping` to show the server still answers
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


def emit(event, **fields):
    print(json.dumps({"event": event, **fields}), flush=True)


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main():
    scenario, arguments = sys.argv[1], json.loads(sys.argv[2])
    command = sys.argv[sys.argv.index("--") + 1 :]
    env = json.loads(os.environ.get("ASKPANE_TEST_SERVER_ENV", "{}"))
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with stdio_client(params) as (read, write):
        client_info = types.Implementation(name="askpane-tests", version="1.0")
        async with ClientSession(read, write, client_info=client_info) as session:
            init = await session.initialize()
            emit("initialized", result=dump(init))
            if scenario == "call":
                tools = await session.list_tools()
                emit("tools", result=dump(tools))
                result = await session.call_tool("ask_user_question", arguments)
                emit("result", result=dump(result))
            elif scenario == "cancel":
                await cancel(session, arguments)
            else:
                raise SystemExit(f"unknown scenario {scenario}")


async def cancel(session, arguments):
    progressed = anyio.Event()

    async def on_progress(progress, total, message):
        emit("progress", progress=progress, message=message)
        progressed.set()

    async with anyio.create_task_group() as group:

        async def call():
            result = await session.call_tool("ask_user_question", arguments,
                                             progress_callback=on_progress)
            emit("result", result=dump(result))

        group.start_soon(call)
        with anyio.fail_after(30):
            await progressed.wait()
        line = await anyio.to_thread.run_sync(sys.stdin.readline)
        if line.strip() != "cancel":
            raise SystemExit(f"expected 'cancel' on stdin, got {line!r}")
        group.cancel_scope.cancel()
    emit("cancelled")
    await session.send_ping()
    emit("pinged")


anyio.run(main)
