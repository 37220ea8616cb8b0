"""Internal (module paths may change; users import :mod:`nlgscore.serve`): the HTTP room of
``nlgscore serve``, the same in every deployment shape (one process, ``--workers``, Ray Serve).

* ``app.py``: the ASGI app (:func:`create_app`), the routes, the bearer check
* ``gate.py``: Settings, the Gate (admission, the drain, the body reader) and the Backend seam
* ``in_process.py``: the backend that scores in this process (scorer, micro-batcher, ROLL's tasks)
* ``endpoints/``: one function per endpoint, each through the gate
* ``protocol.py``: the request and response bodies, checked
* ``field_checks.py``: the one JSON reading rule, and labels
* ``metrics.py``: the Prometheus metrics of ``/metrics``
* ``server.py``: uvicorn on a bound socket, the drain on SIGTERM
* ``header_timeout.py``: a connection that never finishes its headers is closed
* ``direct_app.py``: Starlette without the middleware the app does not use
* ``heap.py``: a serving process's loaded model kept out of garbage collections

It imports nothing of ``workers/`` or ``ray.py``, which are built on it.
"""
