"""The HTTP clients a wire lock sees, one module each, behind one interception core.

``core`` is what every client module hands a request to (``route``); ``install`` is
what a lock opens (``intercept``), and its ``CLIENTS`` lists the client modules, each
patching its library's lowest request method while a lock is open, restoring it after:

- ``httpx_client``: the ``HTTPTransport``/``AsyncHTTPTransport`` of ``httpx2`` and legacy
  ``httpx`` (the OpenAI, Anthropic and Gemini SDKs, pydantic-ai, openai-agents,
  LangChain, litellm's sync path);
- ``aiohttp_client``: ``ClientSession._request`` (litellm's async path, the OpenAI SDK's
  ``DefaultAioHttpClient``);
- ``urllib3_client``: ``HTTPConnectionPool.urlopen`` (``requests``, ``urllib3``, botocore);
- ``sdk_patches``: the SDK methods a registered API declares (``ModelApi.client_patches``,
  e.g. the Bedrock module's botocore signer, which keeps the secrets a request is
  signed with).

Adding a client is one module here with ``LIBRARIES``, ``install()`` and ``uninstall()``,
and one line in ``install.CLIENTS``.
"""
