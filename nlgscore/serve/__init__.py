"""Serving a scorer over HTTP: ``nlgscore serve SPEC`` and the clients that call it.

* :mod:`nlgscore.serve.app`: ``create_app(scorer, ...)``, the ASGI app (Starlette) with its
  micro-batcher, ``/health``, ``/v1/score``, ``/get_reward`` (OpenRLHF), ``/v1/matrix``, ``/metrics``;
* :mod:`nlgscore.serve.client`: :class:`~nlgscore.serve.client.RemoteScorer`, what
  ``nlgscore.load("http://HOST:PORT")`` returns: the same ``compute``/``matrix``/``Result`` as a
  local scorer, with retries and timeouts;
* :mod:`nlgscore.serve.server`: running the app on uvicorn, SIGTERM finishing in-flight requests.

It sits beside ``integrations``: it builds scorers through the registry.
"""
