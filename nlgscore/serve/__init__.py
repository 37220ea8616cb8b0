"""Serving a scorer over HTTP: ``nlgscore serve SPEC`` and the clients that call it.

* :mod:`nlgscore.serve.app`: ``create_app(scorer, ...)``, the ASGI app (Starlette): state
  (:mod:`nlgscore.serve.service`) and routing to :mod:`nlgscore.serve.endpoints` (``/health``,
  ``/v1/score``, ``/v1/matrix``, ``/metrics``, and the RL frameworks' reward protocols);
* :mod:`nlgscore.serve.client`: :class:`~nlgscore.serve.client.RemoteScorer`, what
  ``nlgscore.load("http://HOST:PORT")`` returns: the same ``compute``/``matrix``/``Result`` as a
  local scorer, with retries and timeouts;
* :mod:`nlgscore.serve.server`: running the app on uvicorn, SIGTERM finishing in-flight requests.

It sits beside ``integrations``: it builds scorers through the registry.
"""
