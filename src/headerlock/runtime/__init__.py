"""The agent runtime: the system under test.

Plugin host and context, tool registry, tool order, system prompt, session
log, request header and deltas, messages, model service and adapters, agent
loop, reconstructability check, config schemas and ``AgentApp``. It imports no
other layer of headerlock (only ``headerlock.errors``) and does no I/O beyond
its model adapters.
"""
